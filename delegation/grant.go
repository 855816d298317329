package delegation

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/pact-cli/pact/deviceflow"
	"github.com/pact-cli/pact/discovery"
	"github.com/pact-cli/pact/iostreams"
	"github.com/pact-cli/pact/secrets"
	"github.com/pact-cli/pact/store"
)

// Grant is the public record of one delegation (PACT §5.3–§5.5), one per
// interface URL. It holds no secret: the access and refresh tokens are kept
// in the secret store. JSON names follow the CLI contract's `grants` item.
type Grant struct {
	// Brand is the card URL the grant was obtained through.
	Brand string `json:"brand"`
	// InterfaceURL is the token's aud; the token is sent nowhere else.
	InterfaceURL string `json:"interfaceUrl"`
	// Scopes are the granted scope ids (the token's scope claim).
	Scopes  []string `json:"scopes"`
	GrantID string   `json:"grantId"`
	// ExpiresAt is the current access token's exp.
	ExpiresAt time.Time `json:"expiresAt"`
	// Refreshable is true when a refresh token is stored.
	Refreshable bool `json:"refreshable"`
	// Subject is the User's id at the Brand (the token's sub), which
	// receipts name as "user".
	Subject string `json:"sub"`
	// ClientID is the personal agent issuer the token was issued to.
	ClientID string `json:"clientId"`
	// Issuer and JWKSURI come from the authorization server's RFC 8414
	// metadata at MetadataURL; TokenURL is where refreshes go.
	Issuer      string `json:"issuer"`
	JWKSURI     string `json:"jwksUri"`
	TokenURL    string `json:"tokenUrl"`
	MetadataURL string `json:"metadataUrl"`
	// Dead is set (with DeadSince, UTC) when the token was refused or
	// expired and could not be refreshed: turns then go identity-only until
	// `pact login` stores a new grant. See MarkDead.
	Dead      bool       `json:"dead,omitempty"`
	DeadSince *time.Time `json:"deadSince,omitempty"`
	// IssuedAt is when the grant was first issued (UTC): the iat of its
	// first access token, kept across refreshes and step-ups of the same
	// grantId; zero for grants stored before it was kept. A receipt's ts
	// before it is not a receipt of a turn under this grant (PACT §5.6).
	IssuedAt time.Time `json:"issuedAt,omitzero"`
}

// CheckEndpoints applies check, the endpoint-origin rule of the Provider
// the grant's interface URL belongs to (profile.BoundMinter.Check), to the
// URLs the grant keeps from its login: its jwks_uri, which verifies the
// Brand's tokens and receipts (PACT §5.4, §5.6), its token endpoint and the
// authorization server metadata. Login applied the same rule before it
// stored them; a grant put back by a restore, or edited in the database,
// gets it again here. Errors: *EndpointError.
func (g *Grant) CheckEndpoints(check func(what, url string) error) error {
	for _, ep := range []struct{ what, url string }{
		{"jwks_uri", g.JWKSURI},
		{"token endpoint", g.TokenURL},
		{"authorization server metadata", g.MetadataURL},
	} {
		if ep.url == "" {
			continue
		}
		if err := check(ep.what, ep.url); err != nil {
			return &EndpointError{InterfaceURL: g.InterfaceURL, What: ep.what, URL: ep.url, Err: err}
		}
	}
	return nil
}

// EndpointError refuses a stored grant one of whose endpoints is not under
// the registration of its Provider, which login would have refused
// (Grant.CheckEndpoints). It unwraps to the rule's error
// (profile.ErrUntrustedEndpoint).
type EndpointError struct {
	InterfaceURL string // the grant's
	What         string // "jwks_uri", "token endpoint", …
	URL          string // the endpoint the grant names
	Err          error
}

func (e *EndpointError) Error() string {
	return fmt.Sprintf("the stored grant for %s names a %s (%s) that is not under its Provider's registration, which login refuses; "+
		"pact will not use this grant: log in to the Brand again (`pact logout`, then `pact login`); nothing was sent", e.InterfaceURL, e.What, e.URL)
}

