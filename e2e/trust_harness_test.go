package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// seen is one request a trust-suite server received.
type seen struct {
	Method, Path  string
	Authorization string // the whole header
	Delegation    string // X-A2A-User-Delegation
	Body          string
}

// recorder keeps every request a server received, for the "what did the
// hostile server get" assertions of issue 9.
type recorder struct {
	mu   sync.Mutex
	reqs []seen
}

func (r *recorder) record(req *http.Request) string {
	b, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = append(r.reqs, seen{req.Method, req.URL.Path, req.Header.Get("Authorization"), req.Header.Get("X-A2A-User-Delegation"), string(b)})
	return string(b)
}

func (r *recorder) all() []seen {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]seen(nil), r.reqs...)
}

// credentials lists every credential a server received: Authorization and
// delegation headers, and form bodies carrying a device code or refresh
// token.
func (r *recorder) credentials() []string {
	var out []string
	for _, s := range r.all() {
		if s.Authorization != "" {
			out = append(out, s.Method+" "+s.Path+": Authorization")
		}
		if s.Delegation != "" {
			out = append(out, s.Method+" "+s.Path+": X-A2A-User-Delegation")
		}
		if strings.Contains(s.Body, "device_code=") || strings.Contains(s.Body, "refresh_token=") {
			out = append(out, s.Method+" "+s.Path+": form credential")
		}
	}
	return out
}

// jwtAud decodes the aud of a "Bearer JWT" header value without verifying.
func jwtAud(header string) string {
	parts := strings.Split(strings.TrimPrefix(header, "Bearer "), ".")
	if len(parts) != 3 {
		return ""
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return ""
	}
	var c struct {
		Aud any `json:"aud"`
	}
	json.Unmarshal(b, &c)
	return fmt.Sprint(c.Aud)
}

// trustProvider is a small PACT Provider with delegation for one Brand at
// {URL}/a2a/b1: card, RFC 8414 metadata, device authorization, token,
// JWKS and message:send. It signs delegation tokens and receipts with its
// own ES256 key. Its knobs make it hostile one way at a time.
type trustProvider struct {
	t   *testing.T
	srv *httptest.Server
	rec recorder
	key *ecdsa.PrivateKey

	mu sync.Mutex
	// Card, when set, replaces the card document (given the interface URL).
	Card func(iface string) map[string]any
	// Metadata edits the RFC 8414 document before it is served.
	Metadata func(md map[string]any)
	// JWKSExtra are raw JWKs served before the real key.
	JWKSExtra []string
	// Pending is how many polls get HTTP 200 {"error":"authorization_pending"}.
	Pending int
	// TokenIss is the delegation token's iss ("" = the metadata's issuer).
	TokenIss string
	// TokenPad is the size of a filler claim making the token big.
	TokenPad int
	// ReceiptTS is the receipt's ts ("" = now).
	ReceiptTS string
	// Reply is the agent's reply text.
	Reply string
	// Name and ScopeDesc are the card's name and the scope description.
	Name, ScopeDesc string
}

func newTrustProvider(t *testing.T) *trustProvider {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p := &trustProvider{t: t, key: k, Reply: "done", Name: "Trust Co.", ScopeDesc: "Look up your orders"}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *trustProvider) URL() string     { return p.srv.URL }
func (p *trustProvider) Iface() string   { return p.srv.URL + "/a2a/b1" }
func (p *trustProvider) CardURL() string { return p.Iface() + "/.well-known/agent-card.json" }
func (p *trustProvider) Issuer() string  { return p.Iface() + "/oauth" }

// delegationCard is a §2.1 + §5.1 card for iface whose OAuth endpoints are
// under oauthBase.
func delegationCard(name, iface, oauthBase, scopeDesc string) map[string]any {
	m := map[string]any{}
	json.Unmarshal([]byte(cardJSON(iface, nil)), &m)
	m["name"] = name
	m["securitySchemes"] = map[string]any{
		"paJwt": map[string]any{"httpAuthSecurityScheme": map[string]any{"scheme": "Bearer", "bearerFormat": "JWT"}},
		"userDelegation": map[string]any{"oauth2SecurityScheme": map[string]any{
			"flows": map[string]any{"deviceCode": map[string]any{
				"deviceAuthorizationUrl": oauthBase + "/device_authorization",
				"tokenUrl":               oauthBase + "/token",
				"scopes":                 map[string]any{"orders:read": scopeDesc},
			}},
			"oauth2MetadataUrl": oauthBase + "/.well-known/oauth-authorization-server",
		}},
	}
	m["securityRequirements"] = []any{
		map[string]any{"schemes": map[string]any{"paJwt": map[string]any{"list": []any{}}}},
		map[string]any{"schemes": map[string]any{"paJwt": map[string]any{"list": []any{}}, "userDelegation": map[string]any{"list": []any{}}}},
	}
	return m
}

func (p *trustProvider) jwk() jose.JSONWebKey {
	return jose.JSONWebKey{Key: &p.key.PublicKey, KeyID: "as-1", Algorithm: "ES256", Use: "sig"}
}

