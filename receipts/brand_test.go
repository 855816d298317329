package receipts

import (
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"

	"github.com/pact-cli/pact/store"
)

func TestListBrandTakesTheBrandAsTheCommandLineNamesIt(t *testing.T) {
	k := newKey(t, jose.ES256, "k1")
	js := newJWKSServer(t, k)
	a := newArchive(t)
	res, _ := Verify(t.Context(), js.cache(), receipt(t, k, claims(nil)), expectFor(js))
	if _, err := a.Put(res); err != nil {
		t.Fatal(err)
	}
	for brand, want := range map[string]int{
		"":                       1,
		"brand.example":          1, // domain → its card URL
		"https://brand.example/": 1,
		"https://brand.example/.well-known/agent-card.json": 1,
		iface + "/":             1, // the interface URL, trailing slash ignored
		"other.example":         0,
		"https://other.example": 0,
	} {
		items, err := a.ListBrand(brand)
		if err != nil || len(items) != want {
			t.Errorf("ListBrand(%q) = %d items, %v; want %d", brand, len(items), err, want)
		}
	}
}

// The table shows a Brand as host:port; that form, and the interface URL
// with a trailing slash, find its receipts (list, export and MCP share
// BrandFilter).
func TestListBrandTakesTheFormsTheTableShows(t *testing.T) {
	a := newArchive(t)
	const loop = "http://127.0.0.1:37485/a2a/01JEXAMPLECO"
	r := store.Receipt{ID: strings.Repeat("ab", 32), JWS: "x.y.z"}
	r.SetListing([]byte(`{"brand":"`+loop+`","ts":"2026-11-30T12:00:00Z"}`), loop)
	if err := a.DB.PutReceipt(t.Context(), r); err != nil {
		t.Fatal(err)
	}
	for brand, want := range map[string]int{
		"127.0.0.1:37485":             1,
		"http://127.0.0.1:37485":      1,
		"http://127.0.0.1:37485/":     1,
		loop:                          1,
		loop + "/":                    1,
		"127.0.0.1:3748":              0,
		"127.0.0.1:374850":            0,
		"http://127.0.0.1:37485/a2a/": 0,
	} {
		items, err := a.ListBrand(brand)
		if err != nil || len(items) != want {
			t.Errorf("ListBrand(%q) = %d items, %v; want %d", brand, len(items), err, want)
		}
	}
}
