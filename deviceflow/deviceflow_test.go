package deviceflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock advances instantly: After(d) moves Now forward by d and fires.
// It records every wait so tests can assert the polling schedule.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	waits []time.Duration
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Date(2026, 9, 30, 12, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waits = append(c.waits, d)
	c.now = c.now.Add(d)
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}
func (c *fakeClock) Waits() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.waits...)
}

// stuckClock never fires: only ctx cancellation can end a wait.
type stuckClock struct{}

func (stuckClock) Now() time.Time                       { return time.Unix(0, 0) }
func (stuckClock) After(time.Duration) <-chan time.Time { return make(chan time.Time) }

type recorded struct {
	auth string
	ct   string
	form map[string]string
}

// fakeAS is a scripted RFC 8628 authorization server on 127.0.0.1.
type fakeAS struct {
	t        *testing.T
	srv      *httptest.Server
	mu       sync.Mutex
	reqs     []recorded
	devResp  string
	devCode  int
	tokResps []struct {
		code int
		body string
	}
}

func newFakeAS(t *testing.T) *fakeAS {
	f := &fakeAS{t: t, devCode: 200}
	f.devResp = `{"device_code":"dc_SECRET123","user_code":"WDJB-MJHT","verification_uri":"https://brand.example/login","verification_uri_complete":"https://brand.example/login?user_code=WDJB-MJHT","expires_in":600,"interval":5}`
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAS) token(code int, body string) {
	f.tokResps = append(f.tokResps, struct {
		code int
		body string
	}{code, body})
}

func (f *fakeAS) serve(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		f.t.Errorf("bad form: %v", err)
	}
	rec := recorded{auth: r.Header.Get("Authorization"), ct: r.Header.Get("Content-Type"), form: map[string]string{}}
	for k := range r.PostForm {
		rec.form[k] = r.PostForm.Get(k)
	}
	f.mu.Lock()
	f.reqs = append(f.reqs, rec)
	var code int
	var body string
	switch r.URL.Path {
	case "/device":
		code, body = f.devCode, f.devResp
	case "/token":
		if len(f.tokResps) == 0 {
			code, body = 400, `{"error":"authorization_pending"}`
		} else {
			code, body = f.tokResps[0].code, f.tokResps[0].body
			if len(f.tokResps) > 1 {
				f.tokResps = f.tokResps[1:]
			}
		}
	default:
		code, body = 404, ""
	}
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	fmt.Fprint(w, body)
}

func (f *fakeAS) requests() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.reqs...)
}

var cardScopes = map[string]string{"orders:read": "Look up your orders", "orders:cancel": "Cancel an order"}

func newClient(clk Clock) (*Client, *int) {
	n := 0
	var mu sync.Mutex
	return &Client{
		ClientID: "https://pa.example.com",
		Clock:    clk,
		PAToken: func(context.Context, string) (string, error) {
			mu.Lock()
			defer mu.Unlock()
			n++
			return fmt.Sprintf("pa-jwt-%d", n), nil
		},
	}, &n
}

const okToken = `{"token_type":"Bearer","access_token":"eyJ.access.SECRET","refresh_token":"rt_SECRET","expires_in":3600,"scope":"orders:read"}`

func TestSection5_2_AuthorizeRefusesScopeNotOnCardBeforeAnyRequest(t *testing.T) {
	as := newFakeAS(t)
	c, minted := newClient(newFakeClock())
	_, err := c.Authorize(context.Background(), as.srv.URL+"/device", []string{"orders:read", "refunds:issue"}, cardScopes)
	if err == nil || !strings.Contains(err.Error(), `"refunds:issue"`) {
		t.Fatalf("want refusal naming refunds:issue, got %v", err)
	}
	if n := len(as.requests()); n != 0 || *minted != 0 {
		t.Fatalf("requests=%d minted=%d, want none", n, *minted)
	}
}

