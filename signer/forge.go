package signer

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// SignJWS returns the compact JWS (RFC 7515 §7.1) of payload under the
// protected header given, signed with this Signer's private key as alg
// says: "ES256" (P-256 keys), "RS256" or "PS256" (RSA keys; PS256 is
// RSASSA-PSS with SHA-256, RFC 7518 §3.5). The header is written as given:
// nothing is checked or added, so its alg or kid may deliberately
// disagree with the signature.
//
// It exists for `pact provider check` (package providercheck), which sends
// personal-agent JWTs a Provider must refuse (PACT §3.2); everything else
// mints with Mint. Errors: an alg the key cannot make, a signing failure.
func (s *Signer) SignJWS(header map[string]any, payload []byte, alg string) (string, error) {
	h, err := json.Marshal(header)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	input := enc.EncodeToString(h) + "." + enc.EncodeToString(payload)
	digest := sha256.Sum256([]byte(input))
	var sig []byte
	switch k := s.key.(type) {
	case *ecdsa.PrivateKey:
		if alg != "ES256" {
			return "", fmt.Errorf("an ES256 key cannot sign %s", alg)
		}
		r, ss, err := ecdsa.Sign(rand.Reader, k, digest[:])
		if err != nil {
			return "", err
		}
		sig = make([]byte, 64)
		r.FillBytes(sig[:32])
		ss.FillBytes(sig[32:])
	case *rsa.PrivateKey:
		switch alg {
		case "RS256":
			sig, err = rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, digest[:])
		case "PS256":
			sig, err = rsa.SignPSS(rand.Reader, k, crypto.SHA256, digest[:], &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash})
		default:
			return "", fmt.Errorf("an RSA key cannot sign %s", alg)
		}
		if err != nil {
			return "", err
		}
	default:
		return "", fmt.Errorf("unsupported key type %T", s.key)
	}
	return input + "." + enc.EncodeToString(sig), nil
}
