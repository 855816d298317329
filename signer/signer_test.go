package signer

import (
	"crypto/ecdsa"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

func TestSection3_2_MintedTokenShape(t *testing.T) {
	for _, alg := range []string{ES256, RS256} {
		t.Run(alg, func(t *testing.T) {
			key, err := Generate(alg, 0)
			if err != nil {
				t.Fatal(err)
			}
			now := time.Unix(1_790_000_000, 0)
			s, err := New("https://pa.example.com", key, func() time.Time { return now })
			if err != nil {
				t.Fatal(err)
			}
			tok, err := s.Mint("aud-123", "sub-abc")
			if err != nil {
				t.Fatal(err)
			}
			parsed, err := jwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.ES256, jose.RS256})
			if err != nil {
				t.Fatal(err)
			}
			h := parsed.Headers[0]
			if h.Algorithm != alg || h.KeyID != s.KID() {
				t.Fatalf("header alg=%s kid=%s, want %s %s", h.Algorithm, h.KeyID, alg, s.KID())
			}
			var c Claims
			if err := parsed.Claims(key.Public(), &c); err != nil {
				t.Fatalf("signature does not verify: %v", err)
			}
			if c.Issuer != "https://pa.example.com" || c.Subject != "sub-abc" || c.Audience != "aud-123" {
				t.Fatalf("claims = %+v", c)
			}
			if c.IssuedAt != now.Unix() || c.Expiry-c.IssuedAt != 120 {
				t.Fatalf("iat=%d exp=%d, want exp = iat + 120", c.IssuedAt, c.Expiry)
			}
			// aud is one string, not an array (§3.2 "One string").
			payload, err := base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[1])
			if err != nil {
				t.Fatal(err)
			}
			var raw map[string]any
			if err := json.Unmarshal(payload, &raw); err != nil {
				t.Fatal(err)
			}
			if _, ok := raw["aud"].(string); !ok {
				t.Fatalf("aud is %T, want a string", raw["aud"])
			}
		})
	}
}

func TestSection3_2_EveryTokenHasAFreshJTI(t *testing.T) {
	key, _ := Generate(ES256, 0)
	s, _ := New("https://pa.example.com", key, nil)
	seen := map[string]bool{}
	for i := 0; i < 50; i++ {
		tok, _ := s.Mint("aud", "sub")
		parsed, _ := jwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.ES256})
		var c Claims
		parsed.UnsafeClaimsWithoutVerification(&c)
		if c.ID == "" || seen[c.ID] {
			t.Fatalf("jti %q empty or repeated", c.ID)
		}
		seen[c.ID] = true
	}
}

func TestKIDIsRFC7638Thumbprint(t *testing.T) {
	// RFC 7638 §3.1 example key and its thumbprint.
	const rfcKey = `{"kty":"RSA","n":"0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw","e":"AQAB","alg":"RS256","kid":"2011-04-29"}`
	var jwk jose.JSONWebKey
	if err := json.Unmarshal([]byte(rfcKey), &jwk); err != nil {
		t.Fatal(err)
	}
	tp, err := Thumbprint(jwk.Key)
	if err != nil {
		t.Fatal(err)
	}
	if tp != "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs" {
		t.Fatalf("thumbprint = %s", tp)
	}
}

func TestPrivateKeyRoundTripIsCompact(t *testing.T) {
	for _, alg := range []string{ES256, RS256} {
		k, _ := Generate(alg, 0)
		enc, err := MarshalPrivate(k)
		if err != nil {
			t.Fatal(err)
		}
		if len(enc) > 2400 {
			t.Errorf("%s key encodes to %d bytes: too large for Windows Credential Manager", alg, len(enc))
		}
		back, err := ParsePrivate(enc)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := Thumbprint(k.Public())
		b, _ := Thumbprint(back.Public())
		if a != b {
			t.Fatal("round trip changed the key")
		}
	}
	if _, err := Generate(RS256, 4096); err == nil {
		t.Fatal("4096-bit RSA accepted")
	}
	if _, err := Generate("HS256", 0); err == nil {
		t.Fatal("HS256 accepted")
	}
}

func TestPublicJWKHasNoPrivatePart(t *testing.T) {
	k, _ := Generate(ES256, 0)
	jwk, _ := PublicJWK(k)
	if _, ok := jwk.Key.(*ecdsa.PublicKey); !ok || !jwk.IsPublic() {
		t.Fatalf("PublicJWK key type %T", jwk.Key)
	}
	b, _ := json.Marshal(jwk)
	if strings.Contains(string(b), `"d"`) {
		t.Fatalf("private member in %s", b)
	}
}

func TestSection3_2_PairwiseSub(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	a1 := PairwiseSub(secret, "provider-a")
	if a1 != PairwiseSub(secret, "provider-a") {
		t.Fatal("sub not stable for one Provider")
	}
	if a1 == PairwiseSub(secret, "provider-b") {
		t.Fatal("same sub for two Providers")
	}
	if a1 == PairwiseSub([]byte("another secret, another profile!"), "provider-a") {
		t.Fatal("two profiles share a sub")
	}
	if len(a1) != 43 || strings.Contains(a1, "provider") {
		t.Fatalf("sub %q is not an opaque 256-bit value", a1)
	}
}

func BenchmarkMintES256(b *testing.B) {
	k, _ := Generate(ES256, 0)
	s, _ := New("https://pa.example.com", k, nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Mint("aud", "sub"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMintRS256(b *testing.B) {
	k, _ := Generate(RS256, 0)
	s, _ := New("https://pa.example.com", k, nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Mint("aud", "sub"); err != nil {
			b.Fatal(err)
		}
	}
}
