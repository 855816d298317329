package agent

import (
	"context"

	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/discovery"
)

// Extended is the Brand's extended Agent Card (A2A 1.0
// GetExtendedAgentCard): what this User may use there.
type Extended struct {
	Card *discovery.Card // checked like the public card (discovery.CheckExtended)
	// Delegated: it was asked with the User's delegation token; without
	// it a Brand may list fewer skills.
	Delegated bool
}

// ExtendedCard fetches the extended card of the Brand of s
// (conversation.Session.ExtendedCard: PA JWT, and the delegation token
// when the User has delegated). Errors: conversation.ErrNoExtendedCard
// when the card declares none, and Session.ExtendedCard's.
func ExtendedCard(ctx context.Context, s *conversation.Session) (Extended, error) {
	c, err := s.ExtendedCard(ctx)
	if err != nil {
		return Extended{}, err
	}
	st, err := s.DelegationStatus()
	return Extended{Card: c, Delegated: err == nil && st.State == conversation.DelegationActive}, nil
}
