package main

import (
	"github.com/pact-cli/pact/agent"
	"github.com/pact-cli/pact/conversation"
)

// One naming rule for every command and front-end (CLI contract; see
// agent.Label): --json carries full ids and the Brand's card URL (plus its
// name when known); tables show the Brand's name and domain, and short ids.
// The agent names each Brand it reports (agent.Brands).

// brandRef is what pact knows of a Brand from its own state.
type brandRef = conversation.BrandRef

// brandLabel is agent.Label: "Name (domain)".
func brandLabel(name, cardURL, u string) string { return agent.Label(name, cardURL, u) }

// receiptBrandLabel is agent.ReceiptLabel.
func receiptBrandLabel(ref brandRef, iface string) string { return agent.ReceiptLabel(ref, iface) }
