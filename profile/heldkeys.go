package profile

import (
	"context"
	"crypto"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/pact-cli/pact/secrets"
	"github.com/pact-cli/pact/signer"
	"github.com/pact-cli/pact/signer/keyplugin"
	"github.com/pact-cli/pact/signer/keyuri"
	"github.com/pact-cli/pact/signer/pkcs11"
)

// Storage kinds, as `pact key list` and `pact whoami --json` name them.
const (
	StorageOS     = "os"     // the OS keyring
	StorageFile   = "file"   // the 0600 secrets file
	StoragePKCS11 = "pkcs11" // a PKCS#11 token
	StorageAWSKMS = "awskms" // AWS KMS
)

// held is the state a Profile keeps for keys held elsewhere, per process.
type held struct {
	mu   sync.Mutex
	kms  *keyplugin.Client
	pins map[string]string // PINs asked at the prompt, by token
}

var heldInit sync.Mutex

func (p *Profile) h() *held {
	heldInit.Lock()
	defer heldInit.Unlock()
	if p.held == nil {
		p.held = &held{}
	}
	return p.held
}

// KeyURI is where k's private half lives (keyuri.Default for the
// profile's secret store).
func (k KeyInfo) KeyURI() keyuri.URI {
	u, err := keyuri.Parse(k.URI)
	if err != nil {
		return keyuri.URI{Kind: "invalid"}
	}
	return u
}

// Storage is the kind of place k lives in: StorageOS, StorageFile,
// StoragePKCS11 or StorageAWSKMS.
func (p *Profile) Storage(k KeyInfo) string {
	switch u := k.KeyURI(); u.Kind {
	case keyuri.PKCS11:
		return StoragePKCS11
	case keyuri.AWSKMS:
		return StorageAWSKMS
	}
	if p.Secrets != nil && p.Secrets.Kind() == StorageFile {
		return StorageFile
	}
	return StorageOS
}

// Where says where k lives, for people: the OS keyring or the file, the
// token and object, or the KMS key's ARN.
func (p *Profile) Where(k KeyInfo) string {
	u := k.KeyURI()
	switch u.Kind {
	case keyuri.PKCS11:
		return u.Describe()
	case keyuri.AWSKMS:
		if k.KeyARN != "" {
			if strings.HasPrefix(u.KeyID, "alias/") {
				return "AWS KMS key " + k.KeyARN + " (" + u.KeyID + ")"
			}
			return "AWS KMS key " + k.KeyARN
		}
		return u.Describe()
	}
	if p.Secrets == nil {
		return "the profile's keyring"
	}
	return p.Secrets.Where()
}

// keyError names the key and where it lives before the cause, in one
// sentence: "the signing key KID (WHERE) cannot sign: CAUSE".
func (p *Profile) keyError(k KeyInfo, err error) error {
	return fmt.Errorf("the signing key %s (%s) cannot sign: %w", k.KID, p.Where(k), err)
}

// namedKey wraps a key held elsewhere so that a failure to sign names it.
type namedKey struct {
	crypto.Signer
	p *Profile
	k KeyInfo
}

func (n namedKey) Sign(r io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	sig, err := n.Signer.Sign(r, digest, opts)
	if err != nil {
		return nil, n.p.keyError(n.k, err)
	}
	return sig, nil
}

// kmsClient is the profile's client of the pact-awskms plugin (one
// process, started on first use).
func (p *Profile) kmsClient() *keyplugin.Client {
	p.h().mu.Lock()
	defer p.h().mu.Unlock()
	if p.h().kms == nil {
		p.h().kms = keyplugin.New(keyuri.AWSKMS)
	}
	return p.h().kms
}

func (p *Profile) pinSecret(u keyuri.URI) string {
	return p.Name + "/pkcs11-pin/" + tokenName(u)
}

func tokenName(u keyuri.URI) string {
	switch {
	case u.Token != "":
		return u.Token
	case u.Serial != "":
		return "serial-" + u.Serial
	}
	return "slot-" + u.SlotID
}

