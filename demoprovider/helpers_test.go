package demoprovider

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/pact-cli/pact/internal/testrun"
	"github.com/pact-cli/pact/jwks"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// testPA is a personal agent: keys and a JWKS + OIDC discovery server on
// 127.0.0.1.
type testPA struct {
	issuer string
	es, rs jose.JSONWebKey
	// other are published keys for algorithms outside §3.2's ES256/RS256
	// (ES384, ES512, PS256), by alg: a token signed with one is refused
	// for its alg alone, since its key is in the JWKS.
	other map[jose.SignatureAlgorithm]jose.JSONWebKey
	srv   *httptest.Server
}

// paKeySet is the private keys of one test personal agent.
type paKeySet struct {
	ec, ec384, ec521 *ecdsa.PrivateKey
	rk               *rsa.PrivateKey
}

// paKeys hands out key sets: a test's first personal agent gets the first
// set, its second the second, so two personal agents of one test never
// share a key, while the tests (each with its own servers) share the sets
// instead of generating an RSA key each (about 0.1 s of CPU apiece, most
// of this package's CPU).
var paKeys struct {
	mu   sync.Mutex
	sets []*paKeySet
	used map[string]int // top-level test name → key sets it has taken
}

func takePAKeys(t testing.TB) *paKeySet {
	t.Helper()
	name, _, _ := strings.Cut(t.Name(), "/")
	paKeys.mu.Lock()
	defer paKeys.mu.Unlock()
	if paKeys.used == nil {
		paKeys.used = map[string]int{}
	}
	i := paKeys.used[name]
	paKeys.used[name]++
	for len(paKeys.sets) <= i {
		var k paKeySet
		var err error
		if k.ec, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
			t.Fatal(err)
		}
		if k.rk, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			t.Fatal(err)
		}
		if k.ec384, err = ecdsa.GenerateKey(elliptic.P384(), rand.Reader); err != nil {
			t.Fatal(err)
		}
		if k.ec521, err = ecdsa.GenerateKey(elliptic.P521(), rand.Reader); err != nil {
			t.Fatal(err)
		}
		paKeys.sets = append(paKeys.sets, &k)
	}
	return paKeys.sets[i]
}

func newTestPA(t testing.TB) *testPA {
	t.Helper()
	k := takePAKeys(t)
	ec, rk, ec384, ec521 := k.ec, k.rk, k.ec384, k.ec521
	pa := &testPA{
		es: jose.JSONWebKey{Key: ec, KeyID: "es-1", Algorithm: "ES256", Use: "sig"},
		rs: jose.JSONWebKey{Key: rk, KeyID: "rs-1", Algorithm: "RS256", Use: "sig"},
		other: map[jose.SignatureAlgorithm]jose.JSONWebKey{
			jose.ES384: {Key: ec384, KeyID: "es384-1", Algorithm: "ES384", Use: "sig"},
			jose.ES512: {Key: ec521, KeyID: "es512-1", Algorithm: "ES512", Use: "sig"},
			jose.PS256: {Key: rk, KeyID: "ps256-1", Algorithm: "PS256", Use: "sig"},
		},
	}
	var h http.Handler
	pa.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(pa.srv.Close)
	pa.issuer = pa.srv.URL
	h = jwks.Handler(pa.issuer, pa.jwksURI(), func() (jose.JSONWebKeySet, error) {
		set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{pa.es, pa.rs}}
		for _, alg := range []jose.SignatureAlgorithm{jose.ES384, jose.ES512, jose.PS256} {
			set.Keys = append(set.Keys, pa.other[alg])
		}
		return set, nil
	})
	return pa
}

func (pa *testPA) jwksURI() string { return pa.issuer + "/.well-known/jwks.json" }

func (pa *testPA) registration() Registration {
	return Registration{Issuer: pa.issuer, JWKSURI: pa.jwksURI()}
}

// signRaw signs claims with key, alg and kid.
func signRaw(t testing.TB, alg jose.SignatureAlgorithm, key any, kid string, claims any) string {
	t.Helper()
	opts := (&jose.SignerOptions{}).WithType("JWT")
	if kid != "" {
		opts = opts.WithHeader("kid", kid)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, opts)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(s).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// claims returns a valid PA JWT claim set for sub at time now.
func (pa *testPA) claims(aud, sub string, now time.Time) map[string]any {
	return map[string]any{
		"iss": pa.issuer, "sub": sub, "aud": aud,
		"iat": now.Unix(), "exp": now.Add(120 * time.Second).Unix(), "jti": randomID(""),
	}
}

// token signs a valid ES256 PA JWT, after applying edit to the claims.
func (pa *testPA) token(t testing.TB, aud, sub string, now time.Time, edit func(map[string]any)) string {
	c := pa.claims(aud, sub, now)
	if edit != nil {
		edit(c)
	}
	return signRaw(t, jose.ES256, pa.es.Key, pa.es.KeyID, c)
}

// env is a running Provider with a registered PA.
type env struct {
	t   testing.TB
	srv *Server
	pa  *testPA
	clk *clock
}

func start(t testing.TB, edit func(*Config, *testPA)) *env {
	t.Helper()
	if tt, ok := t.(*testing.T); ok {
		testrun.Parallel(tt)
	}
	pa := newTestPA(t)
	clk := &clock{t: time.Now()}
	cfg := Config{Policy: AllowList, Registered: []Registration{pa.registration()}, Now: clk.Now, PollInterval: time.Second}
	if edit != nil {
		edit(&cfg, pa)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	srv, err := Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return &env{t: t, srv: srv, pa: pa, clk: clk}
}

func (e *env) example() Brand { return e.srv.Brands()[0] }
func (e *env) other() Brand   { return e.srv.Brands()[1] }

// jwt is a fresh PA JWT for sub.
func (e *env) jwt(sub string) string { return e.pa.token(e.t, e.srv.Audience(), sub, e.clk.Now(), nil) }

type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r resp) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body is not JSON: %v: %s", err, r.body)
	}
	return m
}