func TestSection5_3_AuthorizeSendsClientIDScopeAndPAJWT(t *testing.T) {
	as := newFakeAS(t)
	clk := newFakeClock()
	c, _ := newClient(clk)
	a, err := c.Authorize(context.Background(), as.srv.URL+"/device", []string{"orders:read", "orders:cancel", "orders:read"}, cardScopes)
	if err != nil {
		t.Fatal(err)
	}
	reqs := as.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if r.auth != "Bearer pa-jwt-1" || r.ct != "application/x-www-form-urlencoded" {
		t.Errorf("auth=%q ct=%q", r.auth, r.ct)
	}
	if r.form["client_id"] != "https://pa.example.com" || r.form["scope"] != "orders:read orders:cancel" {
		t.Errorf("form = %v", r.form)
	}
	if a.DeviceCode.Reveal() != "dc_SECRET123" || a.UserCode != "WDJB-MJHT" || a.Interval != 5*time.Second || a.ExpiresIn != 600 {
		t.Errorf("auth = %+v", a)
	}
	if want := clk.Now().Add(600 * time.Second); !a.ExpiresAt.Equal(want) {
		t.Errorf("ExpiresAt = %v, want %v", a.ExpiresAt, want)
	}
	if a.VerificationURIComplete != "https://brand.example/login?user_code=WDJB-MJHT" {
		t.Errorf("complete = %q", a.VerificationURIComplete)
	}
}

func TestRFC8628_IntervalDefaultsToFiveSeconds(t *testing.T) {
	as := newFakeAS(t)
	as.devResp = `{"device_code":"d","user_code":"U","verification_uri":"https://brand.example/l","expires_in":60}`
	c, _ := newClient(newFakeClock())
	a, err := c.Authorize(context.Background(), as.srv.URL+"/device", []string{"orders:read"}, cardScopes)
	if err != nil {
		t.Fatal(err)
	}
	if a.Interval != 5*time.Second {
		t.Errorf("interval = %v", a.Interval)
	}
	if a.VerificationURIComplete != "https://brand.example/l" {
		t.Errorf("complete should fall back to verification_uri, got %q", a.VerificationURIComplete)
	}
}

func TestSection5_3_VerificationURIMustBeHTTPS(t *testing.T) {
	for _, tc := range []struct {
		uri string
		ok  bool
	}{
		{"https://brand.example/login", true},
		{"http://127.0.0.1:9/login", true},
		{"http://localhost/login", true},
		{"http://brand.example/login", false},
		{"javascript:alert(1)", false},
		{"file:///etc/passwd", false},
	} {
		as := newFakeAS(t)
		as.devResp = fmt.Sprintf(`{"device_code":"d","user_code":"U","verification_uri":%q,"expires_in":60}`, tc.uri)
		c, _ := newClient(newFakeClock())
		_, err := c.Authorize(context.Background(), as.srv.URL+"/device", []string{"orders:read"}, cardScopes)
		if (err == nil) != tc.ok {
			t.Errorf("%s: err = %v, want ok=%v", tc.uri, err, tc.ok)
		}
	}
}

func TestSection5_3_InvalidScopeIsTyped(t *testing.T) {
	as := newFakeAS(t)
	as.devCode, as.devResp = 400, `{"error":"invalid_scope"}`
	c, _ := newClient(newFakeClock())
	_, err := c.Authorize(context.Background(), as.srv.URL+"/device", []string{"orders:read"}, cardScopes)
	if !errors.Is(err, ErrInvalidScope) {
		t.Fatalf("err = %v", err)
	}
}

func TestSection3_4_UnauthorizedIsTyped(t *testing.T) {
	as := newFakeAS(t)
	as.devCode, as.devResp = 401, ``
	c, _ := newClient(newFakeClock())
	_, err := c.Authorize(context.Background(), as.srv.URL+"/device", []string{"orders:read"}, cardScopes)
	if !errors.Is(err, ErrUnauthorized) || IsConsentError(err) {
		t.Fatalf("err = %v", err)
	}
}