// pin is the token's user PIN and where it came from: PACT_PKCS11_PIN, the
// profile's secret store (`pact key pin`), or the PIN hook (a prompt).
func (p *Profile) pin(u keyuri.URI) (pin, from string, err error) {
	if v := os.Getenv(pkcs11.PINEnv); v != "" {
		return v, pkcs11.PINEnv, nil
	}
	if p.Secrets != nil {
		v, err := p.Secrets.Get(p.pinSecret(u))
		if err == nil && v != "" {
			return v, "the keyring (pact key pin)", nil
		}
		if err != nil && !errors.Is(err, secrets.ErrNotFound) {
			return "", "", err
		}
	}
	name := tokenName(u)
	p.h().mu.Lock()
	v, ok := p.h().pins[name]
	p.h().mu.Unlock()
	if ok {
		return v, "the prompt", nil
	}
	if p.PIN == nil {
		return "", "", &pkcs11.Error{Kind: pkcs11.KindPIN, URI: u, Message: "the token's PIN is needed: set " + pkcs11.PINEnv +
			", keep it in the keyring with `" + Command(p.Name, "key pin") + "`, or run pact on a terminal to be asked"}
	}
	v, err = p.PIN(name)
	if err != nil {
		return "", "", err
	}
	p.h().mu.Lock()
	if p.h().pins == nil {
		p.h().pins = map[string]string{}
	}
	p.h().pins[name] = v
	p.h().mu.Unlock()
	return v, "the prompt", nil
}

// withPINSource says where a wrong PIN came from.
func withPINSource(err error, from string) error {
	if pkcs11.IsPINError(err) {
		return fmt.Errorf("%w (the PIN from %s)", err, from)
	}
	return err
}

// openPKCS11 logs in to u's token and finds its key.
func (p *Profile) openPKCS11(u keyuri.URI) (*pkcs11.Key, error) {
	if !pkcs11.Available {
		return nil, pkcs11.ErrNotBuilt
	}
	pin, from, err := p.pin(u)
	if err != nil {
		return nil, err
	}
	k, err := pkcs11.Open(u, pin)
	return k, withPINSource(err, from)
}

// mismatch is ErrKeyMismatch for a key whose public part is not the one
// recorded (and published) as kid.
func (p *Profile) mismatch(k KeyInfo) error {
	return fmt.Errorf("%w: the key at %s is not the signing key %s any more (its public part changed): "+
		"it was replaced there; put the old key back, or publish the new one with `%s` and activate it",
		signer.ErrKeyMismatch, p.Where(k), k.KID, CommandWords(p.Name, "key", "rotate", "--key", k.URI))
}

// open returns a crypto.Signer for k, refusing one whose public part is
// not the recorded one (kid) when that part is at hand without a round
// trip: the keyring's key, a token's public object. A KMS key is not
// asked for its public part here: signer.NewHeld verifies each signature
// with the published key instead (CheckKey asks).
func (p *Profile) open(c *Config, k KeyInfo) (crypto.Signer, error) {
	u, err := keyuri.Parse(k.URI)
	if err != nil {
		return nil, fmt.Errorf("the key %s in profile %q: %w", k.KID, p.Name, err)
	}
	switch u.Kind {
	case keyuri.PKCS11:
		key, err := p.openPKCS11(u)
		if err != nil {
			return nil, p.keyError(k, err)
		}
		if kid, err := signer.Thumbprint(key.Public()); err != nil || kid != k.KID {
			key.Close()
			return nil, p.mismatch(k)
		}
		return namedKey{key, p, k}, nil
	case keyuri.AWSKMS:
		id := u.KeyID
		if id == "" {
			id = k.KeyARN
		}
		return namedKey{p.kmsClient().Key(id, k.Public.Key), p, k}, nil
	}
	enc, err := p.Secrets.Get(p.keySecret(k.KID))
	if errors.Is(err, secrets.ErrNotFound) {
		return nil, fmt.Errorf("the private key %s is missing from %s; run `%s` to make a new one", k.KID, p.Secrets.Where(), Command(p.Name, "init --issuer "+c.Issuer+" --force"))
	}
	if err != nil {
		return nil, err
	}
	key, err := signer.ParsePrivate(enc)
	if err != nil {
		return nil, err
	}
	if kid, err := signer.Thumbprint(key.Public()); err != nil || kid != k.KID {
		return nil, p.mismatch(k)
	}
	return key, nil
}

