package discovery

import (
	"context"
	"sort"
)

// Streams reports whether the card declares capabilities.streaming (A2A
// 1.0 message:stream) for its interface.
func (c *Card) Streams() bool { return c.Card != nil && c.Card.Capabilities.Streaming }

// HasExtendedCard reports whether the card declares
// capabilities.extendedAgentCard (GET {interface}/extendedAgentCard).
func (c *Card) HasExtendedCard() bool { return c.Card != nil && c.Card.Capabilities.ExtendedAgentCard }

// NoStream reports whether the Provider of this card's interface was
// found not to stream although the card says it does (see
// RememberNoStream). A nil Cache or one that cannot be read remembers
// nothing.
func (c *Cache) NoStream(card *Card) bool {
	if c == nil || c.DB == nil {
		return false
	}
	v, ok, err := c.DB.Note(context.Background(), "nostream:"+card.URL)
	return err == nil && ok && v == card.InterfaceURL
}

// RememberNoStream keeps, with the card cache, that the Provider answered
// message:stream for this card's interface with UNSUPPORTED_OPERATION, no
// such route or a body that is not text/event-stream, so that later
// messages go by message:send at once. The note holds while the card
// names the same interface. Failing to keep it is not an error.
func (c *Cache) RememberNoStream(card *Card) {
	if c == nil || c.DB == nil {
		return
	}
	_ = c.DB.SetNote(context.Background(), "nostream:"+card.URL, card.InterfaceURL)
}

// SkillScopes is one skill of a card and the delegated scopes it needs:
// the scopes its securityRequirements name (A2A 1.0
// AgentSkill.securityRequirements, any alternative), sorted; none when
// the skill needs only the personal agent's identity.
type SkillScopes struct {
	ID     string   `json:"id"`
	Name   string   `json:"name"`
	Scopes []string `json:"scopes"`
}

// Skills lists the card's skills with the scopes each needs, in card
// order.
func (c *Card) Skills() []SkillScopes {
	if c.Card == nil {
		return nil
	}
	out := make([]SkillScopes, 0, len(c.Card.Skills))
	for _, sk := range c.Card.Skills {
		seen := map[string]bool{}
		scopes := []string{}
		for _, req := range sk.SecurityRequirements {
			for _, list := range req {
				for _, s := range list {
					if !seen[s] {
						seen[s] = true
						scopes = append(scopes, s)
					}
				}
			}
		}
		sort.Strings(scopes)
		out = append(out, SkillScopes{ID: sk.ID, Name: sk.Name, Scopes: scopes})
	}
	return out
}

// SkillScopeIDs is the union of the scopes the card's skills need that
// its delegation scheme declares, sorted: what `/login` offers by default.
// Scopes a skill names but the scheme does not declare are left out
// (PACT §5.2: pact asks only for declared scopes).
func (c *Card) SkillScopeIDs() []string {
	if c.Delegation == nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, sk := range c.Skills() {
		for _, s := range sk.Scopes {
			if _, ok := c.Delegation.Scopes[s]; ok && !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	sort.Strings(out)
	return out
}
