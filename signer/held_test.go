package signer

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/asn1"
	"errors"
	"io"
	"math/big"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// opaque is a key held elsewhere as Go sees it: only crypto.Signer, whose
// ECDSA signatures are ASN.1 DER (what a PKCS#11 token or a KMS returns).
// signWith, when set, is the key that really signs (a token that now holds
// another key under the same name).
type opaque struct {
	pub      crypto.PublicKey
	signWith crypto.Signer
	calls    atomic.Int32
}

func (o *opaque) Public() crypto.PublicKey { return o.pub }
func (o *opaque) Sign(r io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	o.calls.Add(1)
	return o.signWith.Sign(r, digest, opts)
}

func heldSigner(t *testing.T, alg string) (*Signer, crypto.Signer, *opaque) {
	t.Helper()
	k, err := Generate(alg, 0)
	if err != nil {
		t.Fatal(err)
	}
	jwk, err := PublicJWK(k)
	if err != nil {
		t.Fatal(err)
	}
	o := &opaque{pub: k.Public(), signWith: k}
	s, err := NewHeld("https://pa.example.com", o, jwk, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s, k, o
}

// A key held elsewhere signs through crypto.Signer: ES256's DER becomes
// the 64-byte R‖S a JWS verifier wants; RS256 is PKCS #1 v1.5. The kid is
// the thumbprint of the published public key and alg follows it.
func TestSection3_2_HeldKeySignsAVerifiableToken(t *testing.T) {
	for _, alg := range []string{ES256, RS256} {
		t.Run(alg, func(t *testing.T) {
			s, k, _ := heldSigner(t, alg)
			kid, _ := Thumbprint(k.Public())
			if s.KID() != kid || s.Alg() != alg || !s.Held() {
				t.Fatalf("kid %s alg %s held %v, want %s %s true", s.KID(), s.Alg(), s.Held(), kid, alg)
			}
			tok, err := s.Mint("aud", "sub")
			if err != nil {
				t.Fatal(err)
			}
			p, err := jwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.ES256, jose.RS256})
			if err != nil {
				t.Fatal(err)
			}
			if p.Headers[0].Algorithm != alg || p.Headers[0].KeyID != kid {
				t.Fatalf("header %+v", p.Headers[0])
			}
			var c Claims
			if err := p.Claims(k.Public(), &c); err != nil {
				t.Fatalf("the token does not verify with the published key: %v", err)
			}
			if alg == ES256 && len(strings.Split(tok, ".")[2]) != 86 { // 64 bytes, base64url
				t.Fatalf("ES256 signature is not 64 bytes R‖S: %q", strings.Split(tok, ".")[2])
			}
		})
	}
}

// A token or KMS that now holds another key under the same name signs
// with it: the signature does not verify with the published key, and the
// signer refuses it (ErrKeyMismatch) instead of handing out a token a
// Provider would refuse, or worse, one signed by a key nobody published.
func TestSection3_2_HeldKeySignedByAnotherKeyIsRefused(t *testing.T) {
	for _, alg := range []string{ES256, RS256} {
		s, _, o := heldSigner(t, alg)
		other, _ := Generate(alg, 0)
		o.signWith = other
		tok, err := s.Mint("aud", "sub")
		if !errors.Is(err, ErrKeyMismatch) || tok != "" {
			t.Fatalf("%s: Mint = %q, %v; want ErrKeyMismatch and no token", alg, tok, err)
		}
		if _, err := s.SignJWS(map[string]any{"alg": alg}, []byte("{}"), alg); !errors.Is(err, ErrKeyMismatch) {
			t.Fatalf("%s: SignJWS = %v, want ErrKeyMismatch", alg, err)
		}
		// The refusal names the key and where it lives.
		_, err = s.At("AWS KMS key arn:aws:kms:eu-west-2:111122223333:key/k1 (alias/pact)").Mint("aud", "sub")
		if want := s.KID() + " (AWS KMS key arn:aws:kms:eu-west-2:111122223333:key/k1 (alias/pact))"; err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: Mint = %v, want it to name %s", alg, err, want)
		}
	}
}

// The recorded kid must be the published key's thumbprint.
func TestNewHeldRefusesAKidThatIsNotTheThumbprint(t *testing.T) {
	k, _ := Generate(ES256, 0)
	jwk, _ := PublicJWK(k)
	jwk.KeyID = "not-the-thumbprint"
	if _, err := NewHeld("https://pa.example.com", k, jwk, nil); !errors.Is(err, ErrKeyMismatch) {
		t.Fatalf("err = %v, want ErrKeyMismatch", err)
	}
}

// A DER signature with r or s too large for P-256, or trailing bytes, is
// an error: never a truncated or padded signature.
func TestRawECDSARefusesMalformedSignatures(t *testing.T) {
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	good, _ := k.Sign(rand.Reader, make([]byte, 32), crypto.SHA256)
	if sig, err := rawECDSA(good, 32); err != nil || len(sig) != 64 {
		t.Fatalf("good DER: %v (%d bytes)", err, len(sig))
	}
	big33 := new(big.Int).Lsh(big.NewInt(1), 8*32) // 2^256: 33 bytes
	for name, der := range map[string][]byte{
		"r too large": mustDER(t, big33, big.NewInt(1)),
		"s zero":      mustDER(t, big.NewInt(1), big.NewInt(0)),
		"r negative":  mustDER(t, big.NewInt(-5), big.NewInt(1)),
		"trailing":    append(append([]byte{}, good...), 0),
		"garbage":     []byte("not der"),
	} {
		if _, err := rawECDSA(der, 32); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func mustDER(t *testing.T, r, s *big.Int) []byte {
	t.Helper()
	b, err := asn1.Marshal(struct{ R, S *big.Int }{r, s})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A key in memory is not held: its signatures are not verified again.
func TestInMemoryKeyIsNotHeld(t *testing.T) {
	k, _ := Generate(ES256, 0)
	s, _ := New("https://pa.example.com", k, nil)
	if s.Held() {
		t.Fatal("an in-memory key reported as held")
	}
}
