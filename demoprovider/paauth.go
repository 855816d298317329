package demoprovider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/pact-cli/pact/jwks"
)

// Limits of the personal-agent JWT, per PACT §3.2.
const (
	clockSkew      = 30 * time.Second  // allowed clock skew
	maxPALifetime  = 300 * time.Second // exp - iat at most
	discoveryTTL   = 5 * time.Minute   // how long an OIDC discovery answer is reused
	maxMetadataLen = 64 << 10          // cap on an openid-configuration body
)

// paAlgs are the only algorithms a personal-agent JWT may use (§3.2).
var paAlgs = []jose.SignatureAlgorithm{jose.ES256, jose.RS256}

// newKeySource is the PA key fetcher: a jwks.Cache on client and clock now.
func newKeySource(client *http.Client, now func() time.Time) keySource {
	c := jwks.NewCache(client)
	c.Now = now
	return c
}

// keySource finds a personal agent's public key by JWKS URI and kid. The
// production implementation is *jwks.Cache (fetch over HTTP, cache, refetch
// once on an unknown kid).
type keySource interface {
	Key(ctx context.Context, jwksURI, kid string) (*jose.JSONWebKey, error)
}

// paIdentity is an authenticated caller: the User is the pair (Issuer, Sub)
// per §3.2.
type paIdentity struct {
	Issuer string
	Sub    string
}

// paClaims is the claim set read from a PA JWT. aud is kept raw to insist on
// the one-string form (§3.2).
type paClaims struct {
	Iss string           `json:"iss"`
	Sub string           `json:"sub"`
	Aud json.RawMessage  `json:"aud"`
	Iat *jwt.NumericDate `json:"iat"`
	Exp *jwt.NumericDate `json:"exp"`
	Nbf *jwt.NumericDate `json:"nbf"`
}

// paVerifier verifies personal-agent JWTs per §3.2 under the Provider's
// registration policy (§3.1).
type paVerifier struct {
	audience   string
	policy     Policy
	registered map[string]Registration
	keys       keySource
	client     *http.Client
	now        func() time.Time

	mu        sync.Mutex
	discovery map[string]discovered // issuer → jwks_uri found by OIDC discovery
	faults    faultSet              // deliberate mistakes (faults.go)
}

type discovered struct {
	jwksURI string
	at      time.Time
}

// errUnauthenticated is the single, deliberately vague failure of verify;
// the detail is only for tests and never reaches the wire (§3.4).
type authError struct{ reason string }

func (e *authError) Error() string { return "pa jwt rejected: " + e.reason }

func reject(format string, args ...any) error {
	return &authError{reason: fmt.Sprintf(format, args...)}
}

// bearer extracts the token of an "Authorization: Bearer <token>" style
// header value, or "" when the value is not a Bearer credential.
func bearer(v string) string {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(v), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(tok)
}

// verify checks the PA JWT in the request's Authorization header per §3.2:
// alg ES256/RS256, issuer registered (or discoverable under the Open policy)
// and enabled, signature by a key of its JWKS, aud == audience as one string,
// sub present, iat present and not more than 30 s ahead, exp present, at most
// 300 s after iat and not passed (30 s skew). Any failure is an *authError.
func (v *paVerifier) verify(ctx context.Context, r *http.Request) (paIdentity, error) {
	raw := bearer(r.Header.Get("Authorization"))
	if raw == "" {
		return paIdentity{}, reject("no bearer token")
	}
	if id, ok := v.faultAccept(raw); ok {
		return id, nil
	}
	sig, err := jose.ParseSignedCompact(raw, paAlgs)
	if err != nil {
		return paIdentity{}, reject("parse: %v", err)
	}
	if len(sig.Signatures) != 1 {
		return paIdentity{}, reject("want exactly one signature")
	}
	hdr := sig.Signatures[0].Header
	var unverified paClaims
	if err := json.Unmarshal(sig.UnsafePayloadWithoutVerification(), &unverified); err != nil {
		return paIdentity{}, reject("claims: %v", err)
	}
	jwksURI, err := v.jwksURIFor(ctx, unverified.Iss)
	if err != nil {
		return paIdentity{}, err
	}
	key, err := v.keys.Key(ctx, jwksURI, hdr.KeyID)
	if err != nil {
		return paIdentity{}, reject("key %q: %v", hdr.KeyID, err)
	}
	payload, err := sig.Verify(key)
	if err != nil {
		return paIdentity{}, reject("signature: %v", err)
	}
	var c paClaims
	if err := json.Unmarshal(payload, &c); err != nil {
		return paIdentity{}, reject("claims: %v", err)
	}
	if c.Iss != unverified.Iss {
		return paIdentity{}, reject("iss changed")
	}
	if err := v.checkClaims(c); err != nil {
		return paIdentity{}, err
	}
	return paIdentity{Issuer: c.Iss, Sub: c.Sub}, nil
}