func (e *EndpointError) Unwrap() error { return e.Err }

// HasScopes reports whether every id in want was granted.
func (g *Grant) HasScopes(want ...string) bool {
	for _, w := range want {
		found := false
		for _, s := range g.Scopes {
			if s == w {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// Store keeps Grant records, keyed by interface URL. Get reports
// ok=false when there is none. DBStore implements it.
type Store interface {
	Get(interfaceURL string) (g Grant, ok bool, err error)
	Put(g Grant) error
	Delete(interfaceURL string) error
	List() ([]Grant, error)
}

// Secrets is where the tokens live (the secrets package's Store satisfies
// it). Get reports a missing entry with an error matching
// secrets.ErrNotFound or fs.ErrNotExist; Delete of a missing key is no error.
type Secrets interface {
	Get(key string) (string, error)
	Set(key, value string) error
	Delete(key string) error
}

func isNotFound(err error) bool {
	return errors.Is(err, secrets.ErrNotFound) || errors.Is(err, fs.ErrNotExist)
}

// DBStore is a Store in the User's store (store.Grants). Each grant is
// kept as its JSON document, so fields added to Grant need no migration.
type DBStore struct {
	DB store.Grants
}

// Get returns the grant for interfaceURL.
func (d DBStore) Get(interfaceURL string) (Grant, bool, error) {
	data, ok, err := d.DB.Grant(context.Background(), interfaceURL)
	if err != nil || !ok {
		return Grant{}, false, err
	}
	var g Grant
	if err := json.Unmarshal(data, &g); err != nil {
		return Grant{}, false, fmt.Errorf("the stored grant for %s is damaged (%v); `pact logout` and log in again", interfaceURL, err)
	}
	g.normalise()
	return g, true, nil
}

// Put adds or replaces the grant for g.InterfaceURL.
func (d DBStore) Put(g Grant) error {
	data, err := json.Marshal(g)
	if err != nil {
		return err
	}
	return d.DB.PutGrant(context.Background(), g.InterfaceURL, g.Brand, data)
}

// Delete removes the grant for interfaceURL (absent is no error).
func (d DBStore) Delete(interfaceURL string) error {
	return d.DB.DeleteGrant(context.Background(), interfaceURL)
}

// List returns every grant, sorted by brand then interface URL. A damaged
// document is an error naming it; the others are still returned.
func (d DBStore) List() ([]Grant, error) {
	docs, err := d.DB.Grants(context.Background())
	if err != nil {
		return nil, err
	}
	out := make([]Grant, 0, len(docs))
	var errs []error
	for _, data := range docs {
		var g Grant
		if err := json.Unmarshal(data, &g); err != nil {
			errs = append(errs, fmt.Errorf("a stored grant is damaged: %v", err))
			continue
		}
		g.normalise()
		out = append(out, g)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Brand != out[j].Brand {
			return out[i].Brand < out[j].Brand
		}
		return out[i].InterfaceURL < out[j].InterfaceURL
	})
	return out, errors.Join(errs...)
}

// ErrNoGrant means no delegation is stored for the interface URL.
var ErrNoGrant = errors.New("no delegation stored for this brand")

// ErrInvalidToken is what a send callback wraps when message:send answered
// 401 with WWW-Authenticate error="invalid_token" (PACT §5.5).
var ErrInvalidToken = errors.New("the Provider no longer accepts the permission given to this personal agent")

// LoginRequiredError means the delegation cannot be used or renewed; the
// User must run `pact login` again. It matches ErrLoginRequired.
type LoginRequiredError struct {
	Brand        string
	InterfaceURL string
	Reason       string
	Scopes       []string // the grant's scopes, to ask for again
	// HTTPStatus is the status of the response that refused the token
	// (401 for a message:send refusal, PACT §5.5); 0 when no response did
	// (the token expired locally).
	HTTPStatus int
	// BrandName is the card's name, when the caller knows it: the Brand is
	// named "Name (host)" rather than by its card URL.
	BrandName string
	// Arg is the Brand as the User named it (`pact send ARG`), for the
	// hint; "" names it by its card URL.
	Arg string
}

// ErrLoginRequired matches every *LoginRequiredError.
var ErrLoginRequired = errors.New("login required")

func (e *LoginRequiredError) Error() string {
	return fmt.Sprintf("%s; run `%s` again", e.What(), e.Login())
}

// What says what happened, in plain words, without the command to run.
func (e *LoginRequiredError) What() string {
	return fmt.Sprintf("the delegation for %s is no longer usable (%s)", e.label(), e.Reason)
}

// Login is the `pact login` command that delegates again, each word
// shell-quoted (the scopes came from the Brand's server).
func (e *LoginRequiredError) Login() string {
	brand := e.Arg
	if brand == "" {
		brand = discovery.BrandArg(e.Brand)
	}
	if brand == "" {
		brand = e.InterfaceURL
	}
	words := []string{"pact", "login", brand}
	for _, sc := range e.Scopes {
		words = append(words, "--scope", sc)
	}
	return iostreams.CommandHint(words...)
}

// label names the Brand as the tables do, "Name (host)"; the host alone
// when the name is unknown.
func (e *LoginRequiredError) label() string {
	where := e.Brand
	if where == "" {
		where = e.InterfaceURL
	}
	if u, err := url.Parse(where); err == nil && u.Host != "" {
		where = u.Host
	}
	if e.BrandName == "" {
		return where
	}
	return e.BrandName + " (" + where + ")"
}

// Is makes errors.Is(err, ErrLoginRequired) true.
func (e *LoginRequiredError) Is(target error) bool { return target == ErrLoginRequired }

// IsInvalidTokenChallenge reports whether a WWW-Authenticate header value
// carries error="invalid_token" (PACT §5.5, RFC 6750 §3).
func IsInvalidTokenChallenge(wwwAuthenticate string) bool {
	s := strings.ToLower(wwwAuthenticate)
	i := strings.Index(s, "error")
	for i >= 0 {
		rest := strings.TrimLeft(s[i+len("error"):], " ")
		if strings.HasPrefix(rest, "=") {
			v := strings.TrimLeft(rest[1:], " ")
			v = strings.TrimPrefix(v, `"`)
			if strings.HasPrefix(v, "invalid_token") {
				return true
			}
		}
		j := strings.Index(s[i+1:], "error")
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

// secretKey names a token entry: prefix + "delegation/" + a short hash of
// the interface URL + "/" + kind ("access" or "refresh").
func secretKey(prefix, interfaceURL, kind string) string {
	sum := sha256.Sum256([]byte(interfaceURL))
	return prefix + "delegation/" + hex.EncodeToString(sum[:12]) + "/" + kind
}

// Manager stores, verifies, refreshes and hands out delegation tokens.
type Manager struct {
	Store   Store
	Secrets Secrets
	// Keys finds the authorization server's signing keys (a *jwks.Cache).
	Keys KeySource
	// Flow refreshes tokens; its ClientID must be ClientID.
	Flow *deviceflow.Client
	// ClientID is this profile's personal-agent issuer.
	ClientID string
	// SecretPrefix is prepended to every secret key (e.g. "default/").
	SecretPrefix string
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// RefreshBefore is how long before exp a token is refreshed (zero: 2 min).
	RefreshBefore time.Duration
	// CheckEndpoint is the endpoint-origin rule of the Provider the grants
	// are used with (profile.BoundMinter.Check): Grant refuses a stored
	// grant whose endpoints fail it (Grant.CheckEndpoints). nil: not
	// checked.
	CheckEndpoint func(what, url string) error
}

func (m *Manager) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

func (m *Manager) refreshBefore() time.Duration {
	if m.RefreshBefore > 0 {
		return m.RefreshBefore
	}
	return 2 * time.Minute
}

// Origin says where a token came from: the card and its RFC 8414 metadata.
type Origin struct {
	Brand        string // card URL
	InterfaceURL string
	MetadataURL  string
	Metadata     *deviceflow.Metadata
}

// Accept verifies tok's access token (VerifyToken against the metadata's
// issuer and jwks_uri, aud = o.InterfaceURL, client_id = m.ClientID) and
// stores it: tokens in the secret store, the Grant in the state store,
// replacing any earlier grant for that interface URL (a step-up's new token
// replaces the old one). The granted scopes are the token's scope claim.
func (m *Manager) Accept(ctx context.Context, o Origin, tok *deviceflow.Token) (*Grant, error) {
	if o.Metadata == nil {
		return nil, errors.New("delegation: Accept needs the authorization server metadata")
	}
	if tok == nil || tok.AccessToken == "" {
		return nil, errors.New("delegation: no access token to store")
	}
	// Both tokens must fit the secret store before anything is kept, with
	// a message that says what happened (the limit is the same in every
	// keyring: secrets.MaxTotal).
	for _, t := range []struct {
		what string
		v    deviceflow.Secret
	}{{"access token", tok.AccessToken}, {"refresh token", tok.RefreshToken}} {
		if len(t.v) > secrets.MaxTotal {
			return nil, fmt.Errorf("the Brand issued a delegation %s of %d KiB, more than the %d KiB pact can keep in any keyring; nothing was stored, tell the Brand: %w",
				t.what, (len(t.v)+1023)>>10, secrets.MaxTotal>>10, secrets.ErrTooLarge)
		}
	}
	claims, err := VerifyToken(ctx, m.Keys, tok.AccessToken.Reveal(), Expect{
		Issuer:   o.Metadata.Issuer,
		JWKSURI:  o.Metadata.JWKSURI,
		Audience: o.InterfaceURL,
		ClientID: m.ClientID,
		Now:      m.now(),
	})
	if err != nil {
		return nil, err
	}
	tokenURL := o.Metadata.TokenEndpoint
	g := Grant{
		Brand:        o.Brand,
		InterfaceURL: o.InterfaceURL,
		Scopes:       claims.Scopes,
		GrantID:      claims.GrantID,
		ExpiresAt:    claims.ExpiresAt,
		Refreshable:  tok.RefreshToken != "",
		Subject:      claims.Subject,
		ClientID:     m.ClientID,
		Issuer:       o.Metadata.Issuer,
		JWKSURI:      o.Metadata.JWKSURI,
		TokenURL:     tokenURL,
		MetadataURL:  o.MetadataURL,
		IssuedAt:     claims.IssuedAt.UTC(),
	}
	if g.IssuedAt.IsZero() {
		g.IssuedAt = m.now().UTC()
	}
	if old, ok, err := m.Store.Get(g.InterfaceURL); err == nil && ok && old.GrantID == g.GrantID && !old.IssuedAt.IsZero() && old.IssuedAt.Before(g.IssuedAt) {
		g.IssuedAt = old.IssuedAt // a refresh or step-up of the same grant
	}
	if err := m.saveTokens(g.InterfaceURL, tok); err != nil {
		return nil, err
	}
	if err := m.Store.Put(g); err != nil {
		return nil, fmt.Errorf("delegation: saving grant: %w", err)
	}
	return &g, nil
}

func (m *Manager) saveTokens(interfaceURL string, tok *deviceflow.Token) error {
	if err := m.Secrets.Set(secretKey(m.SecretPrefix, interfaceURL, "access"), tok.AccessToken.Reveal()); err != nil {
		return fmt.Errorf("delegation: storing access token: %w", err)
	}
	rk := secretKey(m.SecretPrefix, interfaceURL, "refresh")
	if tok.RefreshToken != "" {
		if err := m.Secrets.Set(rk, tok.RefreshToken.Reveal()); err != nil {
			return fmt.Errorf("delegation: storing refresh token: %w", err)
		}
	} else if err := m.Secrets.Delete(rk); err != nil && !isNotFound(err) {
		return fmt.Errorf("delegation: removing old refresh token: %w", err)
	}
	return nil
}

// Grant returns the stored grant for interfaceURL, or ErrNoGrant. With
// CheckEndpoint set, a grant whose endpoints fail it is refused with
// CheckEndpoint's error (Grant.CheckEndpoints): its jwks_uri would decide
// which receipts verify.
func (m *Manager) Grant(interfaceURL string) (*Grant, error) {
	g, ok, err := m.Store.Get(interfaceURL)
	if err != nil {
		return nil, fmt.Errorf("delegation: reading grants: %w", err)
	}
	if !ok {
		return nil, fmt.Errorf("delegation: %s: %w", interfaceURL, ErrNoGrant)
	}
	if m.CheckEndpoint != nil {
		if err := g.CheckEndpoints(m.CheckEndpoint); err != nil {
			return nil, err
		}
	}
	return &g, nil
}

// List returns every stored grant.
func (m *Manager) List() ([]Grant, error) { return m.Store.List() }

// Forget removes the grant and both tokens for interfaceURL (pact logout).
func (m *Manager) Forget(interfaceURL string) error {
	var errs []error
	for _, kind := range []string{"access", "refresh"} {
		if err := m.Secrets.Delete(secretKey(m.SecretPrefix, interfaceURL, kind)); err != nil && !isNotFound(err) {
			errs = append(errs, err)
		}
	}
	if err := m.Store.Delete(interfaceURL); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// TokenFor returns the delegation token to send to interfaceURL in
// X-A2A-User-Delegation (PACT §5.5), with its grant. It only returns a
// token whose aud is exactly interfaceURL and whose client_id is m.ClientID,
// and refreshes it (deviceflow Refresh, then VerifyToken) when it expires
// within RefreshBefore.
//
// Errors: ErrNoGrant; *LoginRequiredError when the token expired and cannot
// be refreshed (no refresh token, invalid_grant); a plain error otherwise.
func (m *Manager) TokenFor(ctx context.Context, interfaceURL string) (string, *Grant, error) {
	g, err := m.Grant(interfaceURL)
	if err != nil {
		return "", nil, err
	}
	tok, err := m.storedToken(g, interfaceURL)
	if err != nil {
		return "", nil, err
	}
	if g.ExpiresAt.Sub(m.now()) > m.refreshBefore() {
		return tok, g, nil
	}
	return m.refresh(ctx, g, tok, "it expired")
}

// storedToken loads the access token and re-checks that it belongs to
// interfaceURL and this profile (it was signature-verified when stored).
func (m *Manager) storedToken(g *Grant, interfaceURL string) (string, error) {
	if g.InterfaceURL != interfaceURL || g.ClientID != m.ClientID {
		return "", fmt.Errorf("delegation: the stored grant is for %s and %s, not %s and this profile", g.InterfaceURL, g.ClientID, interfaceURL)
	}
	tok, err := m.Secrets.Get(secretKey(m.SecretPrefix, interfaceURL, "access"))
	if isNotFound(err) {
		return "", &LoginRequiredError{Brand: g.Brand, Scopes: g.Scopes, InterfaceURL: interfaceURL, Reason: "its token is missing from the secret store"}
	}
	if err != nil {
		return "", fmt.Errorf("delegation: reading the access token: %w", err)
	}
	payload, err := unverifiedClaims(tok)
	if err != nil {
		return "", fmt.Errorf("delegation: %w", err)
	}
	// Expiry is handled by the caller (refresh); only binding is checked.
	_, problems := checkClaims(payload, Expect{Audience: interfaceURL, ClientID: m.ClientID, Now: time.Unix(0, 0)}, false)
	var binding []string
	for _, p := range problems {
		if strings.HasPrefix(p, "aud") || strings.HasPrefix(p, "client_id") {
			binding = append(binding, p)
		}
	}
	if len(binding) > 0 {
		return "", &VerifyError{What: "stored delegation token", Problems: binding}
	}
	return tok, nil
}

// Refresh renews the access token for interfaceURL now, whatever its
// expiry (used after a 401 invalid_token). Errors as TokenFor.
func (m *Manager) Refresh(ctx context.Context, interfaceURL string) (string, *Grant, error) {
	g, err := m.Grant(interfaceURL)
	if err != nil {
		return "", nil, err
	}
	old, err := m.storedToken(g, interfaceURL)
	if err != nil {
		return "", nil, err
	}
	return m.refresh(ctx, g, old, "the provider refused it")
}

func (m *Manager) refresh(ctx context.Context, g *Grant, old, why string) (string, *Grant, error) {
	loginErr := func(reason string) error {
		return &LoginRequiredError{Brand: g.Brand, Scopes: g.Scopes, InterfaceURL: g.InterfaceURL, Reason: reason}
	}
	if m.Flow == nil {
		return "", nil, errors.New("delegation: no device-flow client to refresh with")
	}
	rt, err := m.Secrets.Get(secretKey(m.SecretPrefix, g.InterfaceURL, "refresh"))
	if isNotFound(err) || (err == nil && rt == "") {
		return "", nil, loginErr(why + " and there is no refresh token")
	}
	if err != nil {
		return "", nil, fmt.Errorf("delegation: reading the refresh token: %w", err)
	}
	tok, err := m.Flow.Refresh(ctx, g.TokenURL, deviceflow.Secret(rt))
	if err != nil {
		if errors.Is(err, deviceflow.ErrInvalidGrant) {
			// Another pact process may have refreshed (and rotated the
			// refresh token) first: use its token if it is fresh.
			if cur, gerr := m.Grant(g.InterfaceURL); gerr == nil && cur.ExpiresAt.Sub(m.now()) > m.refreshBefore() {
				if t, serr := m.storedToken(cur, g.InterfaceURL); serr == nil && t != old {
					return t, cur, nil
				}
			}
			return "", nil, loginErr(why + " and the grant can no longer be refreshed")
		}
		return "", nil, fmt.Errorf("delegation: refreshing the token for %s: %w", g.InterfaceURL, err)
	}
	md := &deviceflow.Metadata{Issuer: g.Issuer, JWKSURI: g.JWKSURI, TokenEndpoint: g.TokenURL}
	ng, err := m.Accept(ctx, Origin{Brand: g.Brand, InterfaceURL: g.InterfaceURL, MetadataURL: g.MetadataURL, Metadata: md}, tok)
	if err != nil {
		return "", nil, fmt.Errorf("delegation: the refreshed token was refused: %w", err)
	}
	return tok.AccessToken.Reveal(), ng, nil
}

// Send calls send with the token for interfaceURL. If send's error matches
// ErrInvalidToken (a 401 error="invalid_token" from message:send, PACT
// §5.5), the token is refreshed once and send is called again; a second
// refusal, or a failed refresh, returns a *LoginRequiredError telling the
// User to run `pact login` again. Other errors from send are returned as is.
func (m *Manager) Send(ctx context.Context, interfaceURL string, send func(token string, g *Grant) error) error {
	tok, g, err := m.TokenFor(ctx, interfaceURL)
	if err != nil {
		if errors.Is(err, ErrLoginRequired) {
			m.markDead(interfaceURL)
		}
		return err
	}
	err = send(tok, g)
	if !errors.Is(err, ErrInvalidToken) {
		return err
	}
	tok, g2, rerr := m.Refresh(ctx, interfaceURL)
	if rerr != nil {
		var lr *LoginRequiredError
		if errors.As(rerr, &lr) {
			// The Provider refused the token and the grant cannot be
			// refreshed: it is dead until the User logs in again.
			lr.HTTPStatus = http.StatusUnauthorized
			m.markDead(interfaceURL)
			return lr
		}
		return &LoginRequiredError{Brand: g.Brand, Scopes: g.Scopes, InterfaceURL: interfaceURL, HTTPStatus: http.StatusUnauthorized,
			Reason: "the provider refused the token and refreshing it failed: " + rerr.Error()}
	}
	err = send(tok, g2)
	if errors.Is(err, ErrInvalidToken) {
		m.markDead(interfaceURL)
		return &LoginRequiredError{Brand: g.Brand, Scopes: g.Scopes, InterfaceURL: interfaceURL, HTTPStatus: http.StatusUnauthorized,
			Reason: "the provider refused the token even after a refresh"}
	}
	return err
}