func authorize(t *testing.T, c *Client, as *fakeAS) *Authorization {
	t.Helper()
	a, err := c.Authorize(context.Background(), as.srv.URL+"/device", []string{"orders:read", "orders:cancel"}, cardScopes)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestRFC8628_PollWaitsAboutOnePointTwoIntervals(t *testing.T) {
	as := newFakeAS(t)
	as.token(400, `{"error":"authorization_pending"}`)
	as.token(400, `{"error":"authorization_pending"}`)
	as.token(200, okToken)
	clk := newFakeClock()
	c, _ := newClient(clk)
	tok, err := c.Poll(context.Background(), as.srv.URL+"/token", authorize(t, c, as))
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{6 * time.Second, 6 * time.Second, 6 * time.Second}
	if got := clk.Waits(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("waits = %v, want %v", got, want)
	}
	if tok.AccessToken.Reveal() != "eyJ.access.SECRET" || tok.RefreshToken.Reveal() != "rt_SECRET" || tok.ExpiresIn != 3600 {
		t.Errorf("token = %+v", tok)
	}
}

func TestRFC8628_SlowDownAddsFiveSeconds(t *testing.T) {
	as := newFakeAS(t)
	as.token(400, `{"error":"slow_down"}`)
	as.token(400, `{"error":"authorization_pending"}`)
	as.token(400, `{"error":"slow_down"}`)
	as.token(200, okToken)
	clk := newFakeClock()
	c, _ := newClient(clk)
	if _, err := c.Poll(context.Background(), as.srv.URL+"/token", authorize(t, c, as)); err != nil {
		t.Fatal(err)
	}
	// 5 s → 6 s wait; slow_down → 10 s → 12 s; slow_down → 15 s → 18 s.
	want := []time.Duration{6 * time.Second, 12 * time.Second, 12 * time.Second, 18 * time.Second}
	if got := clk.Waits(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("waits = %v, want %v", got, want)
	}
}

func TestSection5_3_GrantedScopeIsRead(t *testing.T) {
	as := newFakeAS(t)
	as.token(200, okToken)
	c, _ := newClient(newFakeClock())
	tok, err := c.Poll(context.Background(), as.srv.URL+"/token", authorize(t, c, as))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(tok.Scope) != "[orders:read]" || tok.ScopeOmitted {
		t.Errorf("scope = %v omitted=%v", tok.Scope, tok.ScopeOmitted)
	}

	as2 := newFakeAS(t)
	as2.token(200, `{"token_type":"bearer","access_token":"a"}`)
	tok, err = c.Poll(context.Background(), as2.srv.URL+"/token", authorize(t, c, as2))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(tok.Scope) != "[orders:read orders:cancel]" || !tok.ScopeOmitted {
		t.Errorf("omitted scope should mean as requested: %v %v", tok.Scope, tok.ScopeOmitted)
	}
}

func TestSection5_3_EveryCallCarriesAFreshPAJWT(t *testing.T) {
	as := newFakeAS(t)
	as.token(400, `{"error":"authorization_pending"}`)
	as.token(400, `{"error":"slow_down"}`)
	as.token(200, okToken)
	c, minted := newClient(newFakeClock())
	if _, err := c.Poll(context.Background(), as.srv.URL+"/token", authorize(t, c, as)); err != nil {
		t.Fatal(err)
	}
	reqs := as.requests()
	seen := map[string]bool{}
	for i, r := range reqs {
		if seen[r.auth] {
			t.Errorf("request %d reuses %q", i, r.auth)
		}
		seen[r.auth] = true
		if i > 0 && (r.form["grant_type"] != GrantTypeDeviceCode || r.form["device_code"] != "dc_SECRET123" || r.form["client_id"] != "https://pa.example.com") {
			t.Errorf("poll form = %v", r.form)
		}
	}
	if len(reqs) != 4 || *minted != 4 {
		t.Errorf("requests=%d minted=%d, want 4 each", len(reqs), *minted)
	}
}

func TestRFC8628_AccessDeniedStopsPolling(t *testing.T) {
	as := newFakeAS(t)
	as.token(400, `{"error":"authorization_pending"}`)
	as.token(400, `{"error":"access_denied","error_description":"user said no"}`)
	c, _ := newClient(newFakeClock())
	_, err := c.Poll(context.Background(), as.srv.URL+"/token", authorize(t, c, as))
	if !errors.Is(err, ErrAccessDenied) || !IsConsentError(err) {
		t.Fatalf("err = %v", err)
	}
	if n := len(as.requests()); n != 3 {
		t.Errorf("%d requests, want 3 (authorize + 2 polls)", n)
	}
}

func TestRFC8628_ExpiredTokenStopsPolling(t *testing.T) {
	as := newFakeAS(t)
	as.token(400, `{"error":"expired_token"}`)
	c, _ := newClient(newFakeClock())
	_, err := c.Poll(context.Background(), as.srv.URL+"/token", authorize(t, c, as))
	if !errors.Is(err, ErrExpiredToken) || !IsConsentError(err) {
		t.Fatalf("err = %v", err)
	}
}

func TestRFC8628_ExpiresInEndsPolling(t *testing.T) {
	as := newFakeAS(t)
	as.devResp = `{"device_code":"d","user_code":"U","verification_uri":"https://brand.example/l","expires_in":30,"interval":5}`
	clk := newFakeClock()
	c, _ := newClient(clk)
	a := authorize(t, c, as)
	start := clk.Now()
	_, err := c.Poll(context.Background(), as.srv.URL+"/token", a)
	if !errors.Is(err, ErrExpiredToken) {
		t.Fatalf("err = %v", err)
	}
	// Polls at 6, 12, 18, 24 s; the wait to 30 s reaches expiry with no poll.
	if n := len(as.requests()) - 1; n != 4 {
		t.Errorf("%d polls, want 4", n)
	}
	if got := clk.Now().Sub(start); got != 30*time.Second {
		t.Errorf("stopped after %v, want 30s", got)
	}
}

func TestRFC8628_CancelStopsPollingAtOnce(t *testing.T) {
	as := newFakeAS(t)
	c, _ := newClient(stuckClock{})
	a := authorize(t, c, as)
	a.ExpiresAt = time.Time{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.Poll(ctx, as.srv.URL+"/token", a)
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Poll did not return after cancel")
	}
	if n := len(as.requests()); n != 1 {
		t.Errorf("%d requests, want only the authorization", n)
	}
}

func TestRFC8628_TransientFailuresAreRetriedBounded(t *testing.T) {
	as := newFakeAS(t)
	as.token(503, `oops`)
	as.token(200, okToken)
	c, _ := newClient(newFakeClock())
	if _, err := c.Poll(context.Background(), as.srv.URL+"/token", authorize(t, c, as)); err != nil {
		t.Fatalf("one 503 should be tolerated: %v", err)
	}
	as2 := newFakeAS(t)
	as2.token(500, `oops`)
	_, err := c.Poll(context.Background(), as2.srv.URL+"/token", authorize(t, c, as2))
	if err == nil {
		t.Fatal("endless 500s must fail")
	}
	if n := len(as2.requests()) - 1; n != maxTransient+1 {
		t.Errorf("%d polls, want %d", n, maxTransient+1)
	}
}

func TestSecretsNeverInErrorsOrFormatting(t *testing.T) {
	as := newFakeAS(t)
	as.token(400, `{"error":"invalid_request","error_description":"bad device_code dc_SECRET123\n"}`)
	c, _ := newClient(newFakeClock())
	a := authorize(t, c, as)
	_, err := c.Poll(context.Background(), as.srv.URL+"/token", a)
	if err == nil || strings.Contains(err.Error(), "dc_SECRET123") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err = %q", err)
	}
	js, _ := json.Marshal(a)
	tok := &Token{AccessToken: "eyJ.access.SECRET", RefreshToken: "rt_SECRET"}
	for _, s := range []string{fmt.Sprintf("%v %+v %#v %s", a, a, a, a.DeviceCode), string(js), fmt.Sprintf("%v %+v %#v", tok, *tok, *tok)} {
		for _, secret := range []string{"dc_SECRET123", "SECRET"} {
			if strings.Contains(s, secret) {
				t.Errorf("%q leaks %s", s, secret)
			}
		}
	}

	as2 := newFakeAS(t)
	as2.token(400, `{"error":"invalid_grant","error_description":"rt_SECRET is revoked"}`)
	_, err = c.Refresh(context.Background(), as2.srv.URL+"/token", "rt_SECRET")
	if !errors.Is(err, ErrInvalidGrant) || strings.Contains(err.Error(), "rt_SECRET") {
		t.Fatalf("refresh err = %v", err)
	}
}

