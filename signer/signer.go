// Package signer holds the personal agent's signing keys and mints the
// personal-agent JWT (PA JWT) of PACT §3.2.
//
// Keys are ES256 (P-256) or RS256 (2048 or 3072 bits). A key's kid is its
// RFC 7638 JWK thumbprint (SHA-256, base64url). Private keys are serialised
// as base64 PKCS#8 DER, compact enough for every OS keyring.
package signer

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// Algorithms PACT allows for PA JWTs (§3.2).
const (
	ES256 = "ES256"
	RS256 = "RS256"
)

// TokenLifetime is exp − iat for every PA JWT: 120 s, the reference signer's
// value (§3.2 allows at most 300 s).
const TokenLifetime = 120 * time.Second

// MaxRSABits is the largest RSA key accepted: larger private keys do not fit
// Windows Credential Manager.
const MaxRSABits = 3072

// Generate makes a new private key for alg. rsaBits applies to RS256
// (0 = 2048; at most MaxRSABits).
func Generate(alg string, rsaBits int) (crypto.Signer, error) {
	switch alg {
	case ES256:
		return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case RS256:
		if rsaBits == 0 {
			rsaBits = 2048
		}
		if rsaBits < 2048 || rsaBits > MaxRSABits {
			return nil, fmt.Errorf("RSA keys must be 2048 to %d bits (larger keys do not fit every OS keyring); got %d", MaxRSABits, rsaBits)
		}
		return rsa.GenerateKey(rand.Reader, rsaBits)
	}
	return nil, fmt.Errorf("unsupported algorithm %q: PACT allows ES256 or RS256", alg)
}

// AlgOf returns the PACT algorithm for a key, from its public part.
func AlgOf(k crypto.Signer) (string, error) {
	return AlgOfPublic(k.Public())
}

// AlgOfPublic returns the PACT algorithm for a public key: ES256 for a
// P-256 key, RS256 for an RSA key of at least 2048 bits (§3.2 allows no
// other). Anything else is an error naming what it is.
func AlgOfPublic(pub crypto.PublicKey) (string, error) {
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		if k.Curve != elliptic.P256() {
			return "", fmt.Errorf("EC keys must use P-256 for ES256, not %s", k.Curve.Params().Name)
		}
		return ES256, nil
	case *rsa.PublicKey:
		if k.N.BitLen() < 2048 {
			return "", fmt.Errorf("RSA keys must have at least 2048 bits for RS256, not %d", k.N.BitLen())
		}
		return RS256, nil
	}
	return "", fmt.Errorf("unsupported key type %T: PACT allows ES256 (P-256) or RS256 (RSA) keys", pub)
}

// MarshalPrivate encodes k as base64 (standard alphabet) PKCS#8 DER.
func MarshalPrivate(k crypto.Signer) (string, error) {
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(der), nil
}

// ParsePrivate decodes MarshalPrivate's output.
func ParsePrivate(s string) (crypto.Signer, error) {
	der, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("stored private key is not base64: %w", err)
	}
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("stored private key is not PKCS#8: %w", err)
	}
	s2, ok := k.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("stored key of type %T cannot sign", k)
	}
	if _, err := AlgOf(s2); err != nil {
		return nil, err
	}
	return s2, nil
}

// Thumbprint is the RFC 7638 SHA-256 JWK thumbprint of pub, base64url
// without padding. It is the kid of every key pact makes.
func Thumbprint(pub crypto.PublicKey) (string, error) {
	tp, err := (&jose.JSONWebKey{Key: pub}).Thumbprint(crypto.SHA256)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(tp), nil
}

// PublicJWK returns the public JWK of k with kid = Thumbprint, alg and
// use "sig".
func PublicJWK(k crypto.Signer) (jose.JSONWebKey, error) {
	alg, err := AlgOf(k)
	if err != nil {
		return jose.JSONWebKey{}, err
	}
	kid, err := Thumbprint(k.Public())
	if err != nil {
		return jose.JSONWebKey{}, err
	}
	return jose.JSONWebKey{Key: k.Public(), KeyID: kid, Algorithm: alg, Use: "sig"}, nil
}

// Signer mints PA JWTs with one key, through crypto.Signer: a private key
// in memory, or a key held elsewhere (a PKCS#11 token, a KMS; see NewHeld)
// that signs but never leaves. It is safe for concurrent use.
type Signer struct {
	issuer string
	kid    string
	alg    string
	key    crypto.Signer
	// pub is the public key every token is verified with: the key's own
	// for an in-memory key, the published one for a key held elsewhere.
	pub crypto.PublicKey
	// held: the key is held elsewhere, so every signature it makes is
	// verified with pub before a token leaves (a token or KMS that now
	// holds another key under the same name is refused).
	held   bool
	header string // base64url of the protected header, fixed per key
	now    func() time.Time
	stock  Stock  // tokens minted ahead by other processes (nil: none)
	where  string // where a held key lives, for messages (At)
}

// At records where a held key lives ("AWS KMS key ARN (alias/NAME)",
// "token \"T\", object \"O\""), so that a failure names the place as
// well as the kid.
func (s *Signer) At(where string) *Signer {
	s.where = where
	return s
}

