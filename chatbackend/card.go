package chatbackend

import (
	"strings"

	"github.com/pact-cli/pact/iostreams"
	"github.com/pact-cli/pact/tui"
)

// Card returns a summary of the Agent Card in the words of `pact card`: name,
// description, card and interface URLs, Provider registration, delegation scopes (§5.1),
// skills and problems found.
func (b *Backend) Card() string {
	c := b.s.Card
	var lines []string
	lines = append(lines, iostreams.SanitizeLine(c.Name()))
	if c.Card != nil && strings.TrimSpace(c.Card.Description) != "" {
		// In the gutter, as pact card prints it: a line of the description must not pass
		// for one of pact's rows ("signature: signed by … ✓").
		lines = append(lines, iostreams.Gutter(strings.TrimSpace(c.Card.Description), iostreams.GutterMark))
	}
	lines = append(lines, "card: "+c.URL)
	if c.FinalURL != "" && c.FinalURL != c.URL {
		lines = append(lines, "served from: "+c.FinalURL)
	}
	lines = append(lines, "interface: "+c.InterfaceURL+" (HTTP+JSON 1.0)")
	lines = append(lines, "provider: "+b.s.Provider.URL+" audience "+b.s.Provider.Audience)
	if d := c.Delegation; d != nil {
		lines = append(lines, "delegation: device code (RFC 8628); scopes:")
		for _, id := range d.ScopeIDs() {
			lines = append(lines, "  "+iostreams.SanitizeLine(id)+" — "+iostreams.SanitizeLine(d.Scopes[id]))
		}
	} else {
		lines = append(lines, "delegation: not offered (identity only)")
	}
	if c.Streams() {
		lines = append(lines, "replies: streamed as they are written (message:stream)")
	}
	if c.HasExtendedCard() {
		lines = append(lines, "extended card: offered (what you may use follows)")
	}
	if skills := c.Skills(); len(skills) > 0 {
		lines = append(lines, "skills:")
		lines = append(lines, skillLines(skills)...)
	}
	for _, p := range c.Problems {
		lines = append(lines, "problem: "+iostreams.SanitizeLine(p))
	}
	return strings.Join(lines, "\n")
}

// Scopes returns the card's delegation scopes sorted by id (§5.1), nil when the Brand
// offers no delegation.
func (b *Backend) Scopes() []tui.Scope {
	d := b.s.Card.Delegation
	if d == nil || len(d.Scopes) == 0 {
		return nil
	}
	out := make([]tui.Scope, 0, len(d.Scopes))
	for _, id := range d.ScopeIDs() {
		out = append(out, tui.Scope{ID: id, Description: d.Scopes[id]})
	}
	return out
}
