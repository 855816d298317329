package demoprovider

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/pact-cli/pact/jwks"
)

// delegationHeader carries the delegation token on message:send (§5.5).
const delegationHeader = "X-A2A-User-Delegation"

// Lifetimes of the Delegated profile.
const (
	defaultDeviceTTL = 600 * time.Second // device_code expires_in (RFC 8628 §3.2)
	defaultInterval  = 5 * time.Second   // polling interval (RFC 8628 §3.2)
	slowDownStep     = 5 * time.Second   // added on slow_down (RFC 8628 §3.5)
	accessTokenTTL   = time.Hour         // §5.4: SHOULD be ≤ 1 h
	sessionTTL       = 30 * time.Minute  // the User's Provider session
	assertionTTL     = 2 * time.Minute   // the Brand's login assertion
	maxFormBody      = 64 << 10
	deviceCodeGrant  = "urn:ietf:params:oauth:grant-type:device_code"
	refreshGrant     = "refresh_token"
	userCodeAlphabet = "BCDFGHJKLMNPQRSTVWXZ" // RFC 8628 §6.1: no vowels
)

type deviceState int

const (
	devicePending deviceState = iota
	deviceApproved
	deviceDenied
	deviceUsed
)

// deviceAuth is one RFC 8628 device authorization.
type deviceAuth struct {
	deviceCode, userCode string
	brandID              string
	client               string   // the PA issuer (client_id)
	scopes               []string // requested
	expires              time.Time
	interval             time.Duration
	lastPoll             time.Time
	state                deviceState
	userID               string // Brand user who approved or denied
}

// grant is the one grant per (Brand user, personal agent, Brand) (§5.3);
// approvals add scopes to it.
type grant struct {
	id, brandID, userID, client string
	scopes                      []string
	revoked                     bool
}

type grantKey struct{ brandID, userID, client string }

// session is the User's login session with the Provider: which Brand user
// it is logged in as, per Brand.
type session struct {
	users   map[string]string // brandId → Brand user id
	csrf    string
	expires time.Time
}

// assertion is the Brand's single-use login assertion bound to a user_code.
type assertion struct {
	brandID, userCode, userID string
	expires                   time.Time
}

// delegation is a verified delegation token (§5.4).
type delegation struct {
	sub, client, grantID string
	scopes               []string
}

// authServer is the per-Brand OAuth 2.0 authorization server of §5: RFC
// 8414 metadata, RFC 8628 device authorization and token endpoints, the
// Provider's login callback and consent page, delegation tokens and
// receipts. All Brands share one ES256 signing key.
type authServer struct {
	s        *Server
	key      jose.JSONWebKey // private, with kid
	signer   jose.Signer     // typ JWT, for delegation tokens
	rsigner  jose.Signer     // for receipts
	ttl      time.Duration
	interval time.Duration

	mu         sync.Mutex
	devices    map[string]*deviceAuth // device_code →
	byUserCode map[string]*deviceAuth // normalized user_code →
	grants     map[grantKey]*grant
	grantsByID map[string]*grant
	refresh    map[string]string // refresh_token → grant id
	sessions   map[string]*session
	assertions map[string]*assertion
}

func newAuthServer(s *Server, cfg Config) (*authServer, error) {
	priv, err := providerSigningKey()
	if err != nil {
		return nil, fmt.Errorf("demoprovider: signing key: %w", err)
	}
	key := jose.JSONWebKey{Key: priv, Algorithm: string(jose.ES256), Use: "sig"}
	pub := key.Public()
	thumb, err := pub.Thumbprint(crypto.SHA256)
	if err != nil {
		return nil, err
	}
	key.KeyID = base64.RawURLEncoding.EncodeToString(thumb)
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return nil, err
	}
	rsigner, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, nil)
	if err != nil {
		return nil, err
	}
	as := &authServer{
		s: s, key: key, signer: signer, rsigner: rsigner,
		ttl: cfg.DeviceCodeTTL, interval: cfg.PollInterval,
		devices:    map[string]*deviceAuth{},
		byUserCode: map[string]*deviceAuth{},
		grants:     map[grantKey]*grant{},
		grantsByID: map[string]*grant{},
		refresh:    map[string]string{},
		sessions:   map[string]*session{},
		assertions: map[string]*assertion{},
	}
	if as.ttl <= 0 {
		as.ttl = defaultDeviceTTL
	}
	if as.interval <= 0 {
		as.interval = defaultInterval
	}
	return as, nil
}

