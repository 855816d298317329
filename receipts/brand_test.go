package receipts

import (
	"testing"

	"github.com/go-jose/go-jose/v4"
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