func TestRFC6749_RefreshSendsRefreshTokenAndKeepsIt(t *testing.T) {
	as := newFakeAS(t)
	as.token(200, `{"token_type":"Bearer","access_token":"new","expires_in":3600,"scope":"orders:read"}`)
	c, _ := newClient(newFakeClock())
	tok, err := c.Refresh(context.Background(), as.srv.URL+"/token", "rt_old")
	if err != nil {
		t.Fatal(err)
	}
	r := as.requests()[0]
	if r.form["grant_type"] != "refresh_token" || r.form["refresh_token"] != "rt_old" || r.form["client_id"] != "https://pa.example.com" || r.auth != "Bearer pa-jwt-1" {
		t.Errorf("refresh request = %+v", r)
	}
	if tok.AccessToken.Reveal() != "new" || tok.RefreshToken.Reveal() != "rt_old" {
		t.Errorf("token = %q %q", tok.AccessToken.Reveal(), tok.RefreshToken.Reveal())
	}
}

func TestRFC8414_FetchMetadata(t *testing.T) {
	var body string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, body)
	}))
	defer srv.Close()
	u := srv.URL + "/a2a/b1/oauth/.well-known/oauth-authorization-server"
	body = fmt.Sprintf(`{"issuer":%q,"device_authorization_endpoint":%q,"token_endpoint":%q,"jwks_uri":%q,"grant_types_supported":[%q]}`,
		srv.URL+"/a2a/b1/oauth", srv.URL+"/d", srv.URL+"/t", srv.URL+"/jwks", GrantTypeDeviceCode)
	md, err := FetchMetadata(context.Background(), srv.Client(), u)
	if err != nil {
		t.Fatal(err)
	}
	if md.JWKSURI != srv.URL+"/jwks" || md.TokenEndpoint != srv.URL+"/t" || !md.SupportsGrantType(GrantTypeDeviceCode) {
		t.Errorf("md = %+v", md)
	}

	body = `{"issuer":"https://evil.example","token_endpoint":"http://evil.example/t"}`
	_, err = FetchMetadata(context.Background(), srv.Client(), u)
	if err == nil {
		t.Fatal("want error")
	}
	for _, want := range []string{"the issuer the metadata URL was built from", "token_endpoint", "jwks_uri missing"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if _, err := FetchMetadata(context.Background(), nil, "http://example.com/md"); err == nil {
		t.Error("plain http to a non-loopback host must be refused")
	}
}

