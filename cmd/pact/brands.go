package main

import (
	"net/url"

	"github.com/pact-cli/pact/conversation"
)

// One naming rule for every command (CLI contract): --json carries full ids
// and the Brand's card URL (plus its name when known); tables show the
// Brand's name and domain, and short ids.

// brandRef is what pact knows of a Brand from its own state.
type brandRef = conversation.BrandRef

// brandIndex finds a Brand by card URL or interface URL, from the stored
// conversations and grants (no network); see conversation.KnownBrands.
type brandIndex struct{ ix conversation.BrandIndex }

func (a *app) brandIndex(opts conversation.Options) brandIndex {
	return brandIndex{conversation.KnownBrands(opts)}
}

// lookup returns the Brand known by card URL or interface URL u.
func (ix brandIndex) lookup(u string) (brandRef, bool) { return ix.ix.Lookup(u) }

// brandLabel is how a table shows a Brand: "Name (domain)", or the domain
// alone when the name is unknown. The domain is the host of the card URL
// (else of u).
func brandLabel(name, cardURL, u string) string {
	domain := hostOf(cardURL)
	if domain == "" {
		domain = hostOf(u)
	}
	if domain == "" {
		domain = u
	}
	if name == "" {
		return domain
	}
	return name + " (" + domain + ")"
}

func hostOf(raw string) string {
	p, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return p.Host
}

// receipt is the Brand of a receipt whose brand claim is iface; see
// conversation.BrandIndex.Receipt.
func (ix brandIndex) receipt(iface, card, name string) brandRef {
	return ix.ix.Receipt(iface, card, name)
}

// receiptBrandLabel is brandLabel for a receipt (iface its brand claim).
// With neither card URL nor name known it says so: the interface URL's
// host is the Provider's, shared by all its Brands, not the Brand's.
func receiptBrandLabel(ref brandRef, iface string) string {
	if ref.Name != "" || ref.CardURL != "" {
		return brandLabel(ref.Name, ref.CardURL, iface)
	}
	if h := hostOf(iface); h != "" {
		return "unknown Brand (at provider " + h + ")"
	}
	return "unknown Brand"
}