func (p *trustProvider) sign(claims map[string]any) string {
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: p.key, KeyID: "as-1"}}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		p.t.Fatal(err)
	}
	b, _ := json.Marshal(claims)
	obj, err := s.Sign(b)
	if err != nil {
		p.t.Fatal(err)
	}
	out, _ := obj.CompactSerialize()
	return out
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func (p *trustProvider) serve(w http.ResponseWriter, r *http.Request) {
	body := p.rec.record(r)
	p.mu.Lock()
	defer p.mu.Unlock()
	iface := p.Iface()
	switch strings.TrimPrefix(r.URL.Path, "/a2a/b1") {
	case "/.well-known/agent-card.json":
		card := delegationCard(p.Name, iface, iface+"/oauth", p.ScopeDesc)
		if p.Card != nil {
			card = p.Card(iface)
		}
		writeJSON(w, 200, card)
	case "/oauth/.well-known/oauth-authorization-server":
		md := map[string]any{
			"issuer": p.Issuer(), "device_authorization_endpoint": iface + "/oauth/device_authorization",
			"token_endpoint": iface + "/oauth/token", "jwks_uri": iface + "/oauth/jwks.json",
			"grant_types_supported": []string{"urn:ietf:params:oauth:grant-type:device_code", "refresh_token"},
		}
		if p.Metadata != nil {
			p.Metadata(md)
		}
		writeJSON(w, 200, md)
	case "/oauth/jwks.json":
		real, _ := json.Marshal(p.jwk())
		keys := append(append([]string(nil), p.JWKSExtra...), string(real))
		w.Header().Set("Content-Type", "application/jwk-set+json")
		fmt.Fprintf(w, `{"keys":[%s]}`, strings.Join(keys, ","))
	case "/oauth/device_authorization":
		writeJSON(w, 200, map[string]any{"device_code": "dc_secret", "user_code": "ABCD-EFGH",
			"verification_uri": p.srv.URL + "/login", "verification_uri_complete": p.srv.URL + "/login?code=ABCD-EFGH",
			"expires_in": 60, "interval": 1})
	case "/oauth/token":
		if p.Pending > 0 {
			p.Pending--
			writeJSON(w, 200, map[string]any{"error": "authorization_pending"})
			return
		}
		form, _ := parseForm(body)
		claims := map[string]any{"iss": p.Issuer(), "sub": "jane-1", "aud": iface, "client_id": form["client_id"],
			"scope": "orders:read", "grant_id": "g-1", "iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix()}
		if p.TokenIss != "" {
			claims["iss"] = p.TokenIss
		}
		if p.TokenPad > 0 {
			claims["pad"] = strings.Repeat("x", p.TokenPad)
		}
		writeJSON(w, 200, map[string]any{"token_type": "Bearer", "access_token": p.sign(claims), "refresh_token": "rt_secret",
			"expires_in": 3600, "scope": "orders:read"})
	case "/message:send":
		ts := p.ReceiptTS
		if ts == "" {
			ts = time.Now().UTC().Format(time.RFC3339)
		}
		rc := map[string]any{"grantId": "g-1", "user": "jane-1", "pa": issuerOf(r), "brand": iface,
			"scopesUsed": []string{"orders:read"}, "actions": []any{}, "ts": ts}
		msg := map[string]any{"messageId": "r-1", "contextId": "ctx-1", "role": "ROLE_AGENT",
			"parts": []any{map[string]any{"text": p.Reply}}}
		if r.Header.Get("X-A2A-User-Delegation") != "" {
			msg["metadata"] = map[string]any{"pact.receipt": map[string]any{"jws": p.sign(rc), "claims": rc}}
		}
		writeJSON(w, 200, map[string]any{"message": msg})
	default:
		http.NotFound(w, r)
	}
}

// issuerOf reads the iss of the request's PA JWT (the receipt's pa).
func issuerOf(r *http.Request) string {
	parts := strings.Split(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "), ".")
	if len(parts) != 3 {
		return ""
	}
	b, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var c struct {
		Iss string `json:"iss"`
	}
	json.Unmarshal(b, &c)
	return c.Iss
}

func parseForm(body string) (map[string]string, error) {
	v, err := url.ParseQuery(body)
	out := map[string]string{}
	for k := range v {
		out[k] = v.Get(k)
	}
	return out, err
}

// trustEnv is a profile registered with p (audience "aud-p").
func trustEnv(t *testing.T, p *trustProvider) *env {
	e := newEnv(t, "http://127.0.0.1:1")
	e.must("provider", "add", p.URL(), "--audience", "aud-p", "--json")
	return e
}

// noTerminalControls fails when out holds ESC, BEL or another C0/C1
// control byte other than newline and tab.
func noTerminalControls(t *testing.T, what, out string) {
	t.Helper()
	for i, r := range out {
		if (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
			t.Fatalf("%s holds control %U at byte %d:\n%q", what, r, i, out)
		}
	}
}
