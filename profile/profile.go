// Package profile is one local User identity: its issuer and jwks_uri, its
// signing keys (private halves in the secret store, public halves here), the
// pairwise-sub secret, and its Provider registrations (PACT §3.1).
//
// The public configuration lives in {config}/profiles/NAME/profile.json
// (0600); secrets live under the keys "NAME/key/KID" and "NAME/sub-secret"
// in the secret store.
package profile

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/pact-cli/pact/errs"
	"github.com/pact-cli/pact/httpx"
	"github.com/pact-cli/pact/secrets"
	"github.com/pact-cli/pact/signer"
	"github.com/pact-cli/pact/signer/keyplugin"
	"github.com/pact-cli/pact/signer/keyuri"
	"github.com/pact-cli/pact/store"
)

// KeyInfo describes one signing key. Public is what is published.
type KeyInfo struct {
	KID     string    `json:"kid"`
	Alg     string    `json:"alg"`
	Created time.Time `json:"created"`
	Active  bool      `json:"active"`
	// Staged marks a key made by Rotate that is published but does not
	// sign yet; Activate makes it the active key (see State).
	Staged bool            `json:"staged,omitempty"`
	Public jose.JSONWebKey `json:"jwk"`
	// URI is where the private half lives (package keyuri): "" for the
	// profile's secret store (the keyring or its file), else a pkcs11: or
	// awskms: URI; such a key signs but never leaves (see heldkeys.go).
	URI string `json:"uri,omitempty"`
	// KeyARN is an AWS KMS key's ARN, an alias resolved when recorded.
	KeyARN string `json:"keyArn,omitempty"`
	// Generated: pact made this key on the token or in the KMS (`pact key
	// retire` then says how to delete it there; pact never does).
	Generated bool `json:"generated,omitempty"`
}

// Registration is what a Provider assigned this personal agent (§3.1):
// the Provider's URL (a prefix of its interface URLs) and the audience.
type Registration struct {
	URL      string `json:"url"`
	Audience string `json:"audience"`
	// PreviousAudience and AudienceChangedAt record the last time
	// SetProvider replaced Audience (absent when it never did), so that a
	// refusal soon after can name the change as its likely cause.
	PreviousAudience  string     `json:"previousAudience,omitempty"`
	AudienceChangedAt *time.Time `json:"audienceChangedAt,omitempty"`
}

// Config is the public, non-secret state of a profile.
type Config struct {
	// Keyring is the secret-store backend ("os" or "file") the profile's
	// secrets live in, recorded by Init; "" for profiles made before it
	// was recorded (the environment decides, as it used to).
	Keyring   string         `json:"keyring,omitempty"`
	Issuer    string         `json:"issuer"`
	JWKSURI   string         `json:"jwks_uri"`
	Keys      []KeyInfo      `json:"keys"`
	Providers []Registration `json:"providers"`
	// Server is set on a server profile: this device is enrolled with a
	// `pact serve` (server.go) and has no identity of its own.
	Server *ServerLink `json:"server,omitempty"`
}

// ErrInvalidInput wraps errors about a URL or value the User gave
// (issuer, jwks_uri, Provider URL, audience): a usage error.
var ErrInvalidInput = errors.New("invalid input")

// ErrNotInitialised means `pact init` has not been run for the profile.
var ErrNotInitialised = errors.New("profile not initialised")

// Profile gives access to one profile's state.
type Profile struct {
	Name    string
	Dirs    store.Dirs
	Secrets secrets.Store
	// Database is the PostgreSQL database (a postgres:// URL) that holds
	// the profile's state; "" is the profile's own SQLite file
	// (store/backend).
	Database string
	Now      func() time.Time // nil = time.Now
	// PIN asks the User for a PKCS#11 token's user PIN when neither
	// PACT_PKCS11_PIN nor the keyring holds it (nil: nobody to ask; the
	// error then says how to give it). token names the token.
	PIN func(token string) (string, error)
	// MintAhead, when set, starts minting PA JWTs ahead for audience in
	// another process (Stock); it is called when a held key's stock runs low.
	MintAhead func(audience string)

	held *held // per-process state of held keys (heldkeys.go)
}

