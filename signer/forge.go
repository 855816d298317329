package signer

import (
	"encoding/base64"
	"encoding/json"
)

// SignJWS returns the compact JWS (RFC 7515 §7.1) of payload under the
// protected header given, signed with this Signer's key as alg says:
// "ES256" (P-256 keys), "RS256" or "PS256" (RSA keys; PS256 is
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
	sig, err := s.signature([]byte(input), alg)
	if err != nil {
		return "", err
	}
	return input + "." + enc.EncodeToString(sig), nil
}
