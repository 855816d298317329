package devicetoken

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/pact-cli/pact/signer"
)

const aud = "https://pa.example.com"

var t0 = time.Unix(1_790_000_000, 0)

func newDevice(t *testing.T) (crypto.Signer, func(string) (Device, error)) {
	t.Helper()
	k, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	kid, _ := signer.Thumbprint(k.Public())
	return k, func(id string) (Device, error) {
		if id != "d_1" {
			return Device{}, ErrUnknown
		}
		return Device{KID: kid, Key: &jose.JSONWebKey{Key: k.Public(), KeyID: kid}}, nil
	}
}

// signRaw signs arbitrary claims and header members with key (ES256), to
// build tokens Mint would never make.
func signRaw(t *testing.T, key any, alg jose.SignatureAlgorithm, header map[jose.HeaderKey]any, claims map[string]any) string {
	t.Helper()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, &jose.SignerOptions{ExtraHeaders: header})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(claims)
	jws, err := s.Sign(b)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := jws.CompactSerialize()
	return out
}

func TestMintedTokenShape(t *testing.T) {
	k, lookup := newDevice(t)
	tok, err := Mint(k, "d_1", aud, t0)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(tok, ".")
	hb, _ := base64.RawURLEncoding.DecodeString(parts[0])
	var h map[string]any
	json.Unmarshal(hb, &h)
	kid, _ := signer.Thumbprint(k.Public())
	if h["alg"] != "ES256" || h["typ"] != "JWT" || h["kid"] != kid {
		t.Fatalf("header %v", h)
	}
	c, err := Verify(tok, aud, t0.Add(10*time.Second), lookup)
	if err != nil {
		t.Fatal(err)
	}
	if c.Issuer != "d_1" || c.Subject != "d_1" || c.Audience != aud || c.Expiry-c.IssuedAt != 60 || len(c.ID) < 16 {
		t.Fatalf("claims %+v", c)
	}
	tok2, _ := Mint(k, "d_1", aud, t0)
	c2, _ := Verify(tok2, aud, t0, lookup)
	if c2.ID == c.ID {
		t.Fatal("two tokens with one jti")
	}
	if got := FromHeader(Header(tok)); got != tok {
		t.Fatalf("FromHeader(Header) = %q", got)
	}
	if FromHeader("Bearer "+tok) != "" {
		t.Fatal("a Bearer header was taken for a device token")
	}
}