var testClient = &http.Client{Timeout: 10 * time.Second}

// do sends a request; headers are name/value pairs.
func do(t testing.TB, method, u string, body io.Reader, headers ...string) resp {
	t.Helper()
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := testClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp{res.StatusCode, res.Header, b}
}

// sendRaw posts body to {iface}/message:send with the PA JWT tok.
func sendRaw(t testing.TB, iface, tok, body string, extra ...string) resp {
	t.Helper()
	h := append([]string{"Content-Type", "application/json", "A2A-Version", "1.0"}, extra...)
	if tok != "" {
		h = append(h, "Authorization", "Bearer "+tok)
	}
	return do(t, http.MethodPost, iface+"/message:send", strings.NewReader(body), h...)
}

// msgBody builds a SendMessageRequest body.
func msgBody(messageID, contextID, text string) string {
	m := map[string]any{"messageId": messageID, "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}}
	if contextID != "" {
		m["contextId"] = contextID
	}
	b, _ := json.Marshal(map[string]any{"message": m})
	return string(b)
}

// send sends text as sub and returns the reply; it fails the test on a non-200.
func (e *env) send(iface, sub, messageID, contextID, text string, extra ...string) map[string]any {
	e.t.Helper()
	r := sendRaw(e.t, iface, e.jwt(sub), msgBody(messageID, contextID, text), extra...)
	if r.status != http.StatusOK {
		e.t.Fatalf("message:send %q: status %d: %s", text, r.status, r.body)
	}
	return r.json(e.t)
}

// replyText is the text and contextId of a {"message": …} reply.
func replyText(t testing.TB, m map[string]any) (string, string) {
	t.Helper()
	msg, ok := m["message"].(map[string]any)
	if !ok {
		t.Fatalf("reply has no message: %v", m)
	}
	parts := msg["parts"].([]any)
	return parts[0].(map[string]any)["text"].(string), msg["contextId"].(string)
}

// wantA2AError checks the §6 envelope.
func wantA2AError(t testing.TB, r resp, code int, status, reason string) string {
	t.Helper()
	if r.status != code {
		t.Fatalf("status %d, want %d: %s", r.status, code, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/a2a+json" {
		t.Errorf("Content-Type %q, want application/a2a+json", ct)
	}
	var env struct {
		Error struct {
			Code    int              `json:"code"`
			Status  string           `json:"status"`
			Message string           `json:"message"`
			Details []map[string]any `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal(r.body, &env); err != nil {
		t.Fatalf("error body: %v: %s", err, r.body)
	}
	e := env.Error
	if e.Code != code || e.Status != status || len(e.Details) == 0 {
		t.Fatalf("envelope %+v, want code %d status %s", e, code, status)
	}
	d := e.Details[0]
	if d["@type"] != "type.googleapis.com/google.rpc.ErrorInfo" || d["reason"] != reason || d["domain"] != "a2a-protocol.org" {
		t.Fatalf("details[0] = %v, want ErrorInfo %s", d, reason)
	}
	return e.Message
}

// want401 checks a §3.4 failure: 401, the challenge, no body.
func want401(t testing.TB, r resp, challenge string) {
	t.Helper()
	if r.status != http.StatusUnauthorized {
		t.Fatalf("status %d, want 401: %s", r.status, r.body)
	}
	if got := r.header.Get("WWW-Authenticate"); got != challenge {
		t.Errorf("WWW-Authenticate %q, want %q", got, challenge)
	}
	if len(r.body) != 0 {
		t.Errorf("401 has a body: %s", r.body)
	}
}

// postForm posts an x-www-form-urlencoded body with a PA JWT.
func postForm(t testing.TB, u, tok string, form url.Values) resp {
	t.Helper()
	h := []string{"Content-Type", "application/x-www-form-urlencoded"}
	if tok != "" {
		h = append(h, "Authorization", "Bearer "+tok)
	}
	return do(t, http.MethodPost, u, strings.NewReader(form.Encode()), h...)
}
