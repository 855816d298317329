package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/pact-cli/pact/agent"
	"github.com/pact-cli/pact/discovery"
)

// ExtendedCard is get_agent_card's "extended": the Brand's extended card
// (A2A 1.0 GetExtendedAgentCard), what this User may use; or why it was
// not fetched.
type ExtendedCard struct {
	Fetched   bool    `json:"fetched"`
	Skills    []Skill `json:"skills" jsonschema:"the skills this User may use, with the scopes each needs"`
	Verified  bool    `json:"verified" jsonschema:"the extended card's signature verified against the Brand's own keys"`
	Delegated bool    `json:"delegated" jsonschema:"it was asked with the User's delegation (after a login); without it a Brand may show fewer skills"`
	Problem   string  `json:"problem,omitempty" jsonschema:"why it was not fetched"`
}

// skillsOf is the card's skills with their scopes, cleaned.
func skillsOf(card *discovery.Card) []Skill {
	out := []Skill{}
	if card.Card == nil {
		return out
	}
	scopes := card.Skills()
	for i, sk := range card.Card.Skills {
		ss := []string{}
		if i < len(scopes) {
			ss = cleanAll(scopes[i].Scopes)
		}
		out = append(out, Skill{ID: clean(sk.ID), Name: clean(sk.Name), Description: clean(sk.Description), Scopes: ss})
	}
	return out
}

// skillNeeds is " (needs a, b)" for a skill that needs scopes, else "".
func skillNeeds(sk Skill) string {
	if len(sk.Scopes) == 0 {
		return ""
	}
	return " (needs " + strings.Join(sk.Scopes, ", ") + ")"
}

// extendedCard fetches the extended card for get_agent_card, only for a
// Brand whose card matches what the User accepted (pin "same"): looking
// records nothing, and no credential goes to a card the User has not
// accepted.
func (s *Server) extendedCard(ctx context.Context, brand string, card *discovery.Card, pin string) *ExtendedCard {
	ext := &ExtendedCard{Skills: []Skill{}}
	switch {
	case !card.HasExtendedCard():
		ext.Problem = "the card does not offer an extended card"
	case pin != "same":
		ext.Problem = "not fetched: the User has not yet accepted this card (the first send_message records it), or it changed"
	}
	if ext.Problem == "" {
		conv, err := s.open(ctx, brand, agent.Start{})
		if err == nil {
			var x agent.Extended
			if x, err = conv.ExtendedCard(ctx); err == nil {
				ext.Fetched, ext.Skills, ext.Delegated = true, skillsOf(x.Card), x.Delegated
				ext.Verified = x.Card.Signature != nil && x.Card.Signature.Verified
			}
		}
		if err != nil {
			ext.Problem = clean(err.Error())
		}
	}
	return ext
}

// sayExtended writes the extended card to the tool's text: pact's words
// said, the skills (the Brand's text) quoted from src.
func sayExtended(r *reply, src string, ext *ExtendedCard) {
	if !ext.Fetched {
		r.say("pact: extended card: " + ext.Problem + ".")
		return
	}
	who := "pact: the extended card (what this User may use"
	if !ext.Delegated {
		who += "; identity only, start_login may show more"
	}
	r.say(who + "), signature verified: " + fmt.Sprint(ext.Verified) + ":")
	var own []string
	for _, sk := range ext.Skills {
		own = append(own, "skill: "+sk.Name+skillNeeds(sk))
	}
	if len(own) == 0 {
		r.say("pact: no skills.")
		return
	}
	r.quote(src+", its extended card's skills", own...)
}
