package main

import (
	"github.com/pact-cli/pact/agent"
	"github.com/pact-cli/pact/conversation"
)

// One naming rule for every command and front-end (CLI contract; see
// agent.Label): --json carries full ids and the Brand's card URL (plus its
// name when known); tables show the Brand's name and domain, and short ids.

// brandRef is what pact knows of a Brand from its own state.
type brandRef = conversation.BrandRef

// brandIndex finds a Brand by card URL or interface URL, from the stored
// conversations and grants (no network); see agent.Brands.
type brandIndex struct{ ix conversation.BrandIndex }

func (a *app) brandIndex(opts conversation.Options) brandIndex {
	return brandIndex{agent.Brands(opts)}
}

// lookup returns the Brand known by card URL or interface URL u.
func (ix brandIndex) lookup(u string) (brandRef, bool) { return ix.ix.Lookup(u) }

// receipt is the Brand of a receipt whose brand claim is iface; see
// conversation.BrandIndex.Receipt.
func (ix brandIndex) receipt(iface, card, name string) brandRef {
	return ix.ix.Receipt(iface, card, name)
}

// brandLabel is agent.Label: "Name (domain)".
func brandLabel(name, cardURL, u string) string { return agent.Label(name, cardURL, u) }

// receiptBrandLabel is agent.ReceiptLabel.
func receiptBrandLabel(ref brandRef, iface string) string { return agent.ReceiptLabel(ref, iface) }