func (p *Profile) path() string {
	return filepath.Join(p.Dirs.ProfileConfigDir(p.Name), "profile.json")
}

func (p *Profile) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now().UTC()
}

func (p *Profile) keySecret(kid string) string { return p.Name + "/key/" + kid }
func (p *Profile) subSecret() string           { return p.Name + "/sub-secret" }

// Load reads the profile. It fails with ErrNotInitialised (wrapped in a
// message that says to run pact init) when there is none.
func (p *Profile) Load() (*Config, error) {
	var c Config
	ok, err := store.ReadJSON(p.path(), &c)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errs.New(fmt.Sprintf("profile %q has no identity yet: run `%s` first", p.Name, Command(p.Name, "init --issuer URL")), ErrNotInitialised)
	}
	return &c, nil
}

// Exists reports whether the profile has been initialised.
func (p *Profile) Exists() bool {
	var c Config
	ok, _ := store.ReadJSON(p.path(), &c)
	return ok
}

// DefaultJWKSURI is {issuer}/.well-known/jwks.json.
func DefaultJWKSURI(issuer string) string {
	return strings.TrimRight(issuer, "/") + "/.well-known/jwks.json"
}

// CheckIssuer validates an issuer or jwks_uri: an absolute https URL (http
// for loopback hosts) with no query or fragment.
func CheckIssuer(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return errs.New(fmt.Sprintf("%q is not an absolute URL (for example https://pa.example.com)", raw), ErrInvalidInput)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return errs.New(fmt.Sprintf("%q must not have a query or fragment", raw), ErrInvalidInput)
	}
	if err := httpx.CheckURL(u); err != nil {
		return errs.New(err.Error(), ErrInvalidInput, err)
	}
	return nil
}

// InitResult reports what Init did.
type InitResult struct {
	Config  *Config
	Created bool // a new key was made
	// PreviousIssuer is the issuer before this run, when it changed.
	PreviousIssuer string
}

// Init creates the profile: a signing key (alg ES256 or RS256) stored in the
// secret store, the pairwise-sub secret, and profile.json. Run again, it keeps
// the existing key and sub secret and only updates issuer and jwks_uri,
// unless force is set, which replaces every key (the sub secret is kept, so
// Providers still see the same sub). jwksURI "" means DefaultJWKSURI.
func (p *Profile) Init(issuer, jwksURI, alg string, force bool) (*InitResult, error) {
	return p.InitKey(issuer, jwksURI, alg, "", force)
}