// New returns a Signer for issuer using key, a private key in memory; kid
// is its thumbprint. now may be nil (time.Now).
func New(issuer string, key crypto.Signer, now func() time.Time) (*Signer, error) {
	jwk, err := PublicJWK(key)
	if err != nil {
		return nil, err
	}
	return newSigner(issuer, key, jwk, false, now)
}

// NewHeld returns a Signer for issuer using key, a key held outside this
// process (a PKCS#11 token, a KMS), whose public half was recorded and
// published as published. The kid and alg are published's (its kid must
// be its RFC 7638 thumbprint). The key's own public part is never asked
// for here: every signature it makes is verified with the published key
// before a token is handed out, and one that does not verify fails with
// ErrKeyMismatch (the token or KMS now holds another key under that name).
func NewHeld(issuer string, key crypto.Signer, published jose.JSONWebKey, now func() time.Time) (*Signer, error) {
	pub := published.Public()
	alg, err := AlgOfPublic(pub.Key)
	if err != nil {
		return nil, err
	}
	kid, err := Thumbprint(pub.Key)
	if err != nil {
		return nil, err
	}
	if published.KeyID != kid {
		return nil, fmt.Errorf("%w: the recorded key %s has the thumbprint %s", ErrKeyMismatch, published.KeyID, kid)
	}
	return newSigner(issuer, key, jose.JSONWebKey{Key: pub.Key, KeyID: kid, Algorithm: alg, Use: "sig"}, true, now)
}

func newSigner(issuer string, key crypto.Signer, jwk jose.JSONWebKey, held bool, now func() time.Time) (*Signer, error) {
	if issuer == "" {
		return nil, errors.New("issuer is empty")
	}
	h, err := json.Marshal(struct {
		Alg string `json:"alg"`
		Kid string `json:"kid"`
		Typ string `json:"typ"`
	}{jwk.Algorithm, jwk.KeyID, "JWT"})
	if err != nil {
		return nil, err
	}
	if now == nil {
		now = time.Now
	}
	return &Signer{issuer: issuer, kid: jwk.KeyID, alg: jwk.Algorithm, key: key, pub: jwk.Key, held: held,
		header: base64.RawURLEncoding.EncodeToString(h), now: now}, nil
}

// Held reports whether the key is held outside this process (NewHeld):
// each signature is then a round trip to a token or a KMS.
func (s *Signer) Held() bool { return s.held }

// KID is the key id put in every token's header.
func (s *Signer) KID() string { return s.kid }

// Alg is ES256 or RS256.
func (s *Signer) Alg() string { return s.alg }

// Issuer is the iss of every token.
func (s *Signer) Issuer() string { return s.issuer }

// Claims are the PA JWT claims of §3.2, as minted.
type Claims struct {
	Issuer   string `json:"iss"`
	Subject  string `json:"sub"`
	Audience string `json:"aud"` // one string, verbatim (§3.1)
	IssuedAt int64  `json:"iat"` // seconds since the epoch
	Expiry   int64  `json:"exp"` // IssuedAt + 120
	ID       string `json:"jti"` // random, 128 bits, base64url
}

// Mint returns a fresh compact PA JWT for audience (the value the Provider
// assigned) and sub (the pairwise subject, see PairwiseSub): header alg and
// kid; claims iss, sub, aud, iat, exp = iat + 120 s, random jti. Every call
// makes a new token; callers never reuse one across requests.
func (s *Signer) Mint(audience, sub string) (string, error) {
	if audience == "" || sub == "" {
		return "", errors.New("PA JWT needs an audience and a sub")
	}
	var jti [16]byte
	if _, err := rand.Read(jti[:]); err != nil {
		return "", err
	}
	now := s.now().Unix()
	c := Claims{
		Issuer: s.issuer, Subject: sub, Audience: audience,
		IssuedAt: now, Expiry: now + int64(TokenLifetime/time.Second),
		ID: base64.RawURLEncoding.EncodeToString(jti[:]),
	}
	payload, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	return s.sign(payload)
}

// sign returns the compact JWS (RFC 7515 §7.1) of payload: the fixed
// header, the payload, and the signature over "header.payload" (ES256 as
// R‖S, RS256 as PKCS #1 v1.5; see signature).
func (s *Signer) sign(payload []byte) (string, error) {
	enc := base64.RawURLEncoding
	buf := make([]byte, 0, len(s.header)+1+enc.EncodedLen(len(payload))+1+enc.EncodedLen(512))
	buf = append(buf, s.header...)
	buf = append(buf, '.')
	buf = enc.AppendEncode(buf, payload)
	sig, err := s.signature(buf, s.alg)
	if err != nil {
		return "", err
	}
	buf = append(buf, '.')
	buf = enc.AppendEncode(buf, sig)
	return string(buf), nil
}

// SubSecretSize is the length in bytes of a profile's pairwise-sub secret.
const SubSecretSize = 32

// NewSubSecret returns a fresh random pairwise-sub secret.
func NewSubSecret() ([]byte, error) {
	b := make([]byte, SubSecretSize)
	_, err := rand.Read(b)
	return b, err
}

// PairwiseSub derives the sub sent to one Provider: HMAC-SHA256 of the
// Provider's audience under the profile's secret, base64url (43 characters).
// The same profile always sends the same sub to one Provider and unlinkable
// values to different ones; it holds no personal data (§3.2).
func PairwiseSub(secret []byte, audience string) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("pact pairwise sub v1\x00"))
	m.Write([]byte(audience))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}
