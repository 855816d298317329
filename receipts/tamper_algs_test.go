package receipts

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"

	"github.com/pact-cli/pact/delegation"
)

// flipJWSBit flips one bit in the middle of a compact JWS's signature.
func flipJWSBit(t *testing.T, compact string) string {
	t.Helper()
	parts := strings.Split(compact, ".")
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(sig) == 0 {
		t.Fatalf("signature part %q: %v", parts[2], err)
	}
	sig[len(sig)/2] ^= 0x01
	parts[2] = base64.RawURLEncoding.EncodeToString(sig)
	return strings.Join(parts, ".")
}

// TestSection5_6_TamperedReceiptRefusedEveryAlgorithm: for each algorithm
// a receipt may be signed with (ES256, RS256), a receipt whose signed
// payload was edited, whose signature has one bit flipped, or which another
// key with the same kid signed, is refused online and offline; the
// untouched receipt verifies (so the refusal is the signature's).
func TestSection5_6_TamperedReceiptRefusedEveryAlgorithm(t *testing.T) {
	for _, alg := range []jose.SignatureAlgorithm{jose.ES256, jose.RS256} {
		k := newKey(t, alg, "k1")
		js := newJWKSServer(t, k)
		pub := k.jwk.Public()
		good := receipt(t, k, claims(nil))
		if res, err := Verify(context.Background(), js.cache(), good, expectFor(js)); err != nil || !res.Verified() {
			t.Fatalf("%s: the untouched receipt: %v", alg, err)
		}
		cases := map[string]Receipt{
			"payload": func() Receipt {
				rc := good
				parts := strings.Split(rc.JWS, ".")
				edited := mustJSON(claims(func(c map[string]any) { c["scopesUsed"] = []any{"orders:read"} }))
				parts[1] = base64.RawURLEncoding.EncodeToString(edited)
				rc.JWS, rc.Claims = strings.Join(parts, "."), edited
				return rc
			}(),
			"signature":          {JWS: flipJWSBit(t, good.JWS), Claims: good.Claims},
			"other key same kid": receipt(t, newKey(t, alg, "k1"), claims(nil)),
		}
		for name, rc := range cases {
			t.Run(string(alg)+"/"+name, func(t *testing.T) {
				res, err := Verify(context.Background(), js.cache(), rc, expectFor(js))
				var ve *delegation.VerifyError
				if !errors.As(err, &ve) || res.Verified() || res.Claims != nil || !strings.Contains(err.Error(), "signature does not verify") {
					t.Fatalf("online: err %v, verified %v", err, res.Verified())
				}
				res, err = VerifyOffline(rc, &pub, expectFor(js))
				if !errors.As(err, &ve) || res.Verified() || !strings.Contains(err.Error(), "signature does not verify") {
					t.Fatalf("offline: err %v, verified %v", err, res.Verified())
				}
			})
		}
	}
}

// TestSection5_6_EdDSAReceiptRefused: PACT §5.6 receipts are ES256 or RS256
// (delegation.AllowedAlgs); an EdDSA receipt is refused even when its key is
// published at jwks_uri and the signature is good (EdDSA is accepted for
// Agent Card signatures only, A2A 1.0 §8.4).
func TestSection5_6_EdDSAReceiptRefused(t *testing.T) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k := testKey{jose.JSONWebKey{Key: priv, KeyID: "ed1", Algorithm: string(jose.EdDSA), Use: "sig"}}
	js := newJWKSServer(t, k)
	pub := k.jwk.Public()
	rc := receipt(t, k, claims(nil))
	for name, verify := range map[string]func() (*Result, error){
		"online":  func() (*Result, error) { return Verify(context.Background(), js.cache(), rc, expectFor(js)) },
		"offline": func() (*Result, error) { return VerifyOffline(rc, &pub, expectFor(js)) },
	} {
		res, err := verify()
		var ve *delegation.VerifyError
		if !errors.As(err, &ve) || res.Verified() || !strings.Contains(err.Error(), `alg "EdDSA" not allowed`) {
			t.Fatalf("%s: err %v, verified %v", name, err, res.Verified())
		}
	}
}
