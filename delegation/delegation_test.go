package delegation

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/pact-cli/pact/deviceflow"
	"github.com/pact-cli/pact/store"
)

const (
	paIssuer = "https://pa.example.com"
	asIssuer = "http://127.0.0.1/a2a/b1/oauth"
	iface    = "https://provider.example.com/a2a/b1"
)

var t0 = time.Date(2026, 9, 30, 12, 0, 0, 0, time.UTC)

func claimsAt(now time.Time, mod func(map[string]any)) map[string]any {
	c := map[string]any{
		"iss":       asIssuer,
		"aud":       iface,
		"sub":       "jane-4471",
		"client_id": paIssuer,
		"scope":     "orders:read orders:cancel",
		"grant_id":  "a2agrant_1",
		"iat":       now.Unix(),
		"exp":       now.Add(time.Hour).Unix(),
	}
	if mod != nil {
		mod(c)
	}
	return c
}

func expect(js *jwksServer) Expect {
	return Expect{Issuer: asIssuer, JWKSURI: js.uri(), Audience: iface, ClientID: paIssuer, Now: t0}
}

func TestSection5_4_ValidTokenAccepted(t *testing.T) {
	for _, alg := range []jose.SignatureAlgorithm{jose.ES256, jose.RS256} {
		k := newKey(t, alg, "k-"+string(alg))
		js := newJWKSServer(t, k)
		c, err := VerifyToken(context.Background(), js.cache(), k.sign(t, claimsAt(t0, nil), nil), expect(js))
		if err != nil {
			t.Fatalf("%s: %v", alg, err)
		}
		if c.Subject != "jane-4471" || c.GrantID != "a2agrant_1" || fmt.Sprint(c.Scopes) != "[orders:read orders:cancel]" || !c.ExpiresAt.Equal(t0.Add(time.Hour)) {
			t.Errorf("%s: claims = %+v", alg, c)
		}
	}
}

// verifyProblems verifies token and returns its *VerifyError problems.
func verifyProblems(t *testing.T, js *jwksServer, token string) string {
	t.Helper()
	_, err := VerifyToken(context.Background(), js.cache(), token, expect(js))
	var ve *VerifyError
	if !errors.As(err, &ve) {
		t.Fatalf("want *VerifyError, got %v", err)
	}
	return ve.Error()
}

func TestSection5_4_AlgNoneRejected(t *testing.T) {
	js := newJWKSServer(t, newKey(t, jose.ES256, "k1"))
	msg := verifyProblems(t, js, unsigned(t, "k1", claimsAt(t0, nil)))
	if !strings.Contains(msg, `alg "none" not allowed`) {
		t.Errorf("got %q", msg)
	}
	if js.fetches.Load() != 0 {
		t.Error("a token refused by its header must not cause a key fetch")
	}
}

func TestSection5_4_HS256Rejected(t *testing.T) {
	js := newJWKSServer(t, newKey(t, jose.ES256, "k1"))
	hk := newKey(t, jose.HS256, "k1")
	if msg := verifyProblems(t, js, hk.sign(t, claimsAt(t0, nil), nil)); !strings.Contains(msg, `alg "HS256" not allowed`) {
		t.Errorf("got %q", msg)
	}
}

func TestSection5_4_UnknownCritRejected(t *testing.T) {
	k := newKey(t, jose.ES256, "k1")
	js := newJWKSServer(t, k)
	tok := k.sign(t, claimsAt(t0, nil), map[jose.HeaderKey]any{"crit": []string{"exp-ext"}, "exp-ext": 1})
	if msg := verifyProblems(t, js, tok); !strings.Contains(msg, "crit") {
		t.Errorf("got %q", msg)
	}
}

func TestSection5_4_UnknownKidRejected(t *testing.T) {
	k := newKey(t, jose.ES256, "k1")
	js := newJWKSServer(t, newKey(t, jose.ES256, "other"))
	if msg := verifyProblems(t, js, k.sign(t, claimsAt(t0, nil), nil)); !strings.Contains(msg, `unknown kid "k1"`) {
		t.Errorf("got %q", msg)
	}
}

func TestSection5_4_WrongKeySameKidRejected(t *testing.T) {
	real := newKey(t, jose.ES256, "k1")
	forged := newKey(t, jose.ES256, "k1")
	js := newJWKSServer(t, real)
	if msg := verifyProblems(t, js, forged.sign(t, claimsAt(t0, nil), nil)); !strings.Contains(msg, "signature does not verify") {
		t.Errorf("got %q", msg)
	}
}