// providerSigningKey is the Provider's ES256 key for delegation tokens and
// receipts. Like the Brands' card keys (brandKey) it is derived from a fixed
// label, so a restarted `pact demo serve` publishes the same key at its
// jwks_uri and the receipts archived before the restart still verify. Grants
// are not kept across a restart (the dead-grant flow relies on that). A demo
// key, public by construction: never use the scheme for real keys.
func providerSigningKey() (*ecdsa.PrivateKey, error) {
	for i := 0; ; i++ {
		d := sha256.Sum256(fmt.Appendf(nil, "pact demo provider signing key v1 %d", i))
		// d ≥ the curve order (chance about 2⁻³²) is refused: try the next.
		if k, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), d[:]); err == nil || i == 8 {
			return k, err
		}
	}
}

func (as *authServer) issuer(b *brandDef) string  { return as.s.interfaceURL(b) + "/oauth" }
func (as *authServer) jwksURI(b *brandDef) string { return as.issuer(b) + "/jwks.json" }

// serveMetadata is the RFC 8414 document at the card's oauth2MetadataUrl
// (§5.1); its jwks_uri publishes the key of tokens and receipts.
func (as *authServer) serveMetadata(w http.ResponseWriter, _ *http.Request, b *brandDef) {
	scopes := make([]string, 0, len(b.scopes))
	for _, sc := range b.scopes {
		scopes = append(scopes, sc.ID)
	}
	iface := as.s.interfaceURL(b)
	writeJSON(w, http.StatusOK, "application/json", map[string]any{
		"issuer":                                as.issuer(b),
		"device_authorization_endpoint":         iface + "/oauth/device_authorization",
		"token_endpoint":                        iface + "/oauth/token",
		"jwks_uri":                              as.jwksURI(b),
		"grant_types_supported":                 []string{deviceCodeGrant, refreshGrant},
		"scopes_supported":                      scopes,
		"response_types_supported":              []string{},
		"token_endpoint_auth_methods_supported": []string{"none"},
	})
}

// serveJWKS publishes the Provider's public signing key (jwks.Handler).
func (as *authServer) serveJWKS(w http.ResponseWriter, r *http.Request) {
	uri := as.s.url + r.URL.Path
	jwks.Handler(strings.TrimSuffix(uri, "/jwks.json"), uri, func() (jose.JSONWebKeySet, error) {
		return jose.JSONWebKeySet{Keys: []jose.JSONWebKey{as.key}}, nil
	}).ServeHTTP(w, r)
}

// readForm parses an application/x-www-form-urlencoded body (capped).
func readForm(w http.ResponseWriter, r *http.Request) (url.Values, bool) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBody)
	if err := r.ParseForm(); err != nil {
		writeOAuthError(w, http.StatusBadRequest, "invalid_request", "malformed form body")
		return nil, false
	}
	return r.PostForm, true
}

