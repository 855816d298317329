package receipts

import (
	"strings"

	"github.com/pact-cli/pact/discovery"
)

// ListBrand is List for a Brand named as on the command line: a domain or
// an origin (its card URL is looked up, as the receipts record it), a card
// URL, or an interface URL. An empty brand lists every receipt.
func (a *Archive) ListBrand(brand string) ([]Item, error) {
	plain := strings.TrimRight(brand, "/")
	if brand == "" {
		return a.List("")
	}
	if u, err := discovery.CardURL(brand); err == nil && u != plain {
		if items, err := a.List(u); len(items) > 0 || err != nil {
			return items, err
		}
	}
	return a.List(plain)
}

// SameBrand reports whether two spellings name the same interface URL
// (trailing slashes do not count).
func SameBrand(a, b string) bool {
	return a != "" && strings.TrimRight(a, "/") == strings.TrimRight(b, "/")
}