func TestSection5_4_EveryFailedClaimIsReported(t *testing.T) {
	k := newKey(t, jose.ES256, "k1")
	js := newJWKSServer(t, k)
	tok := k.sign(t, claimsAt(t0.Add(-time.Hour-3*time.Minute-2*time.Second), func(c map[string]any) {
		c["aud"] = "https://provider.example.com/a2a/OTHER"
		c["client_id"] = "https://evil-pa.example"
		c["iss"] = "https://other-as.example"
	}), nil)
	msg := verifyProblems(t, js, tok)
	for _, want := range []string{"aud mismatch", "client_id mismatch", "iss mismatch", "expired by 3m2s"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, tok) {
		t.Error("error contains the token")
	}
}

func TestSection5_4_ExpiredTokenRejectedButSkewTolerated(t *testing.T) {
	k := newKey(t, jose.ES256, "k1")
	js := newJWKSServer(t, k)
	within := k.sign(t, claimsAt(t0.Add(-time.Hour-20*time.Second), nil), nil)
	if _, err := VerifyToken(context.Background(), js.cache(), within, expect(js)); err != nil {
		t.Errorf("20 s past exp is within skew: %v", err)
	}
	past := k.sign(t, claimsAt(t0.Add(-2*time.Hour), nil), nil)
	if msg := verifyProblems(t, js, past); !strings.Contains(msg, "expired by 1h0m0s") {
		t.Errorf("got %q", msg)
	}
}

func TestSection5_4_AudienceMustBeOneValue(t *testing.T) {
	k := newKey(t, jose.ES256, "k1")
	js := newJWKSServer(t, k)
	tok := k.sign(t, claimsAt(t0, func(c map[string]any) { c["aud"] = []string{iface, "https://other"} }), nil)
	if msg := verifyProblems(t, js, tok); !strings.Contains(msg, "aud has 2 values") {
		t.Errorf("got %q", msg)
	}
	tok = k.sign(t, claimsAt(t0, func(c map[string]any) { delete(c, "exp"); delete(c, "grant_id"); delete(c, "scope") }), nil)
	msg := verifyProblems(t, js, tok)
	for _, want := range []string{"exp missing", "grant_id missing", "scope missing"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q lacks %q", msg, want)
		}
	}
}

func TestSection5_5_InvalidTokenChallenge(t *testing.T) {
	for h, want := range map[string]bool{
		`Bearer realm="a2a", error="invalid_token"`:   true,
		`Bearer realm="a2a",error=invalid_token`:      true,
		`Bearer error = "invalid_token"`:              true,
		`Bearer realm="a2a"`:                          false,
		`Bearer realm="a2a", error="invalid_request"`: false,
		`Bearer error_description="invalid_token"`:    false,
	} {
		if got := IsInvalidTokenChallenge(h); got != want {
			t.Errorf("%s: got %v", h, got)
		}
	}
}

// tokenServer is a refresh endpoint that mints tokens with key k.
type tokenServer struct {
	srv      *httptest.Server
	refresh  atomic.Int32
	respond  func(w http.ResponseWriter, form url.Values) bool // true: handled
	k        testKey
	now      func() time.Time
	lastAuth atomic.Value
}

func newTokenServer(t *testing.T, k testKey, now func() time.Time) *tokenServer {
	ts := &tokenServer{k: k, now: now}
	ts.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		ts.refresh.Add(1)
		ts.lastAuth.Store(r.Header.Get("Authorization"))
		if ts.respond != nil && ts.respond(w, r.PostForm) {
			return
		}
		if r.PostForm.Get("grant_type") != "refresh_token" || r.PostForm.Get("refresh_token") != "rt_1" || r.PostForm.Get("client_id") != paIssuer {
			w.WriteHeader(400)
			fmt.Fprint(w, `{"error":"invalid_request"}`)
			return
		}
		tok := k.sign(t, claimsAt(ts.now(), nil), nil)
		fmt.Fprintf(w, `{"token_type":"Bearer","access_token":%q,"expires_in":3600,"scope":"orders:read orders:cancel"}`, tok)
	}))
	t.Cleanup(ts.srv.Close)
	return ts
}