// signerFor returns the Signer for k: in memory for the keyring's key;
// held (every signature verified with the published key, tokens minted
// ahead taken from the profile's stock) for a token's or a KMS key.
func (p *Profile) signerFor(c *Config, k KeyInfo) (*signer.Signer, error) {
	key, err := p.open(c, k)
	if err != nil {
		return nil, err
	}
	if !k.KeyURI().Held() {
		return signer.New(c.Issuer, key, nil)
	}
	s, err := signer.NewHeld(c.Issuer, key, k.Public, nil)
	if err != nil {
		return nil, err
	}
	return s.At(p.Where(k)).WithStock(p.Stock()), nil
}

// Stock is where PA JWTs minted ahead for the profile's held keys are
// kept: {data}/profiles/NAME/minted-ahead/ (0700, one 0600 file a token).
// Taking one calls MintAhead, when set, to refill it.
func (p *Profile) Stock() *signer.StockDir {
	d := &signer.StockDir{Dir: filepath.Join(p.Dirs.ProfileDataDir(p.Name), "minted-ahead")}
	if p.MintAhead != nil {
		d.Refill = func(_, audience string) {
			if p.canSignUnattended() {
				p.MintAhead(audience)
			}
		}
	}
	return d
}

// canSignUnattended reports whether a process without a terminal can sign
// with the active key: a token's PIN must then be in PACT_PKCS11_PIN or
// the keyring, not only typed at a prompt.
func (p *Profile) canSignUnattended() bool {
	c, err := p.Load()
	if err != nil || c.Active() == nil {
		return false
	}
	u := c.Active().KeyURI()
	if u.Kind != keyuri.PKCS11 || os.Getenv(pkcs11.PINEnv) != "" {
		return true
	}
	v, err := p.Secrets.Get(p.pinSecret(u))
	return err == nil && v != ""
}

// CheckKey checks that k can sign now, as `pact doctor` and `pact key
// activate` do: reachable (a token logged in to, the KMS key found), its
// public part the recorded one, and a probe signature that the published
// key verifies. The error names the key and the cause.
func (p *Profile) CheckKey(ctx context.Context, c *Config, k KeyInfo) error {
	u := k.KeyURI()
	if u.Kind == keyuri.AWSKMS {
		id := u.KeyID
		if id == "" {
			id = k.KeyARN
		}
		info, err := p.kmsClient().PublicKey(ctx, id)
		if err != nil {
			return p.keyError(k, err)
		}
		if kid, err := signer.Thumbprint(info.Public); err != nil || kid != k.KID {
			return p.mismatch(k)
		}
	}
	key, err := p.open(c, k)
	if err != nil {
		return err
	}
	s, err := signer.NewHeld(c.Issuer, key, k.Public, nil)
	if err != nil {
		return err
	}
	s.At(p.Where(k))
	var probe [16]byte
	rand.Read(probe[:])
	_, err = s.SignJWS(map[string]any{"alg": k.Alg, "kid": k.KID, "typ": "pact-probe"}, probe[:], k.Alg)
	return err
}