// InitKey is Init with the key made or found where keyURI says (package
// keyuri; "" = the profile's secret store): a PKCS#11 token's key or an
// AWS KMS key signs but never leaves. A URI that names an existing key
// uses it, its algorithm following its public part.
func (p *Profile) InitKey(issuer, jwksURI, alg, keyURI string, force bool) (*InitResult, error) {
	u, err := keyuri.Parse(keyURI)
	if err != nil {
		return nil, errs.New(fmt.Sprintf("--key: %v", strings.TrimPrefix(err.Error(), keyuri.ErrInvalid.Error()+": ")), ErrInvalidInput, err)
	}
	if err := CheckIssuer(issuer); err != nil {
		return nil, fmt.Errorf("--issuer: %w", err)
	}
	if jwksURI == "" {
		jwksURI = DefaultJWKSURI(issuer)
	}
	if err := CheckIssuer(jwksURI); err != nil {
		return nil, fmt.Errorf("--jwks-uri: %w", err)
	}
	unlock, err := store.Lock(p.path())
	if err != nil {
		return nil, err
	}
	defer unlock()
	var c Config
	exists, err := store.ReadJSON(p.path(), &c)
	if err != nil {
		return nil, err
	}
	if exists && c.Server != nil {
		return nil, c.Server.ownIdentityError(p.Name)
	}
	if _, err := p.Secrets.Get(p.subSecret()); errors.Is(err, secrets.ErrNotFound) {
		s, err := signer.NewSubSecret()
		if err != nil {
			return nil, err
		}
		if err := p.Secrets.Set(p.subSecret(), base64.StdEncoding.EncodeToString(s)); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	created := false
	if !exists || force || len(c.Keys) == 0 {
		info, err := p.newKey(issuer, alg, u)
		if err != nil {
			return nil, err
		}
		old := c.Keys
		c.Keys = []KeyInfo{info}
		c.Keyring = p.Secrets.Kind()
		created = true
		if err := p.save(&c, issuer, jwksURI); err != nil {
			p.deleteSecret(info)
			return nil, err
		}
		for _, k := range old {
			if k.KID != info.KID {
				p.deleteSecret(k)
			}
		}
		return &InitResult{Config: &c, Created: created}, nil
	}
	if keyURI != "" {
		if a := c.Active(); a == nil || a.KeyURI().String() != u.String() {
			return nil, errs.New(fmt.Sprintf("profile %q already has its signing key %s; to sign with the key at %s, run `%s` (or init again with --force to replace every key)",
				p.Name, c.Keys[0].KID, u, CommandWords(p.Name, "key", "rotate", "--key", u.String())), ErrInvalidInput)
		}
	}
	if c.Keyring == "" {
		c.Keyring = p.Secrets.Kind()
	}
	prev := ""
	if c.Issuer != issuer {
		prev = c.Issuer
	}
	if err := p.save(&c, issuer, jwksURI); err != nil {
		return nil, err
	}
	return &InitResult{Config: &c, Created: created, PreviousIssuer: prev}, nil
}

func (p *Profile) save(c *Config, issuer, jwksURI string) error {
	c.Issuer, c.JWKSURI = issuer, jwksURI
	if c.Providers == nil {
		c.Providers = []Registration{}
	}
	return store.WriteJSON(p.path(), c, 0o600)
}

// deleteSecret deletes k's private half when the secret store holds it
// (a key held elsewhere stays where it is).
func (p *Profile) deleteSecret(k KeyInfo) {
	if !k.KeyURI().Held() {
		p.Secrets.Delete(p.keySecret(k.KID))
	}
}

// newKey makes the key u names (see newHeldKey) or, for the secret store,
// generates one and stores its private half; it returns its info
// (active). The caller saves the config; on failure it calls deleteSecret.
func (p *Profile) newKey(issuer, alg string, u keyuri.URI) (KeyInfo, error) {
	if u.Held() {
		ctx, cancel := context.WithTimeout(context.Background(), keyplugin.CallTimeout)
		defer cancel()
		return p.newHeldKey(ctx, issuer, alg, u)
	}
	if alg == "" {
		alg = signer.ES256
	}
	k, err := signer.Generate(alg, 0)
	if err != nil {
		return KeyInfo{}, err
	}
	jwk, err := signer.PublicJWK(k)
	if err != nil {
		return KeyInfo{}, err
	}
	enc, err := signer.MarshalPrivate(k)
	if err != nil {
		return KeyInfo{}, err
	}
	if err := p.Secrets.Set(p.keySecret(jwk.KeyID), enc); err != nil {
		return KeyInfo{}, err
	}
	return KeyInfo{KID: jwk.KeyID, Alg: alg, Created: p.now().Truncate(time.Second), Active: true, Public: jwk}, nil
}

// update runs a locked read-modify-write of profile.json.
func (p *Profile) update(fn func(c *Config) error) error {
	if !p.Exists() {
		_, err := p.Load()
		return err
	}
	return store.Update(p.path(), 0o600, fn)
}

// Rotate makes a new STAGED key (alg "" = the current key's algorithm):
// published in the JWKS at once but not used to sign until Activate, so
// that Providers can fetch it before it is needed (no outage). The active
// key keeps signing; an earlier staged key stays staged.
func (p *Profile) Rotate(alg string) (KeyInfo, error) {
	return p.RotateKey(alg, "")
}

// RotateKey is Rotate with the new key made or found where keyURI says
// (package keyuri); "" = where the active key lives: the secret store,
// the same token (a new object), or a new KMS key. A key already in the
// profile is refused.
func (p *Profile) RotateKey(alg, keyURI string) (KeyInfo, error) {
	var info KeyInfo
	err := p.update(func(c *Config) error {
		u, err := keyuri.Parse(keyURI)
		if err != nil {
			return errs.New(fmt.Sprintf("--key: %v", strings.TrimPrefix(err.Error(), keyuri.ErrInvalid.Error()+": ")), ErrInvalidInput, err)
		}
		if keyURI == "" {
			u = nextLocation(c, p.now())
		}
		if alg == "" {
			if a := c.Active(); a != nil {
				alg = a.Alg
			}
		}
		if info, err = p.newKey(c.Issuer, alg, u); err != nil {
			return err
		}
		if old := c.Key(info.KID); old != nil {
			return errs.New(fmt.Sprintf("the key at %s is already key %s of profile %q (%s)", u, info.KID, p.Name, old.State()), ErrInvalidInput)
		}
		info.Active, info.Staged = false, true
		c.Keys = append(c.Keys, info)
		return nil
	})
	return info, err
}

// Retire stops publishing the key kid and deletes its private half. The
// active key cannot be retired (rotate first).
func (p *Profile) Retire(kid string) error {
	return p.update(func(c *Config) error {
		for i, k := range c.Keys {
			if k.KID != kid {
				continue
			}
			if k.Active {
				return fmt.Errorf("%w: key %s is the active key and signs every PA JWT; run `%s`, publish, then `%s` first",
					ErrActiveKey, kid, Command(p.Name, "key rotate"), Command(p.Name, "key activate -- NEWKID"))
			}
			c.Keys = append(c.Keys[:i], c.Keys[i+1:]...)
			p.Stock().Clear()
			if k.KeyURI().Held() {
				return nil // it stays on the token or in the KMS: pact never destroys it
			}
			return p.Secrets.Delete(p.keySecret(kid))
		}
		return notFound("no key %q in profile %q (see `pact key list`)", kid, p.Name)
	})
}

// Active returns the active key, or nil.
func (c *Config) Active() *KeyInfo {
	for i := range c.Keys {
		if c.Keys[i].Active {
			return &c.Keys[i]
		}
	}
	return nil
}

// JWKS is the public key set to publish: every key not retired (active,
// staged and previously active ones).
func (c *Config) JWKS() jose.JSONWebKeySet {
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{}}
	for _, k := range c.Keys {
		set.Keys = append(set.Keys, k.Public.Public())
	}
	return set
}

