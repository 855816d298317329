package profile

import (
	"crypto"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/pact-cli/pact/errs"
	"github.com/pact-cli/pact/secrets"
	"github.com/pact-cli/pact/signer"
	"github.com/pact-cli/pact/store"
)

// ServerLink is what a server profile records (`pact init --server URL
// --code CODE`): this device's enrolment with a `pact serve`. Such a
// profile has no identity of its own (no issuer, no signing key): the
// server's identity speaks to Providers for the User. The device key's
// private half is in the secret store under "NAME/device-key"; it signs
// only the device's tokens to the server, never anything for a Provider.
type ServerLink struct {
	// URL is the server's API base URL, as given to --server (https, or
	// http on loopback), without a trailing slash.
	URL string `json:"url"`
	// Issuer is the server's issuer (its identity, PACT §3.1): the aud of
	// every device token (package devicetoken).
	Issuer string `json:"issuer"`
	// DeviceID is this device's id at the server ("d_…"): iss and sub of
	// its tokens.
	DeviceID   string `json:"deviceId"`
	DeviceName string `json:"deviceName"`
	// KID is the RFC 7638 thumbprint of the device key.
	KID string `json:"kid"`
	// UserID and UserName are the User this device acts for.
	UserID   string    `json:"userId"`
	UserName string    `json:"userName"`
	Enrolled time.Time `json:"enrolled"`
}

// ErrServerProfile matches the refusal of an operation that needs the
// profile's own identity on a server profile, or of an enrolment into a
// profile that has its own identity. It wraps ErrInvalidInput (usage).
var ErrServerProfile = fmt.Errorf("%w: server profile", ErrInvalidInput)

func (s *ServerLink) ownIdentityError(name string) error {
	return errs.New(fmt.Sprintf("profile %q is enrolled with the server %s (device %s) and has no identity of its own; "+
		"make a local identity in another profile: pact --profile NAME init --issuer URL", name, s.URL, s.DeviceID), ErrServerProfile)
}

func (p *Profile) deviceKeySecret() string { return p.Name + "/device-key" }

// IsServer reports whether c is a server profile.
func (c *Config) IsServer() bool { return c.Server != nil }

// CheckEnrol says whether this profile may be enrolled with a server:
// not when it has an identity of its own (a local profile), nor when it
// is enrolled already unless force (enrolling again makes a new device;
// the old one stays at the server until revoked).
func (p *Profile) CheckEnrol(force bool) error {
	var c Config
	ok, err := store.ReadJSON(p.path(), &c)
	if err != nil || !ok {
		return err
	}
	if c.Server != nil && !force {
		return errs.New(fmt.Sprintf("profile %q is already enrolled with %s as device %s (%s); add --force to enrol it again as a new device",
			p.Name, c.Server.URL, c.Server.DeviceID, c.Server.DeviceName), ErrServerProfile)
	}
	if c.Server == nil && (c.Issuer != "" || len(c.Keys) > 0) {
		return errs.New(fmt.Sprintf("profile %q has its own identity (issuer %s); enrol this device in another profile: pact --profile NAME init --server URL --code CODE",
			p.Name, c.Issuer), ErrServerProfile)
	}
	return nil
}

// CheckDeviceKeyring reads the device key's entry once, so that a secret
// store that does not answer fails before anything is enrolled.
func (p *Profile) CheckDeviceKeyring() error {
	if _, err := p.Secrets.Get(p.deviceKeySecret()); err != nil && !errors.Is(err, secrets.ErrNotFound) {
		return err
	}
	return nil
}

// StoreDeviceKey keeps the device key's private half (base64 PKCS#8 DER)
// in the profile's secret store. undo puts back what was there before (the
// key of an earlier enrolment, or nothing).
func (p *Profile) StoreDeviceKey(k crypto.Signer) (undo func(), err error) {
	enc, err := signer.MarshalPrivate(k)
	if err != nil {
		return nil, err
	}
	old, oerr := p.Secrets.Get(p.deviceKeySecret())
	if err := p.Secrets.Set(p.deviceKeySecret(), enc); err != nil {
		return nil, err
	}
	return func() {
		if oerr == nil {
			p.Secrets.Set(p.deviceKeySecret(), old)
		} else {
			p.Secrets.Delete(p.deviceKeySecret())
		}
	}, nil
}

// SaveServerLink records the enrolment: profile.json becomes a server
// profile (written atomically), with the secret store's kind.
func (p *Profile) SaveServerLink(link ServerLink) (*Config, error) {
	unlock, err := store.Lock(p.path())
	if err != nil {
		return nil, err
	}
	defer unlock()
	c := &Config{Keyring: p.Secrets.Kind(), Keys: []KeyInfo{}, Providers: []Registration{}, Server: &link}
	if err := store.WriteJSON(p.path(), c, 0o600); err != nil {
		return nil, err
	}
	return c, nil
}

// DeviceKey loads the device key of a server profile.
func (p *Profile) DeviceKey() (crypto.Signer, error) {
	enc, err := p.Secrets.Get(p.deviceKeySecret())
	if errors.Is(err, secrets.ErrNotFound) {
		return nil, fmt.Errorf("the device key of profile %q is missing from %s; enrol this device again with a new code (pact init --server URL --code CODE --force)", p.Name, p.Secrets.Where())
	}
	if err != nil {
		return nil, err
	}
	return signer.ParsePrivate(enc)
}

// SubSecret returns the profile's pairwise-sub secret: `pact serve` derives
// each User's sub from it (signer.UserPairwiseSub).
func (p *Profile) SubSecret() ([]byte, error) {
	enc, err := p.Secrets.Get(p.subSecret())
	if err != nil {
		return nil, fmt.Errorf("reading the pairwise-sub secret: %w", err)
	}
	secret, err := base64.StdEncoding.DecodeString(enc)
	if err != nil || len(secret) < 16 {
		return nil, errors.New("the stored pairwise-sub secret is damaged")
	}
	return secret, nil
}

// NormaliseProviderURL checks and normalises a Provider URL as AddProvider
// does (https, or http on loopback; lower-case scheme and host; no query,
// fragment or trailing slash), for registrations kept elsewhere (the
// server's database).
func NormaliseProviderURL(raw string) (string, error) { return normaliseProviderURL(raw) }
