package delegation

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/go-jose/go-jose/v4"

	"github.com/pact-cli/pact/jwks"
)

// AllowedAlgs are the only JWS algorithms accepted for delegation tokens
// (PACT §5.4) and receipts (§5.6). "none", HMAC and every other algorithm
// are refused.
var AllowedAlgs = []jose.SignatureAlgorithm{jose.ES256, jose.RS256}

// MinRSABits is the smallest RSA modulus accepted for RS256.
const MinRSABits = 2048

// KeySource finds a public key by kid in the JWKS at jwksURI, fetching the
// set again once when the kid is unknown (key rotation). *jwks.Cache
// implements it; an unknown kid is reported with jwks.ErrUnknownKID.
type KeySource interface {
	Key(ctx context.Context, jwksURI, kid string) (*jose.JSONWebKey, error)
}

// VerifyError lists every failed check of a signed object (delegation
// token, receipt). Error() reads like "delegation token: aud mismatch;
// expired by 3m2s".
type VerifyError struct {
	What     string
	Problems []string
}

func (e *VerifyError) Error() string {
	return e.What + ": " + strings.Join(e.Problems, "; ")
}

// Header is the protected header of a compact JWS, as far as PACT uses it.
type Header struct {
	Alg  string   `json:"alg"`
	Kid  string   `json:"kid"`
	Typ  string   `json:"typ,omitempty"`
	Crit []string `json:"crit,omitempty"`
}

// Signed is a compact JWS whose signature has been verified.
type Signed struct {
	Header  Header
	Payload []byte
	// Key is the public key that verified the signature.
	Key *jose.JSONWebKey
}

// ParseHeader decodes and checks the protected header of compact without
// verifying anything else: three dot-separated parts, alg in AllowedAlgs, no
// "crit" (PACT defines no JWS extensions), kid present. It returns every
// header problem found.
func ParseHeader(compact string) (Header, []string) {
	var h Header
	parts := strings.Split(compact, ".")
	if len(parts) != 3 {
		return h, []string{fmt.Sprintf("not a compact JWS (%d parts, want 3)", len(parts))}
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		return h, []string{"JWS header is not base64url"}
	}
	var fields struct {
		Alg  string          `json:"alg"`
		Kid  string          `json:"kid"`
		Typ  string          `json:"typ"`
		Crit json.RawMessage `json:"crit"`
		B64  json.RawMessage `json:"b64"`
	}
	if err := json.Unmarshal(raw, &fields); err != nil {
		return h, []string{"JWS header is not a JSON object with string alg, kid and typ"}
	}
	h = Header{Alg: fields.Alg, Kid: fields.Kid, Typ: fields.Typ}
	var problems []string
	if !algAllowed(h.Alg) {
		problems = append(problems, fmt.Sprintf("alg %q not allowed (ES256 or RS256 only)", h.Alg))
	}
	if fields.Crit != nil {
		_ = json.Unmarshal(fields.Crit, &h.Crit)
		problems = append(problems, fmt.Sprintf("crit header %s not understood", fields.Crit))
	}
	if fields.B64 != nil {
		problems = append(problems, "b64 header not supported")
	}
	if h.Kid == "" {
		problems = append(problems, "kid missing from the JWS header")
	}
	return h, problems
}

func algAllowed(alg string) bool {
	for _, a := range AllowedAlgs {
		if string(a) == alg {
			return true
		}
	}
	return false
}

// VerifyJWS verifies compact against the key its kid names in the JWKS at
// jwksURI (via keys). what names the object in errors ("receipt").
// Check failures (header, unknown kid, unsuitable key, bad signature) come
// back as *VerifyError; a key fetch failure (network, HTTP) is returned as
// is, since it says nothing about the object.
func VerifyJWS(ctx context.Context, keys KeySource, jwksURI, compact, what string) (*Signed, error) {
	h, problems := ParseHeader(compact)
	if len(problems) > 0 {
		return nil, &VerifyError{What: what, Problems: problems}
	}
	key, err := keys.Key(ctx, jwksURI, h.Kid)
	if err != nil {
		if errors.Is(err, jwks.ErrUnknownKID) {
			return nil, &VerifyError{What: what, Problems: []string{fmt.Sprintf("unknown kid %q (not in %s)", h.Kid, jwksURI)}}
		}
		return nil, fmt.Errorf("%s: fetching its signing key: %w", what, err)
	}
	return VerifyJWSWithKey(compact, key, what)
}

// VerifyJWSWithKey verifies compact with key alone (offline verification).
// Every failure is a *VerifyError.
func VerifyJWSWithKey(compact string, key *jose.JSONWebKey, what string) (*Signed, error) {
	h, problems := ParseHeader(compact)
	if len(problems) > 0 {
		return nil, &VerifyError{What: what, Problems: problems}
	}
	if p := KeyProblem(key, h.Alg); p != "" {
		return nil, &VerifyError{What: what, Problems: []string{p}}
	}
	obj, err := jose.ParseSignedCompact(compact, AllowedAlgs)
	if err != nil {
		return nil, &VerifyError{What: what, Problems: []string{"malformed JWS"}}
	}
	payload, err := obj.Verify(key.Key)
	if err != nil {
		return nil, &VerifyError{What: what, Problems: []string{"signature does not verify with key " + fmt.Sprintf("%q", h.Kid)}}
	}
	return &Signed{Header: h, Payload: payload, Key: key}, nil
}

// KeyProblem says why key cannot verify alg, or "" when it can: it must be
// a public key, of the algorithm's type (P-256 for ES256, RSA of at least
// MinRSABits for RS256), with "use" absent or "sig" and "alg" absent or
// equal to alg.
func KeyProblem(key *jose.JSONWebKey, alg string) string {
	if key == nil || key.Key == nil {
		return "no key"
	}
	if key.Use != "" && key.Use != "sig" {
		return fmt.Sprintf("key %q has use %q, not sig", key.KeyID, key.Use)
	}
	if key.Algorithm != "" && key.Algorithm != alg {
		return fmt.Sprintf("key %q is for %s, JWS says %s", key.KeyID, key.Algorithm, alg)
	}
	switch k := key.Key.(type) {
	case *ecdsa.PublicKey:
		if alg != string(jose.ES256) || k.Curve != elliptic.P256() {
			return fmt.Sprintf("key %q (EC) does not fit alg %s", key.KeyID, alg)
		}
	case *rsa.PublicKey:
		if alg != string(jose.RS256) {
			return fmt.Sprintf("key %q (RSA) does not fit alg %s", key.KeyID, alg)
		}
		if k.N.BitLen() < MinRSABits {
			return fmt.Sprintf("key %q is RSA-%d, under %d bits", key.KeyID, k.N.BitLen(), MinRSABits)
		}
	default:
		return fmt.Sprintf("key %q is not an EC or RSA public key", key.KeyID)
	}
	return ""
}