// Signer returns the Signer of the active key: loaded from the secret
// store, or held on a token or in a KMS (see signerFor). A key whose
// public part is not the recorded one is refused (signer.ErrKeyMismatch);
// one that cannot be reached is signer.ErrKeyUnavailable, naming the key.
func (p *Profile) Signer(c *Config) (*signer.Signer, error) {
	a := c.Active()
	if a == nil {
		return nil, fmt.Errorf("profile %q has no active key; run `%s`", p.Name, Command(p.Name, "key rotate"))
	}
	return p.signerFor(c, *a)
}

// Sub returns the pairwise sub for a Provider's audience (§3.2).
func (p *Profile) Sub(audience string) (string, error) {
	enc, err := p.Secrets.Get(p.subSecret())
	if err != nil {
		return "", fmt.Errorf("reading the pairwise-sub secret: %w", err)
	}
	secret, err := base64.StdEncoding.DecodeString(enc)
	if err != nil || len(secret) < 16 {
		return "", errors.New("the stored pairwise-sub secret is damaged")
	}
	return signer.PairwiseSub(secret, audience), nil
}

// AddProvider records (or updates) a registration: SetProvider without
// the audience it replaced.
func (p *Profile) AddProvider(rawURL, audience string) (Registration, error) {
	reg, _, err := p.SetProvider(rawURL, audience)
	return reg, err
}

