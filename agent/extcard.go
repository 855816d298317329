package agent

import (
	"github.com/pact-cli/pact/discovery"
)

// Extended is the Brand's extended Agent Card (A2A 1.0
// GetExtendedAgentCard): what this User may use there.
type Extended struct {
	Card *discovery.Card `json:"card"` // checked like the public card (discovery.CheckExtended)
	// Delegated: it was asked with the User's delegation token; without
	// it a Brand may list fewer skills.
	Delegated bool `json:"delegated"`
}
