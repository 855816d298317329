package demoprovider

import (
	"net/http"
	"slices"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pact-cli/pact/discovery"
)

// scopeSkills are the skills that need a delegated scope: each carries
// securityRequirements naming the userDelegation scheme and that scope
// alone (A2A 1.0 AgentSkill.securityRequirements; the permdock/a2a notes
// in spec/004). A Brand lists the skills of the scopes it offers.
var scopeSkills = []struct {
	scope, id, name, description string
}{
	{scopeOrdersRead, "order-status", "Your orders", "Look up your own orders and where they are."},
	{scopeOrdersCancel, "cancel-order", "Cancel an order", "Cancel one of your orders that has not shipped."},
	{scopeRefundsIssue, "refund", "Refunds", "Refund an order to your original payment method."},
}

// skills are b's skills: "orders", open to any personal agent (the
// card's paJwt requirement), then one skill per delegated scope b offers.
func (s *Server) skills(b *brandDef) []a2a.AgentSkill {
	out := []a2a.AgentSkill{{
		ID:                   "orders",
		Name:                 "Orders",
		Description:          b.skills,
		Tags:                 []string{"orders"},
		Examples:             []string{"Where is my order A-88213?"},
		SecurityRequirements: a2a.SecurityRequirementsOptions{{schemePAJWT: {}}},
	}}
	for _, sk := range scopeSkills {
		if !slices.ContainsFunc(b.scopes, func(sc Scope) bool { return sc.ID == sk.scope }) {
			continue
		}
		out = append(out, a2a.AgentSkill{
			ID:                   sk.id,
			Name:                 sk.name,
			Description:          sk.description,
			Tags:                 []string{"orders"},
			SecurityRequirements: a2a.SecurityRequirementsOptions{{schemeUserDelegation: {sk.scope}}},
		})
	}
	return out
}

// mayUse reports whether a caller with these delegated scopes may invoke
// skill: every scope of one of its requirements is granted (an empty list
// needs no delegated scope).
func mayUse(skill a2a.AgentSkill, scopes []string) bool {
	if len(skill.SecurityRequirements) == 0 {
		return true
	}
	for _, req := range skill.SecurityRequirements {
		ok := true
		for _, need := range req {
			for _, sc := range need {
				if !slices.Contains(scopes, sc) {
					ok = false
				}
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// serveExtendedCard is GET {interface}/extendedAgentCard (A2A 1.0
// GetExtendedAgentCard): the public card with only the skills this caller
// may use, computed from the delegation token's scopes (none without a
// token), signed by the Brand's key like the card on its site (A2A §8.4).
// The PA JWT has been verified; an invalid delegation token gets 401
// invalid_token (§5.5).
func (s *Server) serveExtendedCard(w http.ResponseWriter, r *http.Request, b *brandDef, id paIdentity) {
	var scopes []string
	if h := r.Header.Get(delegationHeader); h != "" {
		d, err := s.as.verifyDelegation(h, b, id)
		if err != nil {
			writeUnauthorized(w, "invalid_token")
			return
		}
		scopes = d.scopes
	}
	c := s.card(b)
	var kept []a2a.AgentSkill
	for _, sk := range c.Skills {
		if mayUse(sk, scopes) {
			kept = append(kept, sk)
		}
	}
	c.Skills = kept
	raw, err := specCardJSON(c)
	if err != nil {
		writeA2AError(w, ReasonInternal, "the extended card could not be built")
		return
	}
	k, kid := brandKey(b, false)
	signed, err := discovery.SignCard(raw, k, kid, s.sites[b.id]+"/.well-known/jwks.json")
	if err != nil {
		writeA2AError(w, ReasonInternal, "the extended card could not be signed")
		return
	}
	w.Header().Set("Content-Type", a2aContentType)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Vary", "Authorization, "+delegationHeader)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(signed)
}
