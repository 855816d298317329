package receipts

import (
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"
)

// TestSection5_6_AddSignedVerifiesWithTheGivenKey: a receipt added with
// its key is archived as verified (listed, key and thumbprint kept); one
// whose signature the key does not verify is refused and not archived.
func TestSection5_6_AddSignedVerifiesWithTheGivenKey(t *testing.T) {
	k := newKey(t, jose.ES256, "k1")
	a := newArchive(t)
	rc := receipt(t, k, claims(nil))
	pub := k.jwk.Public()
	e, err := a.AddSigned(rc.JWS, &pub, "https://as.example/jwks.json")
	if err != nil || !e.Verified || e.JWKThumbprint == "" || e.Expect.JWKSURI != "https://as.example/jwks.json" {
		t.Fatalf("AddSigned = %+v, %v", e, err)
	}
	items, _ := a.List("")
	if len(items) != 1 || !items[0].Verified {
		t.Fatalf("listed %+v", items)
	}
	ok2 := newKey(t, jose.ES256, "k1")
	other := ok2.jwk.Public()
	forged := receipt(t, k, claims(func(c map[string]any) { c["ts"] = "2026-10-01T00:00:00Z" }))
	if _, err := a.AddSigned(forged.JWS, &other, ""); err == nil || !strings.Contains(err.Error(), "signature") {
		t.Fatalf("a receipt the key does not verify was accepted: %v", err)
	}
	if items, _ := a.List(""); len(items) != 1 {
		t.Fatalf("a refused receipt was archived: %d items", len(items))
	}
}
