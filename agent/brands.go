package agent

import (
	"net/url"

	"github.com/pact-cli/pact/conversation"
)

// One naming rule for every front-end (CLI contract, docs/json.md): JSON
// carries full ids and the Brand's card URL (plus its name when known);
// tables and text show the Brand's name and domain.

// Brands is what the profile knows of its Brands (stored conversations and
// grants; no network): conversation.KnownBrands.
func Brands(opts conversation.Options) conversation.BrandIndex { return conversation.KnownBrands(opts) }

// Label is how a table shows a Brand: "Name (domain)", or the domain alone
// when the name is unknown. The domain is the host of cardURL, else of u,
// else u itself. name is the Brand's text: callers sanitise the label.
func Label(name, cardURL, u string) string {
	domain := Host(cardURL)
	if domain == "" {
		domain = Host(u)
	}
	if domain == "" {
		domain = u
	}
	if name == "" {
		return domain
	}
	return name + " (" + domain + ")"
}

// ReceiptLabel is Label for a receipt whose brand claim is iface, named by
// ref (conversation.BrandIndex.Receipt). With neither card URL nor name
// known it says so: the interface URL's host is the Provider's, shared by
// all its Brands, not the Brand's.
func ReceiptLabel(ref conversation.BrandRef, iface string) string {
	if ref.Name != "" || ref.CardURL != "" {
		return Label(ref.Name, ref.CardURL, iface)
	}
	if h := Host(iface); h != "" {
		return "unknown Brand (at provider " + h + ")"
	}
	return "unknown Brand"
}

// Host is the host (with port) of URL raw, "" when it has none.
func Host(raw string) string {
	p, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return p.Host
}
