package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/pact-cli/pact/errs"
	"github.com/pact-cli/pact/httpx"
	"github.com/pact-cli/pact/jwks"
	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/publish"
	"github.com/pact-cli/pact/signer"
)

// Identity is the server's identity (PACT §3.1): one issuer, one key set
// and one pairwise-sub secret, all of them a pact profile's, made by
// `pact init --issuer URL` on the server's profile (any key kind a profile
// holds) and rotated with `pact key rotate|activate|retire` on it. The key
// set and the active key are read again from the profile at most once a
// second, so a rotation is served and used without a restart.
type Identity struct {
	p       *profile.Profile
	issuer  string
	jwksURI string
	secret  []byte
	now     func() time.Time

	mu     sync.Mutex
	loaded time.Time
	cfg    *profile.Config
	sg     *signer.Signer
	sgKID  string
}

// ErrIdentity matches the refusals of NewIdentity (a usage error).
var ErrIdentity = fmt.Errorf("%w: the server's identity", profile.ErrInvalidInput)

// NewIdentity opens the identity of profile p for issuer ("" = the
// profile's issuer). It refuses, each time in one sentence naming the fix:
// a profile without an identity, one enrolled with a server, an issuer
// other than the profile's (Providers compare it exactly), a jwks_uri this
// server does not serve (another origin), and an active key or sub secret
// that cannot be read.
func NewIdentity(p *profile.Profile, issuer string, now func() time.Time) (*Identity, error) {
	if now == nil {
		now = time.Now
	}
	c, err := p.Load()
	if err != nil {
		return nil, fmt.Errorf("the server's identity is profile %q's, and %w", p.Name, err)
	}
	if c.IsServer() {
		return nil, errs.New(fmt.Sprintf("profile %q is enrolled with the server %s: a server runs on a profile with its own identity (pact --profile NAME init --issuer URL)", p.Name, c.Server.URL), ErrIdentity)
	}
	if issuer == "" {
		issuer = c.Issuer
	}
	if issuer != c.Issuer {
		return nil, errs.New(fmt.Sprintf("--issuer is %s but profile %q has the issuer %s; Providers compare it exactly: run `%s` to change the profile's, or drop --issuer",
			issuer, p.Name, c.Issuer, profile.Command(p.Name, "init --issuer "+issuer)), ErrIdentity)
	}
	iu, err1 := url.Parse(c.Issuer)
	ju, err2 := url.Parse(c.JWKSURI)
	if err1 != nil || err2 != nil || !httpx.SameOrigin(iu, ju) {
		return nil, errs.New(fmt.Sprintf("profile %q publishes its keys at %s, on another origin than its issuer %s: pact serve serves the keys itself; run `%s`",
			p.Name, c.JWKSURI, c.Issuer, profile.Command(p.Name, "init --issuer "+c.Issuer+" --jwks-uri "+profile.DefaultJWKSURI(c.Issuer))), ErrIdentity)
	}
	secret, err := p.SubSecret()
	if err != nil {
		return nil, err
	}
	id := &Identity{p: p, issuer: c.Issuer, jwksURI: c.JWKSURI, secret: secret, now: now}
	if _, err := id.Signer(); err != nil {
		return nil, err
	}
	return id, nil
}

// Issuer is the server's issuer: iss of every PA JWT, client_id (§5.3),
// and aud of every device token.
func (id *Identity) Issuer() string { return id.issuer }

// JWKSURI is where the key set is served.
func (id *Identity) JWKSURI() string { return id.jwksURI }

// Profile is the server's profile.
func (id *Identity) Profile() *profile.Profile { return id.p }

// config returns the profile's configuration, read again when the one held
// is more than a second old.
func (id *Identity) config() (*profile.Config, error) {
	id.mu.Lock()
	defer id.mu.Unlock()
	if id.cfg != nil && id.now().Sub(id.loaded) < time.Second {
		return id.cfg, nil
	}
	c, err := id.p.Load()
	if err != nil {
		if id.cfg != nil {
			return id.cfg, nil // keep serving the last good one
		}
		return nil, err
	}
	id.cfg, id.loaded = c, id.now()
	return c, nil
}

// Keys is the public key set: every key of the profile not retired.
func (id *Identity) Keys() (jose.JSONWebKeySet, error) {
	c, err := id.config()
	if err != nil {
		return jose.JSONWebKeySet{}, err
	}
	return c.JWKS(), nil
}

// Signer is the active key's signer (PA JWTs with iss = the issuer),
// loaded again when `pact key activate` made another key active.
func (id *Identity) Signer() (*signer.Signer, error) {
	c, err := id.config()
	if err != nil {
		return nil, err
	}
	a := c.Active()
	if a == nil {
		return nil, fmt.Errorf("profile %q has no active key; run `%s`", id.p.Name, profile.Command(id.p.Name, "key rotate"))
	}
	id.mu.Lock()
	if id.sg != nil && id.sgKID == a.KID {
		s := id.sg
		id.mu.Unlock()
		return s, nil
	}
	id.mu.Unlock()
	s, err := id.p.Signer(c)
	if err != nil {
		return nil, err
	}
	id.mu.Lock()
	id.sg, id.sgKID = s, a.KID
	id.mu.Unlock()
	return s, nil
}

// Sub is the pairwise sub of User userID at the Provider whose audience
// is audience (PACT §3.2; signer.UserPairwiseSub).
func (id *Identity) Sub(userID, audience string) string {
	return signer.UserPairwiseSub(id.secret, userID, audience)
}

// ClientMetadata is the Client ID Metadata Document (publish.ClientMetadata).
func (id *Identity) ClientMetadata(name, version string) publish.ClientMetadata {
	return publish.NewClientMetadata(id.issuer, id.jwksURI, name, version)
}

// MetadataPath is the path of the issuer URL, where the Client ID Metadata
// Document is served ("/" for an issuer without a path).
func (id *Identity) MetadataPath() string {
	u, err := url.Parse(id.issuer)
	if err != nil || u.Path == "" {
		return "/"
	}
	return u.Path
}

// metadataHandler serves the Client ID Metadata Document as
// application/json with the JWKS's cache lifetime.
func (id *Identity) metadataHandler(name, version string) HandlerFunc {
	doc, _ := json.MarshalIndent(id.ClientMetadata(name, version), "", "  ")
	return func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", jwks.CacheControl)
		w.Write(append(doc, '\n'))
		return nil
	}
}

// keysHandler serves OIDC discovery and the JWKS (jwks.Handler, with
// Cache-Control: public, max-age=300).
func (id *Identity) keysHandler() http.Handler {
	return jwks.Handler(id.issuer, id.jwksURI, id.Keys)
}

func discoveryURL(issuer string) string { return jwks.DiscoveryURL(issuer) }

// pathOf is the path of a URL ("" when it has none or does not parse).
func pathOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Path == "" || u.Path == "/" {
		return ""
	}
	return u.Path
}