// RFC 8414 §3.3 (PACT §5.1, issue 9): the issuer is the one the metadata
// URL was built from, path included; another Brand's path on the same host
// is refused.
func TestRFC8414_Section3_3_IssuerBindingWithPath(t *testing.T) {
	var issuer string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if got := r.Header.Get("Accept"); got != "application/json" {
			t.Errorf("Accept %q", got)
		}
		fmt.Fprintf(w, `{"issuer":%q,"token_endpoint":"%[2]s/t","jwks_uri":"%[2]s/j"}`, issuer, "http://"+r.Host)
	}))
	defer srv.Close()
	pactForm := srv.URL + "/a2a/b1/oauth/.well-known/oauth-authorization-server"
	rfcForm := srv.URL + "/.well-known/oauth-authorization-server/a2a/b1/oauth"
	for _, u := range []string{pactForm, rfcForm} {
		issuer = srv.URL + "/a2a/b1/oauth"
		if _, err := FetchMetadata(context.Background(), srv.Client(), u); err != nil {
			t.Errorf("%s: %v", u, err)
		}
		for _, other := range []string{srv.URL + "/a2a/b2/oauth", srv.URL, srv.URL + "/a2a/b1/oauth/", srv.URL + "/a2a/b1"} {
			issuer = other
			_, err := FetchMetadata(context.Background(), srv.Client(), u)
			if err == nil || !strings.Contains(err.Error(), "RFC 8414 §3.3") {
				t.Errorf("%s with issuer %s: err = %v, want the §3.3 refusal", u, other, err)
			}
		}
	}
	issuer = srv.URL
	if _, err := FetchMetadata(context.Background(), srv.Client(), srv.URL+"/.well-known/oauth-authorization-server"); err != nil {
		t.Errorf("host-only issuer: %v", err)
	}
	if _, err := FetchMetadata(context.Background(), srv.Client(), srv.URL+"/oauth/metadata.json"); err == nil {
		t.Error("a metadata URL in neither RFC 8414 form was accepted")
	}
}

