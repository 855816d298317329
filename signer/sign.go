package signer

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/asn1"
	"errors"
	"fmt"
	"math/big"
)

// ErrKeyUnavailable means the signing key cannot be used right now: a token
// absent or locked, a wrong PIN, a KMS key disabled or deleted, missing
// permissions, throttling, a network failure, a backend this build lacks.
// The error's message names the key and the cause in one sentence.
var ErrKeyUnavailable = errors.New("signing key unavailable")

// ErrKeyMismatch means the key found where the profile's key should be is
// not that key: its public part differs from the one recorded and
// published (kid), or it made a signature the published key does not
// verify. Nothing it signed is used.
var ErrKeyMismatch = errors.New("signing key does not match the published key")

// signature signs input (a JWS signing input) as alg says, through
// crypto.Signer: "ES256" (the ASN.1 DER signature a token or KMS returns,
// rewritten as the 64-byte R‖S of RFC 7518 §3.4), "RS256" (PKCS #1 v1.5)
// or "PS256" (RSASSA-PSS, salt length = hash length, RFC 7518 §3.5). For a
// key held elsewhere the signature is verified with the published key
// before it is returned (ErrKeyMismatch).
func (s *Signer) signature(input []byte, alg string) ([]byte, error) {
	digest := sha256.Sum256(input)
	var opts crypto.SignerOpts = crypto.SHA256
	switch pub := s.pub.(type) {
	case *ecdsa.PublicKey:
		if alg != ES256 {
			return nil, fmt.Errorf("an ES256 key cannot sign %s", alg)
		}
	case *rsa.PublicKey:
		switch alg {
		case RS256:
		case "PS256":
			opts = &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash, Hash: crypto.SHA256}
		default:
			return nil, fmt.Errorf("an RSA key cannot sign %s", alg)
		}
	default:
		return nil, fmt.Errorf("unsupported key type %T", pub)
	}
	sig, err := s.key.Sign(rand.Reader, digest[:], opts)
	if err != nil {
		return nil, err
	}
	if alg == ES256 {
		if sig, err = rawECDSA(sig, 32); err != nil {
			return nil, fmt.Errorf("%w: the key %s returned a malformed ES256 signature (%v)", ErrKeyMismatch, s.kid, err)
		}
	}
	if s.held && !verify(s.pub, opts, digest[:], sig) {
		key := s.kid
		if s.where != "" {
			key += " (" + s.where + ")"
		}
		return nil, fmt.Errorf("%w: the signing key %s made a signature its published key does not verify: "+
			"the token or KMS holds another key under that name now (replaced, or an alias moved), so nothing it signed is sent", ErrKeyMismatch, key)
	}
	return sig, nil
}

// rawECDSA rewrites an ASN.1 DER ECDSA signature (SEQUENCE { r, s }) as
// the fixed-width r‖s JWS wants, each size bytes. r and s must be
// positive and fit; anything else (trailing bytes too) is an error, never
// a truncated signature.
func rawECDSA(der []byte, size int) ([]byte, error) {
	var v struct{ R, S *big.Int }
	rest, err := asn1.Unmarshal(der, &v)
	if err != nil {
		return nil, err
	}
	if len(rest) != 0 {
		return nil, errors.New("trailing bytes after the signature")
	}
	if v.R.Sign() <= 0 || v.S.Sign() <= 0 || v.R.BitLen() > 8*size || v.S.BitLen() > 8*size {
		return nil, errors.New("r or s out of range")
	}
	out := make([]byte, 2*size)
	v.R.FillBytes(out[:size])
	v.S.FillBytes(out[size:])
	return out, nil
}

// verify checks a JWS signature (R‖S for ECDSA) over digest with pub.
func verify(pub crypto.PublicKey, opts crypto.SignerOpts, digest, sig []byte) bool {
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		n := (k.Curve.Params().BitSize + 7) / 8
		if len(sig) != 2*n {
			return false
		}
		r, s := new(big.Int).SetBytes(sig[:n]), new(big.Int).SetBytes(sig[n:])
		return ecdsa.Verify(k, digest, r, s)
	case *rsa.PublicKey:
		if pss, ok := opts.(*rsa.PSSOptions); ok {
			return rsa.VerifyPSS(k, crypto.SHA256, digest, sig, pss) == nil
		}
		return rsa.VerifyPKCS1v15(k, crypto.SHA256, digest, sig) == nil
	}
	return false
}