// checkClaims applies the time, audience and subject rules of §3.2.
func (v *paVerifier) checkClaims(c paClaims) error {
	var aud string
	if len(c.Aud) == 0 || json.Unmarshal(c.Aud, &aud) != nil {
		if !v.faultAud(c.Aud) {
			return reject("aud must be one string")
		}
		aud = v.audience
	}
	if aud != v.audience {
		return reject("aud mismatch")
	}
	if c.Sub == "" && !v.faults.has("sub-optional") {
		return reject("sub missing")
	}
	if c.Iat == nil {
		return reject("iat missing")
	}
	if c.Exp == nil {
		return reject("exp missing")
	}
	now := v.now()
	iat, exp := c.Iat.Time(), c.Exp.Time()
	if iat.After(now.Add(clockSkew)) && !v.faults.has("iat-future-accepted") {
		return reject("iat in the future")
	}
	if exp.Sub(iat) > maxPALifetime && !v.faults.has("lifetime-unchecked") {
		return reject("lifetime over 300 s")
	}
	if !now.Before(exp.Add(clockSkew)) && !v.faults.has("expired-accepted") {
		return reject("expired")
	}
	if c.Nbf != nil && now.Add(clockSkew).Before(c.Nbf.Time()) {
		return reject("not yet valid")
	}
	return nil
}

// jwksURIFor resolves the JWKS URI of issuer under the registration policy
// (§3.1): a registration wins; a disabled one is refused; under AllowList an
// unregistered issuer is refused; under Open the jwks_uri comes from OIDC
// discovery at {iss}/.well-known/openid-configuration.
func (v *paVerifier) jwksURIFor(ctx context.Context, issuer string) (string, error) {
	if issuer == "" {
		return "", reject("iss missing")
	}
	if reg, ok := v.registered[issuer]; ok {
		if reg.Disabled {
			return "", reject("issuer disabled")
		}
		return reg.JWKSURI, nil
	}
	if v.policy != Open {
		return "", reject("issuer not registered")
	}
	v.mu.Lock()
	d, ok := v.discovery[issuer]
	v.mu.Unlock()
	if ok && v.now().Sub(d.at) < discoveryTTL {
		return d.jwksURI, nil
	}
	uri, err := v.discover(ctx, issuer)
	if err != nil {
		return "", reject("discovery: %v", err)
	}
	v.mu.Lock()
	v.discovery[issuer] = discovered{jwksURI: uri, at: v.now()}
	v.mu.Unlock()
	return uri, nil
}

// discover fetches {issuer}/.well-known/openid-configuration and returns its
// jwks_uri. The document's issuer must equal issuer exactly.
func (v *paVerifier) discover(ctx context.Context, issuer string) (string, error) {
	u, err := url.Parse(issuer)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", errors.New("issuer is not an http(s) URL")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, jwks.DiscoveryURL(issuer), nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := v.client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("status %d", resp.StatusCode)
	}
	var doc jwks.Discovery
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxMetadataLen)).Decode(&doc); err != nil {
		return "", err
	}
	if doc.Issuer != issuer {
		return "", errors.New("issuer mismatch in openid-configuration")
	}
	if doc.JWKSURI == "" {
		return "", errors.New("no jwks_uri")
	}
	return doc.JWKSURI, nil
}
