package receipts

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/pact-cli/pact/discovery"
	"github.com/pact-cli/pact/store"
)

// ListBrand is List for a Brand named as on the command line (BrandFilter).
// An empty brand lists every receipt.
func (a *Archive) ListBrand(brand string) ([]Item, error) {
	return a.List(brand)
}

// BrandFilter is the one rule `receipts list --brand`, `receipts export
// --brand` and the MCP list_receipts tool use to find a Brand's receipts.
// arg may be written as the table shows it or as the User knows it: a
// domain or host:port (every receipt whose brand claim or card URL is on
// that host), an origin (its card URL, and every URL on that host), a card
// URL or an interface URL; trailing slashes do not count.
func BrandFilter(arg string) store.ReceiptFilter {
	arg = strings.TrimSpace(arg)
	if arg == "" {
		return store.ReceiptFilter{}
	}
	plain := strings.TrimRight(arg, "/")
	f := store.ReceiptFilter{Brand: plain}
	if plain != "" {
		f.Brands = append(f.Brands, plain+"/") // a brand recorded with its slash
	}
	if u, err := discovery.CardURL(arg); err == nil && u != plain {
		f.Brands = append(f.Brands, u)
	}
	if !strings.Contains(arg, "://") {
		if !strings.ContainsAny(plain, "/?#@ ") {
			f.BrandHost = strings.ToLower(plain)
		}
	} else if u, err := url.Parse(plain); err == nil && u.Host != "" && (u.Path == "" || u.Path == "/") {
		f.BrandHost = strings.ToLower(u.Host) // an origin
	}
	return f
}

// SameBrand reports whether two spellings name the same interface URL
// (trailing slashes do not count).
func SameBrand(a, b string) bool {
	return a != "" && strings.TrimRight(a, "/") == strings.TrimRight(b, "/")
}

// AttributeTo names an imported receipt (a bundle line) by the Brand whose
// published key verified it (cardURL and name; both "" when no key was
// checked: an unknown Brand). A bundle's cardUrl and brandName are labels
// anyone can write: they are kept only when they are that Brand's (the
// same card URL; the name the card gives, when known), and otherwise set
// aside with a note saying so, so that a line signed by one Brand is never
// listed, filtered or shown as another.
func (r *Result) AttributeTo(cardURL, name string) {
	labelCard, labelName := r.Expect.Card, r.Expect.BrandName
	if labelCard == "" && labelName == "" {
		r.Expect.Card, r.Expect.BrandName = cardURL, name
		return
	}
	sameCard := cardURL != "" && strings.TrimRight(labelCard, "/") == strings.TrimRight(cardURL, "/")
	if sameCard && (name == "" || labelName == "" || labelName == name) {
		if labelName == "" {
			r.Expect.BrandName = name
		}
		return
	}
	label := labelName
	if labelCard != "" {
		if label != "" {
			label += " (" + labelCard + ")"
		} else {
			label = labelCard
		}
	}
	r.Expect.Card, r.Expect.BrandName = cardURL, name
	var note string
	switch {
	case cardURL == "":
		note = "the bundle labelled it " + strconv.Quote(label) + ", but no published key of that Brand was checked: it is listed as an unknown Brand"
	default:
		who := cardURL
		if name != "" {
			who = name + " (" + cardURL + ")"
		}
		note = "the bundle labelled it " + strconv.Quote(label) + ", but the key that signed it is published by " + who + ": it is named by that key's Brand"
	}
	r.Expect.Notes = append(r.Expect.Notes, note)
}
