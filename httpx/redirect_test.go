package httpx

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
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

// Credential-free GETs (cards, metadata) follow redirects, across origins
// too.
func TestIssue9_RedirectsWithoutCredentialsAreFollowed(t *testing.T) {
	sink, hits, got := credentialSink(t)
	from := redirector(t, sink.URL, http.StatusFound)
	resp, err := NewClient(Options{}).Get(from.URL + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatalf("credential-free GET across origins: %v", err)
	}
	resp.Body.Close()
	if hits.Load() != 1 || got.Load().(string) != "||" {
		t.Fatalf("sink hits %d, got %q", hits.Load(), got.Load())
	}
}

// Trust finding 1: a credentialed request follows no redirect at all, not
// even on the same origin. A same-origin redirect can leave the registered
// Provider's path (another registration, another audience), and a 302/303
// turns the POST into a GET that would still carry the headers.
func TestCredentialedRequestFollowsNoRedirect_SameOriginToo(t *testing.T) {
	var stolen atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/prov/a2a/b/message:send", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/other/steal", mustAtoi(r.URL.Query().Get("s")))
	})
	mux.HandleFunc("/prov/token", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/prov/a2a/evil/steal", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/other/steal", func(w http.ResponseWriter, r *http.Request) { stolen.Add(1) })
	mux.HandleFunc("/prov/a2a/evil/steal", func(w http.ResponseWriter, r *http.Request) { stolen.Add(1) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	for _, status := range []int{301, 302, 303, 307, 308} {
		for _, h := range CredentialHeaders {
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/prov/a2a/b/message:send?s="+itoa(status), strings.NewReader("{}"))
			req.Header.Set(h, "Bearer secret")
			_, err := NewClient(Options{}).Do(req)
			var re *RedirectError
			if !errors.As(err, &re) || !re.Credentialed || !strings.Contains(re.Reason, h) || !strings.Contains(re.Reason, "HTTP "+itoa(status)) {
				t.Fatalf("HTTP %d with %s: err = %v, want a credentialed RedirectError", status, h, err)
			}
		}
	}
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"rt_secret"}}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/prov/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if _, err := NewClient(Options{}).Do(req); err == nil || !strings.Contains(err.Error(), "form body") {
		t.Fatalf("same-origin redirect of a form: %v", err)
	}
	if n := stolen.Load(); n != 0 {
		t.Fatalf("a redirect target received %d credentialed requests", n)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
func mustAtoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
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