// newHeldKey makes or finds the key u names and returns its info
// (Active). A pkcs11: URI without object or id, or "awskms:", makes a new
// key; one that names a key there uses it (alg then follows the key); an
// awskms:alias/NAME that names nothing gets a new key with that alias.
func (p *Profile) newHeldKey(ctx context.Context, issuer, alg string, u keyuri.URI) (KeyInfo, error) {
	if alg == "" {
		alg = signer.ES256
	}
	var (
		pub       crypto.PublicKey
		arn       string
		generated bool
	)
	switch u.Kind {
	case keyuri.PKCS11:
		if !pkcs11.Available {
			return KeyInfo{}, pkcs11.ErrNotBuilt
		}
		pin, from, err := p.pin(u)
		if err != nil {
			return KeyInfo{}, err
		}
		k, created, err := pkcs11.Generate(u, pin, alg)
		if err != nil {
			return KeyInfo{}, fmt.Errorf("the key at %s: %w", u.Describe(), withPINSource(err, from))
		}
		defer k.Close()
		pub, generated, u = k.Public(), created, k.URI()
	case keyuri.AWSKMS:
		c := p.kmsClient()
		desc := "pact personal-agent signing key for " + issuer + " (profile " + p.Name + ")"
		var info *keyplugin.KeyInfo
		var err error
		if u.KeyID == "" {
			info, err = c.Create(ctx, alg, "", desc)
			generated = err == nil
		} else {
			info, err = c.PublicKey(ctx, u.KeyID)
			var pe *keyplugin.Error
			if errors.As(err, &pe) && pe.Kind == keyplugin.KindNotFound && strings.HasPrefix(u.KeyID, "alias/") {
				info, err = c.Create(ctx, alg, u.KeyID, desc)
				generated = err == nil
			}
		}
		if err != nil {
			return KeyInfo{}, fmt.Errorf("the key %s: %w", u.Describe(), err)
		}
		pub, arn = info.Public, info.ARN
		if u.KeyID == "" {
			u.KeyID = arn
		}
	default:
		return KeyInfo{}, fmt.Errorf("%s is not a key held elsewhere", u)
	}
	alg, err := signer.AlgOfPublic(pub)
	if err != nil {
		return KeyInfo{}, fmt.Errorf("the key at %s cannot sign PA JWTs: %w", u.Describe(), err)
	}
	kid, err := signer.Thumbprint(pub)
	if err != nil {
		return KeyInfo{}, err
	}
	info := KeyInfo{KID: kid, Alg: alg, Created: p.now().Truncate(time.Second), Active: true,
		Public: jose.JSONWebKey{Key: pub, KeyID: kid, Algorithm: alg, Use: "sig"},
		URI:    u.String(), KeyARN: arn, Generated: generated}
	return info, nil
}

// nextLocation is where `pact key rotate` without --key makes the new
// key: where the active key lives (the keyring; the same token, a new
// object; a new KMS key).
func nextLocation(c *Config, now time.Time) keyuri.URI {
	a := c.Active()
	if a == nil {
		return keyuri.Default
	}
	u := a.KeyURI()
	switch u.Kind {
	case keyuri.PKCS11:
		return keyuri.URI{Kind: keyuri.PKCS11, Token: u.Token, Serial: u.Serial, SlotID: u.SlotID, ModulePath: u.ModulePath,
			Object: "pact-" + now.UTC().Format("20060102T150405Z")}
	case keyuri.AWSKMS:
		return keyuri.URI{Kind: keyuri.AWSKMS}
	}
	return keyuri.Default
}

// SetPIN keeps a token's PIN in the profile's secret store (`pact key
// pin`), checking first that the token accepts it; pin "" forgets it.
func (p *Profile) SetPIN(u keyuri.URI, pin string) error {
	if pin == "" {
		return p.Secrets.Delete(p.pinSecret(u))
	}
	if !pkcs11.Available {
		return pkcs11.ErrNotBuilt
	}
	k, err := pkcs11.Open(u, pin)
	if err != nil {
		return fmt.Errorf("the token %q: %w", tokenName(u), err)
	}
	k.Close()
	return p.Secrets.Set(p.pinSecret(u), pin)
}
