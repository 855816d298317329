package httpx

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// credentialSink is "another origin": it counts every request and records
// any credential it was handed.
func credentialSink(t *testing.T) (*httptest.Server, *atomic.Int32, *atomic.Value) {
	var hits atomic.Int32
	var got atomic.Value
	got.Store("")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		b, _ := io.ReadAll(r.Body)
		got.Store(r.Header.Get("Authorization") + "|" + r.Header.Get("X-A2A-User-Delegation") + "|" + string(b))
		w.Write([]byte("{}"))
	}))
	t.Cleanup(srv.Close)
	return srv, &hits, &got
}

func redirector(t *testing.T, to string, status int) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, to+r.URL.Path, status)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// Issue 9 (credentials across redirects), A2A calls: a 307 from the
// interface URL to another origin is refused before the PA JWT or the
// delegation token reach it.
func TestIssue9_A2ACredentialsDoNotFollowCrossOriginRedirect(t *testing.T) {
	sink, hits, _ := credentialSink(t)
	for _, status := range []int{301, 302, 303, 307, 308} {
		from := redirector(t, sink.URL, status)
		req, _ := http.NewRequest(http.MethodPost, from.URL+"/a2a/b1/message:send", strings.NewReader(`{"message":{}}`))
		req.Header.Set("Authorization", "Bearer pa.jwt.x")
		req.Header.Set("X-A2A-User-Delegation", "Bearer deleg.tok.x")
		req.Header.Set("Content-Type", "application/json")
		_, err := NewClient(Options{}).Do(req)
		var re *RedirectError
		if !errors.As(err, &re) || !strings.Contains(re.Reason, "X-A2A-User-Delegation") {
			t.Fatalf("HTTP %d: err = %v, want a RedirectError naming the credential", status, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the other origin received %d requests", n)
	}
}

// Issue 9, OAuth calls: a form body holding a refresh token or device code
// does not follow a redirect to another origin, even without a header.
func TestIssue9_OAuthFormDoesNotFollowCrossOriginRedirect(t *testing.T) {
	sink, hits, _ := credentialSink(t)
	from := redirector(t, sink.URL, http.StatusTemporaryRedirect)
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"rt_secret"}}
	req, _ := http.NewRequest(http.MethodPost, from.URL+"/oauth/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	_, err := NewClient(Options{}).Do(req)
	var re *RedirectError
	if !errors.As(err, &re) || !strings.Contains(re.Reason, "form body") {
		t.Fatalf("err = %v, want a RedirectError about the form body", err)
	}
	if hits.Load() != 0 {
		t.Fatal("the refresh token reached the other origin")
	}
}

// Same-origin redirects and credential-free GETs (cards, metadata) keep
// working.
func TestIssue9_RedirectsWithoutCredentialsOrSameOriginAreFollowed(t *testing.T) {
	sink, hits, got := credentialSink(t)
	from := redirector(t, sink.URL, http.StatusFound)
	resp, err := NewClient(Options{}).Get(from.URL + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatalf("credential-free GET across origins: %v", err)
	}
	resp.Body.Close()
	mux := http.NewServeMux()
	var srv *httptest.Server
	mux.HandleFunc("/old", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/new", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/new", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(r.Header.Get("Authorization"))) })
	srv = httptest.NewServer(mux)
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/old", strings.NewReader("{}"))
	req.Header.Set("Authorization", "Bearer same")
	resp, err = NewClient(Options{}).Do(req)
	if err != nil {
		t.Fatalf("same-origin redirect: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "Bearer same" {
		t.Fatalf("same-origin redirect lost the header: %q", b)
	}
	if hits.Load() != 1 || got.Load().(string) != "||" {
		t.Fatalf("sink hits %d, got %q", hits.Load(), got.Load())
	}
}

// Issue 9 (credentials in URLs): CheckURL refuses userinfo, and the
// password never appears in the error.
func TestIssue9_CheckURLRefusesUserinfo(t *testing.T) {
	for _, raw := range []string{"https://user:hunter2@p.example/a2a", "http://user:hunter2@127.0.0.1:8080/x", "https://user@p.example/"} {
		u, _ := url.Parse(raw)
		err := CheckURL(u)
		if !errors.Is(err, ErrUserinfo) || !errors.Is(err, ErrInsecureURL) {
			t.Fatalf("CheckURL(%s) = %v, want ErrUserinfo", raw, err)
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Fatalf("the password leaked into %q", err)
		}
	}
	// And the transport refuses to send such a request at all.
	sink, hits, _ := credentialSink(t)
	u, _ := url.Parse(sink.URL)
	u.User = url.UserPassword("u", "hunter2")
	if _, err := NewClient(Options{}).Get(u.String()); !errors.Is(err, ErrUserinfo) {
		t.Fatalf("GET with userinfo: %v", err)
	}
	if hits.Load() != 0 {
		t.Fatal("a request with userinfo was sent")
	}
}

// A redirect to a URL with userinfo is refused.
func TestIssue9_RedirectToUserinfoRefused(t *testing.T) {
	sink, hits, _ := credentialSink(t)
	u, _ := url.Parse(sink.URL)
	u.User = url.UserPassword("u", "hunter2")
	from := redirector(t, u.String(), http.StatusFound)
	_, err := NewClient(Options{}).Get(from.URL + "/card.json")
	err = Describe(err) // what every caller reports: Go's url.Error quotes the raw Location
	var re *RedirectError
	if !errors.As(err, &re) || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("err = %v", err)
	}
	if hits.Load() != 0 {
		t.Fatal("followed a redirect to a URL with userinfo")
	}
}

func TestOrigin_DefaultPortsAndCase(t *testing.T) {
	a, _ := url.Parse("HTTPS://P.Example/x")
	b, _ := url.Parse("https://p.example:443/y")
	c, _ := url.Parse("https://p.example:8443/y")
	if !SameOrigin(a, b) || SameOrigin(a, c) {
		t.Fatalf("Origin: %s %s %s", Origin(a), Origin(b), Origin(c))
	}
}
