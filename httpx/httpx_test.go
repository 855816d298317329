package httpx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestCheckURL_HTTPOnlyForLoopback(t *testing.T) {
	for raw, ok := range map[string]bool{
		"https://brand.example.com/x":  true,
		"http://127.0.0.1:8080/":       true,
		"http://127.9.9.9/":            true,
		"http://localhost:1/":          true,
		"http://[::1]:9/":              true,
		"http://brand.example.com/":    false,
		"http://10.0.0.1/":             false,
		"http://127.0.0.1.nip.io/":     false,
		"ftp://brand.example.com/card": false,
	} {
		u, _ := url.Parse(raw)
		err := CheckURL(u)
		if (err == nil) != ok {
			t.Errorf("CheckURL(%s) = %v, want ok=%v", raw, err, ok)
		}
		if err != nil && !errors.Is(err, ErrInsecureURL) {
			t.Errorf("CheckURL(%s) error does not wrap ErrInsecureURL: %v", raw, err)
		}
	}
}

func TestRedirects_LoopStopsAfterFive(t *testing.T) {
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits++
		http.Redirect(w, r, fmt.Sprintf("/r%d", hits), http.StatusFound)
	}))
	defer srv.Close()
	_, err := NewClient(Options{}).Get(srv.URL)
	var re *RedirectError
	if !errors.As(err, &re) {
		t.Fatalf("want RedirectError, got %v", err)
	}
	if hits != 6 {
		t.Errorf("server saw %d requests, want 6 (the first plus 5 redirects)", hits)
	}
}

func TestRedirects_ChainOfFiveFollowed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n int
		fmt.Sscanf(r.URL.Path, "/r%d", &n)
		if n < 5 {
			http.Redirect(w, r, fmt.Sprintf("/r%d", n+1), http.StatusFound)
			return
		}
		io.WriteString(w, "end")
	}))
	defer srv.Close()
	resp, err := NewClient(Options{}).Get(srv.URL + "/r0")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

func TestRedirects_HTTPSToHTTPRefused(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "x") }))
	defer plain.Close()
	tls := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, plain.URL, http.StatusFound)
	}))
	defer tls.Close()
	c := NewClient(Options{Transport: tls.Client().Transport})
	_, err := c.Get(tls.URL)
	var re *RedirectError
	if !errors.As(err, &re) || !strings.Contains(re.Reason, "https to http") {
		t.Fatalf("want https→http refusal, got %v", err)
	}
}

func TestReadBody_CapsSize(t *testing.T) {
	_, err := ReadBody(strings.NewReader(strings.Repeat("x", 101)), 100)
	var tl *ErrBodyTooLarge
	if !errors.As(err, &tl) || tl.Limit != 100 {
		t.Fatalf("want ErrBodyTooLarge{100}, got %v", err)
	}
	b, err := ReadBody(strings.NewReader(strings.Repeat("x", 100)), 100)
	if err != nil || len(b) != 100 {
		t.Fatalf("a body at the limit must be read whole: %d %v", len(b), err)
	}
}

func TestTimeout_StallMidBody(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100")
		io.WriteString(w, "partial")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	resp, err := NewClient(Options{Timeout: 200 * time.Millisecond}).Get(srv.URL)
	if err == nil {
		_, err = ReadBody(resp.Body, 0)
		resp.Body.Close()
	}
	var ne *NetError
	if !errors.As(err, &ne) || !strings.Contains(ne.Error(), "timed out") {
		t.Fatalf("want a timeout NetError, got %v", err)
	}
}

func TestDescribe_ConnectionRefused(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := srv.URL
	srv.Close()
	_, err := NewClient(Options{}).Get(addr)
	if err = Describe(err); !strings.Contains(err.Error(), "could not connect") {
		t.Fatalf("got %v", err)
	}
}