func TestRFC8414_ExpectedIssuer(t *testing.T) {
	for in, want := range map[string]string{
		"https://p.example/a2a/b1/oauth/.well-known/oauth-authorization-server": "https://p.example/a2a/b1/oauth",
		"https://p.example/.well-known/oauth-authorization-server/tenant":       "https://p.example/tenant",
		"https://p.example/.well-known/oauth-authorization-server":              "https://p.example",
	} {
		if got, err := ExpectedIssuer(in); err != nil || got != want {
			t.Errorf("ExpectedIssuer(%s) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func BenchmarkPollDecision(b *testing.B) {
	body := []byte(okToken)
	for b.Loop() {
		if _, err := parseToken(body, nil, ""); err != nil {
			b.Fatal(err)
		}
	}
}

// RFC 8628 §3.5 (issue 9): the error member is read whatever the HTTP
// status; a 200 carrying authorization_pending or slow_down keeps polling,
// and a 200 carrying another error ends with its name.
func TestRFC8628_Section3_5_ErrorReadWhateverTheStatus(t *testing.T) {
	as := newFakeAS(t)
	as.token(200, `{"error":"authorization_pending"}`)
	as.token(200, `{"error":"slow_down"}`)
	as.token(200, okToken)
	clk := newFakeClock()
	c, _ := newClient(clk)
	tok, err := c.Poll(context.Background(), as.srv.URL+"/token", authorize(t, c, as))
	if err != nil || tok.AccessToken.Reveal() != "eyJ.access.SECRET" {
		t.Fatalf("Poll = %v, %v; want the token after pending and slow_down", tok, err)
	}
	want := []time.Duration{6 * time.Second, 6 * time.Second, 12 * time.Second}
	if got := clk.Waits(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("waits = %v, want %v (slow_down adds 5 s)", got, want)
	}

	as2 := newFakeAS(t)
	as2.token(200, `{"error":"access_denied","access_token":"x","token_type":"Bearer"}`)
	c2, _ := newClient(newFakeClock())
	_, err = c2.Poll(context.Background(), as2.srv.URL+"/token", authorize(t, c2, as2))
	if !errors.Is(err, ErrAccessDenied) {
		t.Fatalf("200 access_denied: err = %v, want ErrAccessDenied", err)
	}
	as3 := newFakeAS(t)
	as3.token(200, `{"error":"invalid_grant"}`)
	c3, _ := newClient(newFakeClock())
	if _, err := c3.Refresh(context.Background(), as3.srv.URL+"/token", "rt"); !errors.Is(err, ErrInvalidGrant) {
		t.Fatalf("refresh 200 invalid_grant: %v", err)
	}
}

// Issue 9 (time), PACT §3.2: a 401 from the authorization server whose
// Date is far from the local clock says whose clock is off, and by how
// much; it is still ErrUnauthorized.
func TestSection3_2_UnauthorizedWithSkewedDateNamesTheClock(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Date", time.Now().Add(-10*time.Minute).UTC().Format(http.TimeFormat))
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer srv.Close()
	c, _ := newClient(newFakeClock())
	_, err := c.Authorize(context.Background(), srv.URL+"/device", []string{"orders:read"}, cardScopes)
	// The Date header has whole seconds: the skew seen is 600 or 601 s.
	if !errors.Is(err, ErrUnauthorized) || !regexp.MustCompile(`your clock is 60[01] s ahead of the Provider's`).MatchString(err.Error()) {
		t.Fatalf("err = %v", err)
	}
}

// Hostile re-review: the OAuth error_description is remote text like an A2A
// error.message: --json keeps it exact (JSON escapes it) and human printers
// sanitise it, so deviceflow must not remove bytes from it.
func TestOAuthError_DescriptionKeptExact(t *testing.T) {
	err := responseError(400, []byte(`{"error":"invalid_request","error_description":"bad \u001b[2J\u0007 thing"}`))
	var oe *OAuthError
	if !errors.As(err, &oe) || oe.Description != "bad \x1b[2J\x07 thing" {
		t.Fatalf("description not kept exact: %#v", err)
	}
	err = responseError(400, []byte(`{"error":"invalid_request","error_description":"echo sec\u0000ret-device-code-1"}`), Secret("secret-device-code-1"))
	if errors.As(err, &oe); strings.Contains(oe.Description, "secret-device-code-1") {
		t.Fatalf("a secret leaked: %q", oe.Description)
	}
}

// RFC 6749 §5.2: error = 1*( %x20-21 / %x23-5B / %x5D-7E ). Only such a
// code becomes a --json reason; anything else is OAUTH_ERROR.
func TestRFC6749_5_2_ReasonOnlyFromErrorCodeCharacters(t *testing.T) {
	for code, want := range map[string]string{
		"access_denied":         "ACCESS_DENIED",
		"custom_thing":          "CUSTOM_THING",
		"weird\x1b[2J":          "OAUTH_ERROR",
		"quote\"d":              "OAUTH_ERROR",
		"back\\slash":           "OAUTH_ERROR",
		"ünï":                   "OAUTH_ERROR",
		"line\nbreak":           "OAUTH_ERROR",
		strings.Repeat("x", 65): "OAUTH_ERROR",
	} {
		b, _ := json.Marshal(map[string]string{"error": code})
		var oe *OAuthError
		if !errors.As(responseError(400, b), &oe) || oe.Reason() != want {
			t.Errorf("code %q: reason %q, want %q", code, oe.Reason(), want)
		}
	}
}

// RFC 8628 §3.5: a Poller held between requests (pact serve answers each
// device poll with one Step) sends nothing before the interval has passed,
// however often it is stepped, and at most one token request per Step.
func TestRFC8628_StepSendsAtMostOneRequestPerInterval(t *testing.T) {
	as := newFakeAS(t)
	as.token(400, `{"error":"slow_down"}`)
	as.token(400, `{"error":"authorization_pending"}`)
	as.token(200, okToken)
	clk := newFakeClock()
	c, _ := newClient(clk)
	p, err := c.NewPoller(as.srv.URL+"/token", authorize(t, c, as))
	if err != nil {
		t.Fatal(err)
	}
	tokens := func() int {
		n := 0
		for _, r := range as.requests() {
			if r.form["grant_type"] == GrantTypeDeviceCode {
				n++
			}
		}
		return n
	}
	for i := 0; i < 3; i++ { // stepped early: nothing is sent
		if _, err := p.Step(context.Background()); !errors.Is(err, ErrPending) || tokens() != 0 {
			t.Fatalf("early step %d: %v, %d token requests", i, err, tokens())
		}
	}
	if w := p.Wait(); w != PollWait(5*time.Second) {
		t.Fatalf("Wait = %v, want %v", w, PollWait(5*time.Second))
	}
	clk.After(p.Wait())
	if _, err := p.Step(context.Background()); !errors.Is(err, ErrPending) || tokens() != 1 {
		t.Fatalf("slow_down: %v, %d token requests", err, tokens())
	}
	if _, err := p.Step(context.Background()); !errors.Is(err, ErrPending) || tokens() != 1 {
		t.Fatalf("stepped again at once: %v, %d token requests", err, tokens())
	}
	if w := p.Wait(); w != PollWait(10*time.Second) {
		t.Fatalf("after slow_down Wait = %v, want %v", w, PollWait(10*time.Second))
	}
	clk.After(p.Wait())
	if _, err := p.Step(context.Background()); !errors.Is(err, ErrPending) || tokens() != 2 {
		t.Fatalf("pending: %v, %d token requests", err, tokens())
	}
	clk.After(p.Wait())
	if tok, err := p.Step(context.Background()); err != nil || tok == nil || tokens() != 3 {
		t.Fatalf("approved: %v, %d token requests", err, tokens())
	}
}