// checkClient enforces client_id == PA JWT iss (§5.3). required says
// whether client_id must be present.
func checkClient(w http.ResponseWriter, form url.Values, id paIdentity, required bool) bool {
	cid, ok := form["client_id"]
	if (!ok && !required) || (ok && len(cid) == 1 && cid[0] == id.Issuer) {
		return true
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="a2a"`)
	writeOAuthError(w, http.StatusUnauthorized, "invalid_client", "client_id must equal the personal agent's issuer")
	return false
}

// newUserCode returns an RFC 8628 §6.1 user code "XXXX-XXXX".
func newUserCode() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	out := make([]byte, 0, 9)
	for i, c := range b {
		if i == 4 {
			out = append(out, '-')
		}
		out = append(out, userCodeAlphabet[int(c)%len(userCodeAlphabet)])
	}
	return string(out)
}

// normUserCode makes user code comparison case- and dash-insensitive.
func normUserCode(c string) string {
	return strings.ToUpper(strings.NewReplacer("-", "", " ", "").Replace(c))
}

// newDevice registers a device authorization for client and scopes.
func (as *authServer) newDevice(b *brandDef, client string, scopes []string) *deviceAuth {
	d := &deviceAuth{
		deviceCode: randomID("dc_"),
		userCode:   newUserCode(),
		brandID:    b.id,
		client:     client,
		scopes:     scopes,
		expires:    as.s.now().Add(as.ttl),
		interval:   as.interval,
	}
	as.mu.Lock()
	as.devices[d.deviceCode] = d
	as.byUserCode[normUserCode(d.userCode)] = d
	as.mu.Unlock()
	return d
}

func (as *authServer) verificationURI(b *brandDef) string {
	return as.s.interfaceURL(b) + "/oauth/device"
}

func (as *authServer) verificationURIComplete(b *brandDef, d *deviceAuth) string {
	return as.verificationURI(b) + "?user_code=" + url.QueryEscape(d.userCode)
}

// parseScopes splits a scope parameter and checks every id is one of the
// Brand's (§5.2); it returns the ids in request order without duplicates.
func parseScopes(b *brandDef, scope string) ([]string, bool) {
	var out []string
	for _, sc := range strings.Fields(scope) {
		if !b.hasScope(sc) {
			return nil, false
		}
		if !slices.Contains(out, sc) {
			out = append(out, sc)
		}
	}
	return out, len(out) > 0
}

// serveDeviceAuthorization is POST {deviceAuthorizationUrl} (RFC 8628 §3.1–
// 3.2 as §5.3 profiles it). The PA JWT has been verified.
func (as *authServer) serveDeviceAuthorization(w http.ResponseWriter, r *http.Request, b *brandDef, id paIdentity) {
	form, ok := readForm(w, r)
	if !ok || !checkClient(w, form, id, true) {
		return
	}
	scopes, ok := parseScopes(b, form.Get("scope"))
	if !ok && as.s.fault("invalid-scope-ignored") {
		scopes, ok = []string{b.scopes[0].ID}, true
	}
	if !ok {
		writeOAuthError(w, http.StatusBadRequest, "invalid_scope", "scope must list scope ids from the Agent Card")
		return
	}
	d := as.newDevice(b, id.Issuer, scopes)
	writeJSON(w, http.StatusOK, "application/json", map[string]any{
		"device_code":               d.deviceCode,
		"user_code":                 d.userCode,
		"verification_uri":          as.verificationURI(b),
		"verification_uri_complete": as.verificationURIComplete(b, d),
		"expires_in":                int(as.ttl / time.Second),
		"interval":                  int(as.interval / time.Second),
	})
}

// serveToken is POST {tokenUrl}: the device_code grant (RFC 8628 §3.4–3.5)
// and the refresh_token grant (RFC 6749 §6). The PA JWT has been verified.
func (as *authServer) serveToken(w http.ResponseWriter, r *http.Request, b *brandDef, id paIdentity) {
	form, ok := readForm(w, r)
	if !ok || !checkClient(w, form, id, false) {
		return
	}
	switch form.Get("grant_type") {
	case deviceCodeGrant:
		as.deviceCodeToken(w, b, id, form.Get("device_code"))
	case refreshGrant:
		as.refreshToken(w, b, id, form)
	case "":
		writeOAuthError(w, http.StatusBadRequest, "invalid_request", "grant_type is required")
	default:
		writeOAuthError(w, http.StatusBadRequest, "unsupported_grant_type", "")
	}
}

func (as *authServer) deviceCodeToken(w http.ResponseWriter, b *brandDef, id paIdentity, code string) {
	now := as.s.now()
	as.mu.Lock()
	d := as.devices[code]
	if d == nil || d.brandID != b.id || d.client != id.Issuer || d.state == deviceUsed {
		as.mu.Unlock()
		writeOAuthError(w, http.StatusBadRequest, "invalid_grant", "unknown or used device_code")
		return
	}
	if !now.Before(d.expires) {
		as.mu.Unlock()
		writeOAuthError(w, http.StatusBadRequest, "expired_token", "")
		return
	}
	switch d.state {
	case deviceDenied:
		as.mu.Unlock()
		writeOAuthError(w, http.StatusBadRequest, "access_denied", "")
		return
	case devicePending:
		last := d.lastPoll
		d.lastPoll = now
		if !last.IsZero() && now.Sub(last) < d.interval {
			d.interval += slowDownStep
			as.mu.Unlock()
			writeOAuthError(w, http.StatusBadRequest, "slow_down", "")
			return
		}
		as.mu.Unlock()
		writeOAuthError(w, http.StatusBadRequest, "authorization_pending", "")
		return
	}
	d.state = deviceUsed
	g := as.grants[grantKey{b.id, d.userID, d.client}]
	rt := randomID("rt_")
	as.refresh[rt] = g.id
	scopes := slices.Clone(g.scopes)
	as.mu.Unlock()
	as.writeToken(w, b, g, scopes, rt)
}

func (as *authServer) refreshToken(w http.ResponseWriter, b *brandDef, id paIdentity, form url.Values) {
	rt := form.Get("refresh_token")
	as.mu.Lock()
	g := as.grantsByID[as.refresh[rt]]
	if rt == "" || g == nil || g.revoked || g.brandID != b.id || g.client != id.Issuer {
		as.mu.Unlock()
		writeOAuthError(w, http.StatusBadRequest, "invalid_grant", "unknown or revoked refresh_token")
		return
	}
	scopes := slices.Clone(g.scopes)
	as.mu.Unlock()
	if s := form.Get("scope"); s != "" {
		want := strings.Fields(s)
		for _, sc := range want {
			if !slices.Contains(scopes, sc) {
				writeOAuthError(w, http.StatusBadRequest, "invalid_scope", "scope exceeds the grant")
				return
			}
		}
		scopes = want
	}
	as.writeToken(w, b, g, scopes, rt)
}

// writeToken signs a delegation token (§5.4) and writes the token response
// (§5.3).
func (as *authServer) writeToken(w http.ResponseWriter, b *brandDef, g *grant, scopes []string, rt string) {
	now := as.s.now()
	claims := map[string]any{
		"iss":       as.issuer(b),
		"aud":       as.tokenAudience(b),
		"sub":       g.userID,
		"client_id": g.client,
		"scope":     strings.Join(scopes, " "),
		"grant_id":  g.id,
		"iat":       now.Unix(),
		"exp":       now.Add(accessTokenTTL).Unix(),
		"jti":       randomID(""),
	}
	tok, err := jwt.Signed(as.signer).Claims(claims).Serialize()
	if err != nil {
		writeOAuthError(w, http.StatusInternalServerError, "server_error", "")
		return
	}
	writeJSON(w, http.StatusOK, "application/json", map[string]any{
		"token_type":    "Bearer",
		"access_token":  tok,
		"refresh_token": rt,
		"expires_in":    int(accessTokenTTL / time.Second),
		"scope":         strings.Join(scopes, " "),
	})
}

// approve records the User's consent on a device authorization in the one
// grant for (user, PA, Brand) (§5.3): the scopes this consent asked about
// become exactly what the User left checked (an unchecked scope is taken
// back), and scopes approved earlier and not asked about now are kept, so
// a step-up adds to the grant.
func (as *authServer) approve(d *deviceAuth, userID string, scopes []string) {
	as.mu.Lock()
	defer as.mu.Unlock()
	if d.state != devicePending {
		return
	}
	d.state, d.userID = deviceApproved, userID
	k := grantKey{d.brandID, userID, d.client}
	g := as.grants[k]
	if g == nil || g.revoked {
		g = &grant{id: randomID("a2agrant_"), brandID: d.brandID, userID: userID, client: d.client}
		as.grants[k] = g
		as.grantsByID[g.id] = g
	}
	kept := g.scopes[:0:0]
	for _, sc := range g.scopes {
		if !slices.Contains(d.scopes, sc) {
			kept = append(kept, sc)
		}
	}
	for _, sc := range scopes {
		if !slices.Contains(kept, sc) {
			kept = append(kept, sc)
		}
	}
	g.scopes = kept
}

func (as *authServer) deny(d *deviceAuth, userID string) {
	as.mu.Lock()
	defer as.mu.Unlock()
	if d.state == devicePending {
		d.state, d.userID = deviceDenied, userID
	}
}

// verifyDelegation checks the X-A2A-User-Delegation header per §5.5: an
// ES256 token signed by this Provider's key, iss this Brand's authorization
// server, aud exactly this interface URL, not expired (30 s skew), client_id
// equal to the PA JWT's iss, and a live grant for that sub and client.
func (as *authServer) verifyDelegation(header string, b *brandDef, id paIdentity) (*delegation, error) {
	raw := bearer(header)
	if raw == "" {
		return nil, reject("no bearer delegation token")
	}
	sig, err := jose.ParseSignedCompact(raw, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil || len(sig.Signatures) != 1 || sig.Signatures[0].Header.KeyID != as.key.KeyID {
		return nil, reject("delegation token: bad JWS")
	}
	payload, err := sig.Verify(as.key.Public())
	if err != nil {
		return nil, reject("delegation token: signature")
	}
	var c struct {
		Iss      string           `json:"iss"`
		Aud      json.RawMessage  `json:"aud"`
		Sub      string           `json:"sub"`
		ClientID string           `json:"client_id"`
		Scope    string           `json:"scope"`
		GrantID  string           `json:"grant_id"`
		Iat      *jwt.NumericDate `json:"iat"`
		Exp      *jwt.NumericDate `json:"exp"`
	}
	if err := json.Unmarshal(payload, &c); err != nil {
		return nil, reject("delegation token: claims")
	}
	var aud string
	anyBrand := as.s.fault("token-any-brand")
	if json.Unmarshal(c.Aud, &aud) != nil || (aud != as.tokenAudience(b) && !anyBrand) {
		return nil, reject("delegation token: aud")
	}
	if (c.Iss != as.issuer(b) && !anyBrand) || c.Sub == "" || c.Iat == nil || c.Exp == nil {
		return nil, reject("delegation token: iss/sub/iat/exp")
	}
	if !as.s.now().Before(c.Exp.Time().Add(clockSkew)) {
		return nil, reject("delegation token: expired")
	}
	if c.ClientID != id.Issuer {
		return nil, reject("delegation token: client_id is not the PA issuer")
	}
	as.mu.Lock()
	g := as.grantsByID[c.GrantID]
	live := g != nil && !g.revoked && (g.brandID == b.id || anyBrand) && g.userID == c.Sub && g.client == c.ClientID
	as.mu.Unlock()
	if !live {
		return nil, reject("delegation token: grant revoked or unknown")
	}
	return &delegation{sub: c.Sub, client: c.ClientID, grantID: c.GrantID, scopes: strings.Fields(c.Scope)}, nil
}

// receiptClaims are the claims of a §5.6 receipt, in the spec's order.
type receiptClaims struct {
	GrantID    string   `json:"grantId"`
	User       string   `json:"user"`
	PA         string   `json:"pa"`
	Brand      string   `json:"brand"`
	ScopesUsed []string `json:"scopesUsed"`
	Actions    []action `json:"actions"`
	TS         string   `json:"ts"`
}

// receipt signs the §5.6 receipt of a turn served under del: the compact
// JWS of exactly the claims JSON, with the token key (kid in the header).
// The result is the value of metadata["pact.receipt"].
func (as *authServer) receipt(b *brandDef, del *delegation, out outcome) (map[string]any, error) {
	rc := receiptClaims{
		GrantID:    del.grantID,
		User:       del.sub,
		PA:         del.client,
		Brand:      as.s.interfaceURL(b),
		ScopesUsed: append([]string{}, out.scopesUsed...),
		Actions:    append([]action{}, out.actions...),
		TS:         as.s.now().UTC().Format(time.RFC3339),
	}
	claims, err := json.Marshal(rc)
	if err != nil {
		return nil, err
	}
	obj, err := as.rsigner.Sign(claims)
	if err != nil {
		return nil, err
	}
	compact, err := obj.CompactSerialize()
	if err != nil {
		return nil, err
	}
	if as.s.fault("receipt-claims-mismatch") {
		shown := rc
		shown.User = "someone-else"
		claims, _ = json.Marshal(shown)
	}
	return map[string]any{"jws": compact, "claims": json.RawMessage(claims)}, nil
}

// stepUpLink starts a device authorization for the missing scopes on behalf
// of the conversation's personal agent and returns its
// verification_uri_complete (§5.5). Approving it adds the scopes to the
// grant, so a refresh (or the PA's own new §5.3 run) yields them.
func (as *authServer) stepUpLink(b *brandDef, owner paIdentity, missing []string) (string, error) {
	d := as.newDevice(b, owner.Issuer, slices.Clone(missing))
	return as.verificationURIComplete(b, d), nil
}

// RevokeGrant revokes the grant with this id (test knob for §5.5 "grant not
// revoked"). It reports whether the grant existed.
func (s *Server) RevokeGrant(grantID string) bool {
	s.as.mu.Lock()
	defer s.as.mu.Unlock()
	g := s.as.grantsByID[grantID]
	if g == nil {
		return false
	}
	g.revoked = true
	return true
}
