// Package devicetoken is the device token of `pact serve`: the short-lived
// JWT with which an enrolled device authenticates every call to its server,
// and the proof of possession of the device key sent once at enrolment.
// The device mints them (Mint, MintProof); the server verifies them
// (Verify, VerifyProof). Replay (jti) and revocation are the server's, in
// its database; the format and the checks of one token are here.
//
// A device token is a compact JWS (RFC 7515), ES256 only:
//
//	header  {"alg": "ES256", "typ": "JWT", "kid": RFC 7638 thumbprint of the device key}
//	claims  {"iss": deviceId, "sub": deviceId, "aud": the server's issuer,
//	         "iat": now, "exp": iat + 60 s at most, "jti": 128 random bits, base64url}
//
// sent as "Authorization: PACT-Device <jwt>". No bearer secret is stored on
// the device: a token is good for one request (its jti is refused the
// second time) and for at most a minute.
package devicetoken

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/pact-cli/pact/signer"
)

// Scheme is the Authorization scheme of a device token. It is pact's own
// (not "Bearer"), so that a device token can never be taken for, or sent
// as, a PA JWT.
const Scheme = "PACT-Device"

// Lifetime is exp − iat of every token minted; MaxLifetime the most a
// server accepts.
const (
	Lifetime    = 60 * time.Second
	MaxLifetime = 60 * time.Second
)

// ClockSkew is the clock difference between device and server tolerated
// on iat and exp (as PACT §3.2 allows Providers for PA JWTs).
const ClockSkew = 30 * time.Second

// ProofType is the typ header of the enrolment proof.
const ProofType = "pact-enrol+jwt"

// Claims are a device token's claims.
type Claims struct {
	Issuer   string `json:"iss"` // the device id
	Subject  string `json:"sub"` // the device id
	Audience string `json:"aud"` // the server's issuer, one string
	IssuedAt int64  `json:"iat"`
	Expiry   int64  `json:"exp"`
	ID       string `json:"jti"`
}

// NewKey makes a device key: ECDSA P-256 (ES256).
func NewKey() (crypto.Signer, error) {
	return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
}

func checkKey(key crypto.Signer) error {
	if k, ok := key.Public().(*ecdsa.PublicKey); !ok || k.Curve != elliptic.P256() {
		return errors.New("a device key is ECDSA P-256 (ES256)")
	}
	return nil
}

func randomID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

func sign(key crypto.Signer, header map[jose.HeaderKey]any, claims any) (string, error) {
	if err := checkKey(key); err != nil {
		return "", err
	}
	opts := &jose.SignerOptions{ExtraHeaders: header}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, opts)
	if err != nil {
		return "", err
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	jws, err := s.Sign(payload)
	if err != nil {
		return "", err
	}
	return jws.CompactSerialize()
}

// Mint returns a fresh device token for deviceID to the server whose
// issuer is audience: a new jti every call, exp = iat + Lifetime.
func Mint(key crypto.Signer, deviceID, audience string, now time.Time) (string, error) {
	if deviceID == "" || audience == "" {
		return "", errors.New("a device token needs the device id and the server's issuer")
	}
	kid, err := signer.Thumbprint(key.Public())
	if err != nil {
		return "", err
	}
	jti, err := randomID()
	if err != nil {
		return "", err
	}
	iat := now.Unix()
	return sign(key, map[jose.HeaderKey]any{"typ": "JWT", "kid": kid}, Claims{
		Issuer: deviceID, Subject: deviceID, Audience: audience,
		IssuedAt: iat, Expiry: iat + int64(Lifetime/time.Second), ID: jti,
	})
}

// Header is the Authorization header value carrying tok.
func Header(tok string) string { return Scheme + " " + tok }

// FromHeader returns the token of an "Authorization: PACT-Device <jwt>"
// value (scheme compared without case), or "" when it is not one.
func FromHeader(v string) string {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(v), " ")
	if !ok || !strings.EqualFold(scheme, Scheme) {
		return ""
	}
	return strings.TrimSpace(tok)
}

// Device is what the server knows of the device a token names.
type Device struct {
	KID string           // RFC 7638 thumbprint of its key
	Key *jose.JSONWebKey // its public key
}