func TestTrace_RedactsSecrets(t *testing.T) {
	const jwt = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"access_token":"%s","refresh_token":"rt_secret123","scope":"orders:read"}`, jwt)
	}))
	defer srv.Close()
	var trace bytes.Buffer
	c := NewClient(Options{Debug: &trace})
	req, _ := http.NewRequestWithContext(context.Background(), "POST", srv.URL,
		strings.NewReader("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Adevice_code&device_code=dc_topsecret&client_id=https%3A%2F%2Fpa"))
	req.Header.Set("Authorization", "Bearer "+jwt)
	req.Header.Set("X-A2A-User-Delegation", "Bearer opaque-delegation")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := ReadBody(resp.Body, 0)
	resp.Body.Close()
	if !strings.Contains(string(body), "rt_secret123") {
		t.Fatal("the trace must not alter the body the caller reads")
	}
	out := trace.String()
	for _, secret := range []string{"eyJzdWIiOiJ4In0", "rt_secret123", "dc_topsecret", "opaque-delegation", "c2lnbmF0dXJl"} {
		if strings.Contains(out, secret) {
			t.Errorf("trace leaks %q:\n%s", secret, out)
		}
	}
	for _, shown := range []string{"> POST", "< 200 OK", "orders:read", "Authorization: Bearer [redacted]", "client_id="} {
		if !strings.Contains(out, shown) {
			t.Errorf("trace lacks %q:\n%s", shown, out)
		}
	}
}

// A secret in a traced request's URL (a query parameter, a userinfo
// password) is redacted like one in a body; other parameters stay readable.
func TestTrace_RedactsSecretsInTheURL(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	var trace bytes.Buffer
	c := NewClient(Options{Debug: &trace})
	u := srv.URL + "/cb?code=s3cr3t-code&state=visible-state&access_token=tok-123456&device%5Fcode=dc-999"
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	out := trace.String()
	for _, secret := range []string{"s3cr3t-code", "tok-123456", "dc-999"} {
		if strings.Contains(out, secret) {
			t.Errorf("trace leaks %q:\n%s", secret, out)
		}
	}
	for _, shown := range []string{"state=visible-state", "code=[redacted]", "access_token=[redacted]", "/cb?"} {
		if !strings.Contains(out, shown) {
			t.Errorf("trace lacks %q:\n%s", shown, out)
		}
	}
	withPass, err := url.Parse("http://user:hunter2-pass@127.0.0.1/x?token=abc-secret#access_token=frag-secret")
	if err != nil {
		t.Fatal(err)
	}
	got := RedactURL(withPass)
	for _, secret := range []string{"hunter2-pass", "abc-secret", "frag-secret"} {
		if strings.Contains(got, secret) {
			t.Errorf("RedactURL leaks %q: %s", secret, got)
		}
	}
}

func TestRedact_TruncatedSecretValue(t *testing.T) {
	got := Redact(`{"refresh_token": "rt_abcdefgh`)
	if strings.Contains(got, "rt_abc") {
		t.Fatalf("truncated secret leaked: %s", got)
	}
	if got := Redact(`{"d":"privatescalar","kty":"EC"}`); strings.Contains(got, "privatescalar") {
		t.Fatalf("private JWK member leaked: %s", got)
	}
}

func TestDescribe_NoSuchHost(t *testing.T) {
	err := Describe(&url.Error{Op: "Get", URL: "https://nosuch.invalid/", Err: &net.OpError{Op: "dial", Net: "tcp",
		Err: &net.DNSError{Err: "no such host", Name: "nosuch.invalid", IsNotFound: true}}})
	if !errors.Is(err, ErrNoSuchHost) || !strings.Contains(err.Error(), "nosuch.invalid does not exist") {
		t.Fatalf("got %v", err)
	}
}

// Issue 31 item 17: a name that did not resolve for another reason than
// NXDOMAIN (no DNS server answers, it fails or times out) is said to be a
// name that did not resolve, never "is the server running?" (no
// connection was tried) nor a slow server.
func TestIssue31_17_DNSFailureSaysTheNameDidNotResolve(t *testing.T) {
	for _, dnsErr := range []*net.DNSError{
		{Err: "server misbehaving", Name: "shop.example", Server: "10.0.0.1:53", IsTemporary: true},
		{Err: "read udp 10.0.0.2:5353->10.0.0.1:53: read: connection refused", Name: "shop.example", Server: "10.0.0.1:53"},
		{Err: "i/o timeout", Name: "shop.example", Server: "10.0.0.1:53", IsTimeout: true},
	} {
		err := Describe(&url.Error{Op: "Get", URL: "https://shop.example/", Err: &net.OpError{Op: "dial", Net: "tcp", Err: dnsErr}})
		msg := err.Error()
		if !strings.Contains(msg, "the name shop.example did not resolve") || strings.Contains(msg, "server running") || strings.Contains(msg, "too slow") {
			t.Errorf("%v: got %q", dnsErr, msg)
		}
	}
}
