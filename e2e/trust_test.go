package e2e

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Issue 9 rule 1: a card served from origin A whose interface is on the
// registered Provider P, but whose device authorization, token and
// metadata URLs are on A, cannot harvest PA JWTs minted for P: login is
// refused with UNTRUSTED_ENDPOINT naming both origins, and A receives no
// credential at all (only the card GET); P receives nothing.
func TestIssue9_CardCannotHarvestPAJWTsForARegisteredProvider(t *testing.T) {
	t.Parallel()
	p := newTrustProvider(t)
	var a recorder
	var aURL string
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.record(r)
		switch r.URL.Path {
		case "/card.json":
			writeJSON(w, 200, delegationCard("Harvester", p.Iface(), aURL+"/oauth", "read"))
			return
		case "/oauth/.well-known/oauth-authorization-server": // valid, so only the rule stops the harvest
			writeJSON(w, 200, map[string]any{"issuer": aURL + "/oauth", "token_endpoint": aURL + "/oauth/token",
				"device_authorization_endpoint": aURL + "/oauth/device_authorization", "jwks_uri": aURL + "/oauth/jwks.json"})
			return
		}
		writeJSON(w, 200, map[string]any{"device_code": "x", "user_code": "x", "verification_uri": aURL, "expires_in": 60})
	}))
	defer as.Close()
	aURL = as.URL
	e := trustEnv(t, p)
	// `pact provider add` in trustEnv looks once whether P answers (no
	// credential): only what login sends counts.
	before := len(p.rec.all())
	r := e.run("login", as.URL+"/card.json", "--scope", "orders:read", "--json")
	je := wantError(t, r, 1, "UNTRUSTED_ENDPOINT", 0, as.URL, p.URL())
	if !strings.Contains(je.Message, "aud-p") {
		t.Errorf("message does not name the audience: %q", je.Message)
	}
	if got := a.credentials(); len(got) != 0 {
		t.Fatalf("the hostile origin received credentials: %v", got)
	}
	for _, s := range a.all() {
		if s.Path != "/card.json" {
			t.Errorf("the hostile origin was contacted at %s %s", s.Method, s.Path)
		}
	}
	if n := len(p.rec.all()) - before; n != 0 {
		t.Errorf("the registered Provider received %d requests", n)
	}
}

// Issue 9 rule 1, through the metadata: the card is on P, but its RFC 8414
// metadata names a token endpoint and jwks_uri on another origin. Refused
// before any PA JWT is sent anywhere.
func TestIssue9_MetadataCannotRedirectPAJWTs(t *testing.T) {
	t.Parallel()
	var other recorder
	os := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { other.record(r); w.WriteHeader(500) }))
	defer os.Close()
	p := newTrustProvider(t)
	p.Metadata = func(md map[string]any) {
		md["token_endpoint"] = os.URL + "/token"
		md["jwks_uri"] = os.URL + "/jwks.json"
	}
	e := trustEnv(t, p)
	r := e.run("login", p.CardURL(), "--scope", "orders:read", "--json")
	wantError(t, r, 1, "UNTRUSTED_ENDPOINT", 0, os.URL, p.URL())
	if n := len(other.all()); n != 0 {
		t.Fatalf("the other origin was contacted %d times", n)
	}
	for _, s := range p.rec.all() {
		if s.Authorization != "" {
			t.Errorf("a PA JWT was sent to %s before the metadata was checked", s.Path)
		}
	}
}

// Issue 9 rule 2, RFC 8414 §3.3: metadata for one Brand's path whose issuer
// names another path on the same host is refused before the device flow
// starts (no PA JWT is sent).
func TestRFC8414_Section3_3_IssuerOfAnotherPathRefused(t *testing.T) {
	t.Parallel()
	p := newTrustProvider(t)
	p.Metadata = func(md map[string]any) { md["issuer"] = p.URL() + "/a2a/b2/oauth" }
	e := trustEnv(t, p)
	r := e.run("login", p.CardURL(), "--scope", "orders:read", "--json")
	wantError(t, r, 1, anyReason, 0, "issuer", "/a2a/b2/oauth")
	if got := p.rec.credentials(); len(got) != 0 {
		t.Fatalf("credentials sent despite the bad issuer: %v", got)
	}
}

// Issue 9 rule 2, PACT §5.4: the delegation token's iss must equal the
// issuer the metadata was bound to; a token from another path is refused
// and no grant is kept.
func TestSection5_4_DelegationTokenIssMustEqualBoundIssuer(t *testing.T) {
	t.Parallel()
	p := newTrustProvider(t)
	p.TokenIss = p.URL() + "/a2a/b2/oauth"
	e := trustEnv(t, p)
	r := e.run("login", p.CardURL(), "--scope", "orders:read", "--json", "--no-browser")
	wantError(t, r, 1, anyReason, 0, "iss mismatch", "/a2a/b2/oauth")
	if g := e.must("grants", "--json"); strings.TrimSpace(g.stdout) != "[]" {
		t.Errorf("a grant was kept: %s", g.stdout)
	}
}

