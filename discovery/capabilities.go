package discovery

import (
	"context"
	"encoding/json"
	"net/http"
	"sort"
	"strings"
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

// CheckExtended checks raw, the extended Agent Card fetched for public
// (GET {interface}/extendedAgentCard, A2A 1.0), as Fetch checks a public
// card: Parse (§2.1) and the signatures against the keys on the Brand's
// own domain, the origin of public.URL (A2A §8.4), refused when a
// signature fails. Beyond that: it must name the same interface as the
// public card, and when the public card's signature verified the extended
// card must be signed and verify too. Errors are *InvalidCardError.
func CheckExtended(ctx context.Context, client *http.Client, public *Card, raw []byte) (*Card, error) {
	final := strings.TrimRight(public.InterfaceURL, "/") + "/extendedAgentCard"
	card, err := checkCard(ctx, client, public.URL, final, raw)
	if err != nil {
		return nil, err
	}
	switch {
	case card.InterfaceURL != public.InterfaceURL:
		return nil, &InvalidCardError{URL: public.URL, FinalURL: final, Raw: json.RawMessage(raw), Signature: card.Signature,
			Reason: "the extended card names another interface (" + card.InterfaceURL + ") than the public card (" + public.InterfaceURL + ")"}
	case public.Signature != nil && public.Signature.Verified && (card.Signature == nil || !card.Signature.Verified):
		return nil, &InvalidCardError{URL: public.URL, FinalURL: final, Raw: json.RawMessage(raw), Signature: card.Signature,
			Reason: "the public card is signed by the Brand but its extended card is not"}
	}
	return card, nil
}