// ErrUnknown is returned by a Lookup for a device id the server does not
// know (or that is not a device at all); Verify then refuses the token
// exactly as it refuses a bad signature.
var ErrUnknown = errors.New("unknown device")

// Error is a refused token. Public is safe to show the caller: vague
// before the signature is verified (who may hold the key is unknown), the
// failed claims after it. Checks lists every failed check.
type Error struct {
	Public string
	Checks []string
}

func (e *Error) Error() string { return "device token refused: " + strings.Join(e.Checks, "; ") }

func refused(public string, checks ...string) *Error { return &Error{Public: public, Checks: checks} }

const notThisServer = "the device token was not signed by a device enrolled here"

// Verify checks a device token for the server whose issuer is audience, at
// now: ES256 only (no "none", HMAC or other algorithms, no unknown crit
// header), iss = sub = a device id that lookup knows, kid = that device's
// key, the signature by that key, aud = audience as one string, iat
// present and at most ClockSkew ahead, exp present, after iat, at most
// MaxLifetime after it and not passed (ClockSkew), jti present (16 to 128
// characters). It returns the claims; the caller then refuses a revoked
// device and a jti seen before (until Expiry + ClockSkew). A lookup error
// other than ErrUnknown is returned as it is (the database failed).
func Verify(raw, audience string, now time.Time, lookup func(deviceID string) (Device, error)) (Claims, error) {
	sig, err := jose.ParseSignedCompact(raw, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		return Claims{}, refused(notThisServer, "parse: "+err.Error())
	}
	if len(sig.Signatures) != 1 {
		return Claims{}, refused(notThisServer, "not exactly one signature")
	}
	h := sig.Signatures[0].Header
	var unverified Claims
	if err := json.Unmarshal(sig.UnsafePayloadWithoutVerification(), &unverified); err != nil {
		return Claims{}, refused(notThisServer, "claims are not a JSON object")
	}
	if unverified.Issuer == "" || unverified.Issuer != unverified.Subject {
		return Claims{}, refused(notThisServer, "iss and sub must both be the device id")
	}
	dev, err := lookup(unverified.Issuer)
	if errors.Is(err, ErrUnknown) {
		return Claims{}, refused(notThisServer, "unknown device "+unverified.Issuer)
	}
	if err != nil {
		return Claims{}, err
	}
	if h.KeyID != dev.KID {
		return Claims{}, refused(notThisServer, "kid is not the device's key")
	}
	payload, err := sig.Verify(dev.Key)
	if err != nil {
		return Claims{}, refused(notThisServer, "signature: "+err.Error())
	}
	var c Claims
	var raw2 map[string]json.RawMessage
	if json.Unmarshal(payload, &c) != nil || json.Unmarshal(payload, &raw2) != nil {
		return Claims{}, refused(notThisServer, "claims are not a JSON object")
	}
	if c.Issuer != unverified.Issuer || c.Subject != c.Issuer {
		return Claims{}, refused(notThisServer, "iss changed")
	}
	var checks []string
	if aud, ok := raw2["aud"]; !ok || len(aud) == 0 || aud[0] != '"' {
		checks = append(checks, "aud must be one string (the server's issuer)")
	} else if c.Audience != audience {
		checks = append(checks, fmt.Sprintf("aud is %q, not this server's issuer %q", c.Audience, audience))
	}
	checks = append(checks, timeChecks(raw2, c.IssuedAt, c.Expiry, now)...)
	if n := len(c.ID); n < 16 || n > 128 {
		checks = append(checks, "jti must be 16 to 128 characters")
	}
	if len(checks) > 0 {
		return Claims{}, refused("the device token was refused: "+strings.Join(checks, "; "), checks...)
	}
	return c, nil
}