// Issue 9 rules 5, 6, 7, 8 and 4 in one real login: the JWKS also holds an
// AKP (post-quantum) key, the token endpoint answers the first poll with
// HTTP 200 authorization_pending, the delegation token is 16 KB, the Brand
// name and scope description carry terminal escapes; then a reply's receipt
// is dated a year ahead. Login succeeds, stderr holds no control byte, the
// PA JWT only ever carries P's audience, and the receipt is not verified.
func TestIssue9_HostileButValidLogin(t *testing.T) {
	t.Parallel()
	p := newTrustProvider(t)
	p.JWKSExtra = []string{`{"kty":"AKP","alg":"ML-DSA-44","kid":"pq-1","pub":"AAAA"}`}
	p.Pending = 1
	p.TokenPad = 16 << 10
	p.Name = "Evil\x1b]0;pwned\x07 Co.\x1b[2J"
	p.ScopeDesc = "read \x1b]52;c;ZXZpbA==\x07orders \u202eevil\u202c\u009b31m"
	p.ReceiptTS = time.Now().UTC().AddDate(1, 0, 0).Format(time.RFC3339)
	e := trustEnv(t, p)
	r := e.run("login", p.CardURL(), "--scope", "orders:read", "--no-browser")
	if r.code != 0 {
		t.Fatalf("login: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	noTerminalControls(t, "login stderr", r.stderr)
	if !strings.Contains(r.stderr, `\x1b]52;c;ZXZpbA==\x07`) {
		t.Errorf("the scope description is not shown visibly:\n%s", r.stderr)
	}
	polls := 0
	for _, s := range p.rec.all() {
		if s.Path == "/a2a/b1/oauth/token" {
			polls++
		}
		if s.Authorization != "" && jwtAud(s.Authorization) != "aud-p" {
			t.Errorf("%s received a PA JWT for audience %q", s.Path, jwtAud(s.Authorization))
		}
	}
	if polls != 2 {
		t.Errorf("token endpoint polled %d times, want 2 (pending with HTTP 200, then the token)", polls)
	}

	r = e.run("send", p.CardURL(), "hello", "--json")
	if r.code != 0 {
		t.Fatalf("send: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var out struct {
		Receipt struct {
			Verified bool     `json:"verified"`
			Problems []string `json:"problems"`
		} `json:"receipt"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	if out.Receipt.Verified || !strings.Contains(strings.Join(out.Receipt.Problems, ";"), "in the future") {
		t.Fatalf("receipt from a year ahead: %+v", out.Receipt)
	}
	var delegated int
	for _, s := range p.rec.all() {
		if s.Delegation != "" {
			delegated++
			if len(s.Delegation) < 16<<10 {
				t.Errorf("the big delegation token came back truncated (%d bytes)", len(s.Delegation))
			}
		}
	}
	if delegated != 1 {
		t.Errorf("%d requests carried the delegation token, want 1", delegated)
	}
}

// Issue 9 rule 3: an interface URL with userinfo is not used; the password
// is neither printed nor sent; `provider add` with userinfo is a usage error.
func TestIssue9_NoUserinfoInURLs(t *testing.T) {
	t.Parallel()
	f := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(agentReply("hi"))) })
	f.Card = func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(cardJSON(strings.Replace(f.Iface(), "http://", "http://user:hunter2@", 1), nil)))
	}
	e := hostileEnv(t, f)
	r := e.run("send", f.URL(), "hello", "--json")
	je := wantError(t, r, 1, "INVALID_CARD", 200, "user name or password")
	if strings.Contains(je.Message, "hunter2") || strings.Contains(r.stderr, "hunter2") {
		t.Errorf("the password was printed: %q", je.Message)
	}
	if f.sends.Load() != 0 {
		t.Errorf("message:send reached")
	}
	r = e.run("provider", "add", "http://u:pw@127.0.0.1:9", "--audience", "x", "--json")
	wantError(t, r, 2, "USAGE", 0, "user name or password")
}

// Issue 9 rule 4: terminal escapes in a reply, a card name, a description
// and an error message never reach human output raw; --json keeps the
// reply exact.
func TestIssue9_NoEscapeFromRemoteTextOnTheTerminal(t *testing.T) {
	t.Parallel()
	evil := "title\x1b]0;pwned\x07 clear\x1b[2J clip\x1b]52;c;ZXZpbA==\x07 bs\x08 nul\x00 del\x7f csi\u009b31m \u202edesrever\u202c \u2066iso\u2069"
	var fail atomic.Bool
	f := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		if fail.Load() {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": 400, "status": "INVALID_ARGUMENT", "message": evil,
				"details": []any{map[string]any{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "INVALID_PARAMS", "domain": "a2a-protocol.org"}}}})
			return
		}
		w.Write([]byte(agentReply(evil)))
	})
	f.Card = func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(cardJSON(f.Iface(), map[string]any{"name": "Evil\x1b]0;x\x07", "description": evil})))
	}
	e := hostileEnv(t, f)
	r := e.run("send", f.URL(), "hello")
	if r.code != 0 {
		t.Fatalf("send: exit %d\n%s", r.code, r.stderr)
	}
	noTerminalControls(t, "send stdout", r.stdout)
	noTerminalControls(t, "send stderr", r.stderr)
	if !strings.Contains(r.stdout, `\x1b]0;pwned\x07`) {
		t.Errorf("the reply is not shown visibly: %q", r.stdout)
	}
	r = e.run("send", f.URL(), "hello", "--json")
	var out struct {
		Reply struct {
			Message struct {
				Parts []struct {
					Text string `json:"text"`
				} `json:"parts"`
			} `json:"message"`
		} `json:"reply"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || len(out.Reply.Message.Parts) == 0 || out.Reply.Message.Parts[0].Text != evil {
		t.Errorf("--json did not keep the reply exact: %v %q", err, r.stdout)
	}
	r = e.run("card", f.URL())
	noTerminalControls(t, "card stdout", r.stdout)
	noTerminalControls(t, "card stderr", r.stderr)
	fail.Store(true)
	r = e.run("send", f.URL(), "again")
	if r.code == 0 {
		t.Fatal("the error answer was not reported")
	}
	noTerminalControls(t, "error line", r.stderr)
	// The Provider's own error.message is wire detail: people see it on the
	// --debug detail line, made visible, never executed.
	r = e.run("send", f.URL(), "again", "--debug")
	noTerminalControls(t, "error line under --debug", r.stderr)
	if !strings.Contains(r.stderr, `\x1b[2J`) {
		t.Errorf("the error message is not shown visibly under --debug: %q", r.stderr)
	}
	r = e.run("conversations")
	noTerminalControls(t, "conversations table", r.stdout)
}

// Issue 9 rule 7: a 401 from a Provider whose Date is ten minutes ahead
// says the User's clock is behind, by how much.
func TestIssue9_ClockSkewNamedOn401(t *testing.T) {
	t.Parallel()
	f := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Date", time.Now().Add(10*time.Minute).UTC().Format(http.TimeFormat))
		w.Header().Set("WWW-Authenticate", `Bearer realm="a2a"`)
		w.WriteHeader(401)
	})
	e := hostileEnv(t, f)
	r := e.run("send", f.URL(), "hello", "--json")
	je := wantError(t, r, 3, "UNAUTHENTICATED", 401, "behind the Provider's")
	if !strings.Contains(je.Message, "your clock is 600 s") && !strings.Contains(je.Message, "your clock is 599 s") && !strings.Contains(je.Message, "your clock is 601 s") {
		t.Errorf("message %q does not say by how much", je.Message)
	}
}

// Issue 9 rule 9, A2A calls: message:send answered with 307 to another
// origin is refused; the other origin receives nothing (Go would re-POST
// the PA JWT's X-A2A-User-Delegation companion headers there).
func TestIssue9_A2ACredentialsDoNotFollowRedirects(t *testing.T) {
	t.Parallel()
	var sink recorder
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { sink.record(r); w.Write([]byte(agentReply("stolen"))) }))
	defer s.Close()
	f := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, s.URL+r.URL.Path, http.StatusTemporaryRedirect)
	})
	e := hostileEnv(t, f)
	r := e.run("send", f.URL(), "hello", "--json")
	wantError(t, r, 1, anyReason, 0, "redirect", "credentials")
	if n := len(sink.all()); n != 0 {
		t.Fatalf("the redirect target received %d requests: %v", n, sink.credentials())
	}
}