type fixture struct {
	m   *Manager
	sec *memSecrets
	k   testKey
	js  *jwksServer
	ts  *tokenServer
	now *time.Time
	md  *deviceflow.Metadata
	dir string
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{sec: newMemSecrets(), k: newKey(t, jose.ES256, "as-k1"), dir: t.TempDir()}
	now := t0
	f.now = &now
	f.js = newJWKSServer(t, f.k)
	f.ts = newTokenServer(t, f.k, func() time.Time { return *f.now })
	f.md = &deviceflow.Metadata{Issuer: asIssuer, JWKSURI: f.js.uri(), TokenEndpoint: f.ts.srv.URL + "/token"}
	n := 0
	f.m = &Manager{
		Store:    DBStore{DB: openTestDB(t, filepath.Join(f.dir, "pact.db")).ForUser(store.LocalUser)},
		Secrets:  f.sec,
		Keys:     f.js.cache(),
		ClientID: paIssuer,
		Flow: &deviceflow.Client{ClientID: paIssuer, PAToken: func(context.Context, string) (string, error) {
			n++
			return fmt.Sprintf("pa-%d", n), nil
		}},
		SecretPrefix: "default/",
		Now:          func() time.Time { return *f.now },
	}
	return f
}

func (f *fixture) accept(t *testing.T, access, refresh string) *Grant {
	t.Helper()
	g, err := f.m.Accept(context.Background(), Origin{Brand: "https://brand.example/.well-known/agent-card.json", InterfaceURL: iface, MetadataURL: "http://127.0.0.1/md", Metadata: f.md},
		&deviceflow.Token{AccessToken: deviceflow.Secret(access), RefreshToken: deviceflow.Secret(refresh)})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestSection5_4_AcceptStoresGrantAndTokensApart(t *testing.T) {
	f := newFixture(t)
	access := f.k.sign(t, claimsAt(t0, nil), nil)
	g := f.accept(t, access, "rt_1")
	if g.GrantID != "a2agrant_1" || g.Subject != "jane-4471" || !g.Refreshable || !g.ExpiresAt.Equal(t0.Add(time.Hour)) || !g.HasScopes("orders:read", "orders:cancel") {
		t.Errorf("grant = %+v", g)
	}
	if stored, ok, err := f.m.Store.Get(iface); err != nil || !ok || stored.GrantID != "a2agrant_1" {
		t.Fatalf("stored grant = %+v %v %v", stored, ok, err)
	}
	var state []byte
	for _, name := range []string{"pact.db", "pact.db-wal"} {
		b, _ := os.ReadFile(filepath.Join(f.dir, name))
		state = append(state, b...)
	}
	if len(state) == 0 {
		t.Fatal("no database written")
	}
	if strings.Contains(string(state), access) || strings.Contains(string(state), "rt_1") {
		t.Error("the database holds a token")
	}
	if fi, _ := os.Stat(filepath.Join(f.dir, "pact.db")); !isPrivate(fi) {
		t.Errorf("pact.db mode %v", fi.Mode().Perm())
	}
	if len(f.sec.m) != 2 {
		t.Errorf("want access and refresh as two secret entries, got %d", len(f.sec.m))
	}
	for key := range f.sec.m {
		if !strings.HasPrefix(key, "default/delegation/") {
			t.Errorf("secret key %q", key)
		}
	}
}

func TestSection5_4_AcceptRefusesTokenForAnotherClient(t *testing.T) {
	f := newFixture(t)
	access := f.k.sign(t, claimsAt(t0, func(c map[string]any) { c["client_id"] = "https://other-pa.example" }), nil)
	_, err := f.m.Accept(context.Background(), Origin{InterfaceURL: iface, Metadata: f.md}, &deviceflow.Token{AccessToken: deviceflow.Secret(access)})
	if err == nil || !strings.Contains(err.Error(), "client_id mismatch") {
		t.Fatalf("err = %v", err)
	}
	if len(f.sec.m) != 0 {
		t.Error("a refused token was stored")
	}
}

func TestSection5_5_TokenForOnlyItsInterfaceURL(t *testing.T) {
	f := newFixture(t)
	access := f.k.sign(t, claimsAt(t0, nil), nil)
	f.accept(t, access, "rt_1")
	tok, g, err := f.m.TokenFor(context.Background(), iface)
	if err != nil || tok != access || g.InterfaceURL != iface {
		t.Fatalf("TokenFor = %v %v", g, err)
	}
	for _, other := range []string{iface + "/", "https://provider.example.com/a2a/b2", "https://provider.example.com/a2a"} {
		if _, _, err := f.m.TokenFor(context.Background(), other); !errors.Is(err, ErrNoGrant) {
			t.Errorf("%s: err = %v", other, err)
		}
	}
	// A token for another aud slipped into the secret store is not sent.
	for k := range f.sec.m {
		if strings.HasSuffix(k, "/access") {
			f.sec.m[k] = f.k.sign(t, claimsAt(t0, func(c map[string]any) { c["aud"] = "https://evil.example/a2a" }), nil)
		}
	}
	if _, _, err := f.m.TokenFor(context.Background(), iface); err == nil || !strings.Contains(err.Error(), "aud mismatch") {
		t.Errorf("err = %v", err)
	}
}

func TestSection5_4_RefreshShortlyBeforeExpiry(t *testing.T) {
	f := newFixture(t)
	access := f.k.sign(t, claimsAt(t0, nil), nil)
	f.accept(t, access, "rt_1")
	*f.now = t0.Add(59 * time.Minute) // 1 min left < 2 min RefreshBefore
	tok, g, err := f.m.TokenFor(context.Background(), iface)
	if err != nil {
		t.Fatal(err)
	}
	if tok == access || f.ts.refresh.Load() != 1 {
		t.Fatalf("refreshes = %d, token changed = %v", f.ts.refresh.Load(), tok != access)
	}
	if !g.ExpiresAt.Equal(t0.Add(59*time.Minute + time.Hour)) {
		t.Errorf("grant expiry = %v", g.ExpiresAt)
	}
	if a, _ := f.ts.lastAuth.Load().(string); a != "Bearer pa-1" {
		t.Errorf("refresh carried %q", a)
	}
	// Refresh response had no refresh_token: the old one is kept.
	if g2, _ := f.m.Grant(iface); !g2.Refreshable {
		t.Error("grant lost its refresh token")
	}
	if tok2, _, _ := f.m.TokenFor(context.Background(), iface); tok2 != tok || f.ts.refresh.Load() != 1 {
		t.Error("a fresh token must not be refreshed again")
	}
}

func TestSection5_4_ExpiredWithoutRefreshTokenNeedsLogin(t *testing.T) {
	f := newFixture(t)
	f.accept(t, f.k.sign(t, claimsAt(t0, nil), nil), "")
	*f.now = t0.Add(2 * time.Hour)
	_, _, err := f.m.TokenFor(context.Background(), iface)
	if !errors.Is(err, ErrLoginRequired) || !strings.Contains(err.Error(), "pact login") {
		t.Fatalf("err = %v", err)
	}
	if f.ts.refresh.Load() != 0 {
		t.Error("no refresh token: nothing should be sent")
	}
}

func TestSection5_5_InvalidTokenRefreshesOnceThenAsksForLogin(t *testing.T) {
	f := newFixture(t)
	access := f.k.sign(t, claimsAt(t0, nil), nil)
	f.accept(t, access, "rt_1")
	var sent []string
	err := f.m.Send(context.Background(), iface, func(tok string, g *Grant) error {
		sent = append(sent, tok)
		if len(sent) == 1 {
			return fmt.Errorf("message:send: %w", ErrInvalidToken)
		}
		return nil
	})
	if err != nil || len(sent) != 2 || sent[0] != access || sent[1] == access || f.ts.refresh.Load() != 1 {
		t.Fatalf("err=%v sends=%d refreshes=%d", err, len(sent), f.ts.refresh.Load())
	}

	calls := 0
	err = f.m.Send(context.Background(), iface, func(string, *Grant) error {
		calls++
		return ErrInvalidToken
	})
	var le *LoginRequiredError
	if !errors.As(err, &le) || !strings.Contains(err.Error(), "run `pact login") || calls != 2 || f.ts.refresh.Load() != 2 {
		t.Fatalf("err=%v calls=%d refreshes=%d", err, calls, f.ts.refresh.Load())
	}
}

// refuseInvalidGrant is a token endpoint that refuses every request with invalid_grant
// (a revoked or expired refresh token).
func refuseInvalidGrant(w http.ResponseWriter, _ url.Values) bool {
	w.WriteHeader(400)
	fmt.Fprint(w, `{"error":"invalid_grant"}`)
	return true
}

func TestSection5_5_RevokedGrantNeedsLogin(t *testing.T) {
	f := newFixture(t)
	f.ts.respond = refuseInvalidGrant
	f.accept(t, f.k.sign(t, claimsAt(t0, nil), nil), "rt_1")
	_, _, err := f.m.Refresh(context.Background(), iface)
	if !errors.Is(err, ErrLoginRequired) || strings.Contains(err.Error(), "rt_1") {
		t.Fatalf("err = %v", err)
	}
}

func TestForgetRemovesGrantAndTokens(t *testing.T) {
	f := newFixture(t)
	f.accept(t, f.k.sign(t, claimsAt(t0, nil), nil), "rt_1")
	if err := f.m.Forget(iface); err != nil {
		t.Fatal(err)
	}
	if len(f.sec.m) != 0 {
		t.Errorf("secrets left: %d", len(f.sec.m))
	}
	if gs, _ := f.m.List(); len(gs) != 0 {
		t.Errorf("grants left: %v", gs)
	}
}
