package tui

import (
	"context"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// SkillScopes is one skill of the Brand's card and the delegation scopes
// it needs (A2A AgentSkill.securityRequirements); none: identity only.
type SkillScopes struct {
	Name   string
	Scopes []string
}

// SkillBackend is a Backend that knows its card's skills: `/login` without
// scopes then offers the scopes those skills need.
type SkillBackend interface {
	Skills() []SkillScopes
}

// ExtendedCardBackend is a Backend whose Brand may serve an extended card
// (what this User may use); `/card` then fetches it after showing the
// public card. ExtendedCard runs on its own goroutine; ok is false when
// the card offers none.
type ExtendedCardBackend interface {
	ExtendedCard(ctx context.Context) (summary string, ok bool, err error)
}

// extCardMsg is the extended card fetched for `/card`.
type extCardMsg struct {
	summary string
	ok      bool
	err     error
}

// offerSkillScopes is `/login` without scopes: it lists the skills that
// need scopes and puts "/login" with those scopes (the ones the card
// declares) in the input, for the User to send with Enter or edit. It
// reports false when no skill names a scope.
func (c *chat) offerSkillScopes() bool {
	sb, ok := c.b.(SkillBackend)
	if !ok {
		return false
	}
	var lines, offer []string
	for _, sk := range sb.Skills() {
		var known []string
		for _, id := range sk.Scopes {
			if c.hasScope(id) {
				known = append(known, clean(id))
				if !containsString(offer, id) {
					offer = append(offer, id)
				}
			}
		}
		if len(known) > 0 {
			lines = append(lines, "  "+cleanLine(sk.Name)+": "+strings.Join(known, ", "))
		}
	}
	if len(offer) == 0 {
		return false
	}
	c.notice(c.brandName() + "'s skills need these permissions:\n" + strings.Join(lines, "\n") +
		"\nPress Enter to ask for them (the Brand's page lets you untick any), or edit the line.")
	c.in.set("/login " + strings.Join(offer, " "))
	return true
}

func (c *chat) hasScope(id string) bool {
	for _, s := range c.scopes {
		if s.ID == id {
			return true
		}
	}
	return false
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// fetchExtendedCard starts fetching the extended card for `/card`, when the
// Backend can.
func (c *chat) fetchExtendedCard() tea.Cmd {
	eb, ok := c.b.(ExtendedCardBackend)
	if !ok {
		return nil
	}
	return func() tea.Msg {
		s, ok, err := eb.ExtendedCard(context.Background())
		return extCardMsg{summary: s, ok: ok, err: err}
	}
}

func (c *chat) onExtendedCard(msg extCardMsg) {
	switch {
	case msg.err != nil:
		c.fail("Could not fetch the extended card: " + clean(msg.err.Error()))
	case msg.ok:
		c.notice(clean(msg.summary))
	}
}