// timeChecks applies the iat/exp rules of a device token or proof.
func timeChecks(raw map[string]json.RawMessage, iat, exp int64, now time.Time) []string {
	var checks []string
	if _, ok := raw["iat"]; !ok {
		checks = append(checks, "iat missing")
	}
	if _, ok := raw["exp"]; !ok {
		checks = append(checks, "exp missing")
	}
	if len(checks) > 0 {
		return checks
	}
	skew := int64(ClockSkew / time.Second)
	n := now.Unix()
	if iat > n+skew {
		checks = append(checks, fmt.Sprintf("iat is %ds in the future (check this device's clock)", iat-n))
	}
	if exp <= iat {
		checks = append(checks, "exp is not after iat")
	} else if exp-iat > int64(MaxLifetime/time.Second) {
		checks = append(checks, fmt.Sprintf("exp is %ds after iat, more than %ds", exp-iat, int64(MaxLifetime/time.Second)))
	}
	if n >= exp+skew {
		checks = append(checks, fmt.Sprintf("expired %ds ago (check this device's clock)", n-exp))
	}
	return checks
}

// ProofClaims are the claims of an enrolment proof.
type ProofClaims struct {
	Audience string `json:"aud"` // the server's issuer
	IssuedAt int64  `json:"iat"`
	Expiry   int64  `json:"exp"`
	ID       string `json:"jti"`
}

// MintProof proves possession of key at enrolment: a JWS with typ
// ProofType, the public JWK in its header (as RFC 9449 DPoP proofs carry
// it), aud = the server's issuer, iat, exp = iat + Lifetime, jti.
func MintProof(key crypto.Signer, audience string, now time.Time) (string, error) {
	if err := checkKey(key); err != nil {
		return "", err
	}
	jwk := jose.JSONWebKey{Key: key.Public(), Algorithm: string(jose.ES256), Use: "sig"}
	jti, err := randomID()
	if err != nil {
		return "", err
	}
	iat := now.Unix()
	return sign(key, map[jose.HeaderKey]any{"typ": ProofType, "jwk": jwk}, ProofClaims{
		Audience: audience, IssuedAt: iat, Expiry: iat + int64(Lifetime/time.Second), ID: jti,
	})
}

// VerifyProof checks an enrolment proof for the server whose issuer is
// audience and returns the device's public key and its kid (RFC 7638
// thumbprint): ES256, typ ProofType, a public P-256 JWK in the header (no
// private member), the signature by that key, aud, iat and exp as for a
// token.
func VerifyProof(raw, audience string, now time.Time) (*jose.JSONWebKey, string, error) {
	sig, err := jose.ParseSignedCompact(raw, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil || len(sig.Signatures) != 1 {
		return nil, "", refused("the enrolment proof is not a signed JWT", "parse")
	}
	h := sig.Signatures[0].Header
	if typ, _ := h.ExtraHeaders["typ"].(string); typ != ProofType {
		return nil, "", refused("the enrolment proof has the wrong typ", "typ")
	}
	jwk := h.JSONWebKey
	if jwk == nil || !jwk.IsPublic() {
		return nil, "", refused("the enrolment proof carries no public key", "jwk")
	}
	pub, ok := jwk.Key.(*ecdsa.PublicKey)
	if !ok || pub.Curve != elliptic.P256() {
		return nil, "", refused("the device key must be ECDSA P-256 (ES256)", "jwk kty/crv")
	}
	payload, err := sig.Verify(jwk)
	if err != nil {
		return nil, "", refused("the enrolment proof's signature does not verify", "signature")
	}
	var c ProofClaims
	var raw2 map[string]json.RawMessage
	if json.Unmarshal(payload, &c) != nil || json.Unmarshal(payload, &raw2) != nil {
		return nil, "", refused("the enrolment proof's claims are not a JSON object", "claims")
	}
	var checks []string
	if c.Audience != audience {
		checks = append(checks, fmt.Sprintf("aud is %q, not this server's issuer %q", c.Audience, audience))
	}
	checks = append(checks, timeChecks(raw2, c.IssuedAt, c.Expiry, now)...)
	if len(checks) > 0 {
		return nil, "", refused("the enrolment proof was refused: "+strings.Join(checks, "; "), checks...)
	}
	kid, err := signer.Thumbprint(pub)
	if err != nil {
		return nil, "", err
	}
	out := jose.JSONWebKey{Key: pub, KeyID: kid, Algorithm: string(jose.ES256), Use: "sig"}
	return &out, kid, nil
}