// SetProvider records (or updates) a registration. url must be an absolute
// https URL (http on loopback); audience is stored verbatim. replaced is
// the audience this call replaced ("" for a new registration or the same
// audience again); the registration then records it (PreviousAudience,
// AudienceChangedAt).
func (p *Profile) SetProvider(rawURL, audience string) (reg Registration, replaced string, err error) {
	u, err := normaliseProviderURL(rawURL)
	if err != nil {
		return Registration{}, "", err
	}
	if strings.TrimSpace(audience) == "" {
		return Registration{}, "", errs.New("--audience is required: it is the value the Provider assigned to this personal agent", ErrInvalidInput)
	}
	reg = Registration{URL: u, Audience: audience}
	err = p.update(func(c *Config) error {
		for i := range c.Providers {
			old := &c.Providers[i]
			if old.URL != u {
				continue
			}
			if old.Audience == audience {
				reg = *old
				return nil
			}
			now := p.now().Truncate(time.Second)
			replaced = old.Audience
			reg.PreviousAudience, reg.AudienceChangedAt = old.Audience, &now
			*old = reg
			return nil
		}
		c.Providers = append(c.Providers, reg)
		return nil
	})
	if err != nil {
		return Registration{}, "", err
	}
	return reg, replaced, nil
}

// RemoveProvider deletes the registration with this URL.
func (p *Profile) RemoveProvider(rawURL string) error {
	u, err := normaliseProviderURL(rawURL)
	if err != nil {
		return err
	}
	return p.update(func(c *Config) error {
		for i := range c.Providers {
			if c.Providers[i].URL == u {
				c.Providers = append(c.Providers[:i], c.Providers[i+1:]...)
				return nil
			}
		}
		return notFound("no Provider %s is registered (see `pact provider list`)", u)
	})
}

func normaliseProviderURL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return "", errs.New(fmt.Sprintf("%q is not an absolute Provider URL (for example https://provider.example.com)", raw), ErrInvalidInput)
	}
	if err := httpx.CheckURL(u); err != nil {
		return "", errs.New(err.Error(), ErrInvalidInput, err)
	}
	u.Scheme, u.Host = strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	u.RawQuery, u.Fragment = "", ""
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u.String(), nil
}

// Match returns the registration for an interface URL: the one whose URL is
// its longest prefix, comparing scheme, host and port exactly and then whole
// path segments (so https://p.example/a matches https://p.example/a/b but
// not https://p.example/ab).
func (c *Config) Match(interfaceURL string) (*Registration, bool) {
	iu, err := url.Parse(interfaceURL)
	if err != nil {
		return nil, false
	}
	isegs := segments(iu.Path)
	var best *Registration
	bestLen := -1
	for i := range c.Providers {
		ru, err := url.Parse(c.Providers[i].URL)
		if err != nil || !strings.EqualFold(ru.Scheme, iu.Scheme) || !strings.EqualFold(hostPort(ru), hostPort(iu)) {
			continue
		}
		rsegs := segments(ru.Path)
		if len(rsegs) > len(isegs) {
			continue
		}
		ok := true
		for j := range rsegs {
			if rsegs[j] != isegs[j] {
				ok = false
				break
			}
		}
		if ok && len(rsegs) > bestLen {
			best, bestLen = &c.Providers[i], len(rsegs)
		}
	}
	return best, best != nil
}

func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	return strings.ToLower(u.Hostname()) + ":" + port
}

func segments(p string) []string {
	var out []string
	for _, s := range strings.Split(p, "/") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// SharingIssuer names the other profiles under p.Dirs whose issuer is
// issuer, sorted. Two profiles with one issuer sign with different keys
// while a Provider fetches one JWKS for that issuer (§3.1): the profile
// whose keys are not published there is refused.
func (p *Profile) SharingIssuer(issuer string) []string {
	entries, _ := os.ReadDir(filepath.Join(p.Dirs.Config, "profiles"))
	var out []string
	for _, e := range entries {
		if !e.IsDir() || e.Name() == p.Name || store.CheckProfileName(e.Name()) != nil {
			continue
		}
		other := Profile{Name: e.Name(), Dirs: p.Dirs}
		var c Config
		if ok, err := store.ReadJSON(other.path(), &c); err == nil && ok && c.Issuer == issuer {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}