// Issue 9 rule 9, OAuth calls: the token endpoint answering 307 to another
// origin does not get the device code or a PA JWT sent there.
func TestIssue9_OAuthCredentialsDoNotFollowRedirects(t *testing.T) {
	t.Parallel()
	var sink recorder
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { sink.record(r); w.WriteHeader(400) }))
	defer s.Close()
	p := newTrustProvider(t)
	inner := p.srv.Config.Handler
	p.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/a2a/b1/oauth/token" || r.URL.Path == "/a2a/b1/oauth/device_authorization" {
			p.rec.record(r)
			http.Redirect(w, r, s.URL+"/steal", http.StatusTemporaryRedirect)
			return
		}
		inner.ServeHTTP(w, r)
	})
	e := trustEnv(t, p)
	r := e.run("login", p.CardURL(), "--scope", "orders:read", "--json")
	wantError(t, r, 1, anyReason, 0, "redirect")
	if n := len(sink.all()); n != 0 {
		t.Fatalf("the redirect target received %d requests: %v", n, sink.credentials())
	}
}

// Issue 9 rule 10: protocolBinding "http+json" is the HTTP+JSON binding.
func TestIssue9_ProtocolBindingCaseInsensitive(t *testing.T) {
	t.Parallel()
	f := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(agentReply("hi"))) })
	f.Card = func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(cardJSON(f.Iface(), map[string]any{"supportedInterfaces": []any{
			map[string]any{"url": f.Iface(), "protocolBinding": "http+json", "protocolVersion": "1.0"}}})))
	}
	e := hostileEnv(t, f)
	if r := e.run("send", f.URL(), "hello", "--json"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stdout)
	}
}