// TestDeviceToken_EveryBadTokenIsRefused: each broken rule alone is refused.
func TestDeviceToken_EveryBadTokenIsRefused(t *testing.T) {
	k, lookup := newDevice(t)
	kid, _ := signer.Thumbprint(k.Public())
	other, _ := NewKey()
	otherKID, _ := signer.Thumbprint(other.Public())
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	good := func() map[string]any {
		return map[string]any{"iss": "d_1", "sub": "d_1", "aud": aud, "iat": t0.Unix(), "exp": t0.Unix() + 60, "jti": "0123456789abcdefXYZ"}
	}
	hdr := map[jose.HeaderKey]any{"kid": kid, "typ": "JWT"}
	with := func(k string, v any) map[string]any { c := good(); c[k] = v; return c }
	without := func(k string) map[string]any { c := good(); delete(c, k); return c }
	cases := map[string]string{
		"good (control)":        signRaw(t, k, jose.ES256, hdr, good()),
		"another key":           signRaw(t, other, jose.ES256, hdr, good()),
		"another key's kid":     signRaw(t, other, jose.ES256, map[jose.HeaderKey]any{"kid": otherKID}, good()),
		"unknown device":        signRaw(t, k, jose.ES256, hdr, with("iss", "d_2")),
		"iss is not sub":        signRaw(t, k, jose.ES256, hdr, with("sub", "d_2")),
		"RS256":                 signRaw(t, rsaKey, jose.RS256, hdr, good()),
		"HS256":                 signRaw(t, []byte("0123456789abcdef0123456789abcdef"), jose.HS256, hdr, good()),
		"aud of another server": signRaw(t, k, jose.ES256, hdr, with("aud", "https://other.example")),
		"aud as a list":         signRaw(t, k, jose.ES256, hdr, with("aud", []string{aud})),
		"no iat":                signRaw(t, k, jose.ES256, hdr, without("iat")),
		"no exp":                signRaw(t, k, jose.ES256, hdr, without("exp")),
		"lives 61 s":            signRaw(t, k, jose.ES256, hdr, with("exp", t0.Unix()+61)),
		"iat 31 s ahead":        signRaw(t, k, jose.ES256, hdr, with("iat", t0.Unix()+31)),
		"expired":               signRaw(t, k, jose.ES256, hdr, with("exp", t0.Unix()-31)),
		"no jti":                signRaw(t, k, jose.ES256, hdr, without("jti")),
		"short jti":             signRaw(t, k, jose.ES256, hdr, with("jti", "abc")),
		"crit header":           signRaw(t, k, jose.ES256, map[jose.HeaderKey]any{"kid": kid, "crit": []string{"exp2"}, "exp2": 1}, good()),
	}
	for name, tok := range cases {
		_, err := Verify(tok, aud, t0, lookup)
		if name == "good (control)" {
			if err != nil {
				t.Fatalf("the control token was refused: %v", err)
			}
			continue
		}
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%s: accepted or not an *Error: %v", name, err)
			continue
		}
		if e.Public == "" {
			t.Errorf("%s: no public message", name)
		}
	}
	// Before the signature is checked, the answer says nothing of why.
	_, err := Verify(cases["unknown device"], aud, t0, lookup)
	if e := err.(*Error); e.Public != notThisServer {
		t.Fatalf("unknown device: public %q", e.Public)
	}
	// After it, every failed claim is named at once.
	multi := signRaw(t, k, jose.ES256, hdr, map[string]any{"iss": "d_1", "sub": "d_1", "aud": "x", "iat": t0.Unix() - 200, "exp": t0.Unix() - 100, "jti": "0123456789abcdefXYZ"})
	_, err = Verify(multi, aud, t0, lookup)
	if e := err.(*Error); len(e.Checks) < 3 || !strings.Contains(e.Public, "aud") || !strings.Contains(e.Public, "expired") {
		t.Fatalf("not every failed check named: %+v", e)
	}
}

func TestEnrolmentProof(t *testing.T) {
	k, _ := NewKey()
	proof, err := MintProof(k, aud, t0)
	if err != nil {
		t.Fatal(err)
	}
	jwk, kid, err := VerifyProof(proof, aud, t0.Add(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := signer.Thumbprint(k.Public())
	if kid != want || jwk.KeyID != want || !jwk.IsPublic() {
		t.Fatalf("kid %s, want %s", kid, want)
	}
	if _, _, err := VerifyProof(proof, "https://other.example", t0); err == nil {
		t.Fatal("a proof for another server was accepted")
	}
	if _, _, err := VerifyProof(proof, aud, t0.Add(2*time.Minute)); err == nil {
		t.Fatal("an expired proof was accepted")
	}
	// A proof whose header key is not the signing key.
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	forged := signRaw(t, other, jose.ES256, map[jose.HeaderKey]any{"typ": ProofType, "jwk": jose.JSONWebKey{Key: k.Public()}},
		map[string]any{"aud": aud, "iat": t0.Unix(), "exp": t0.Unix() + 60, "jti": "0123456789abcdef"})
	if _, _, err := VerifyProof(forged, aud, t0); err == nil {
		t.Fatal("a proof signed by another key than its jwk was accepted")
	}
	// A token is not a proof.
	tok, _ := Mint(k, "d_1", aud, t0)
	if _, _, err := VerifyProof(tok, aud, t0); err == nil {
		t.Fatal("a device token was accepted as a proof")
	}
}
