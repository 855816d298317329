package chatbackend

import (
	"context"
	"errors"
	"strings"

	"github.com/pact-cli/pact/a2aclient"
	"github.com/pact-cli/pact/agent"
	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/delegation"
	"github.com/pact-cli/pact/discovery"
	"github.com/pact-cli/pact/iostreams"
	"github.com/pact-cli/pact/tui"
)

var _ tui.Streamer = (*Backend)(nil)

// SendStreaming is Send that shows the reply as it arrives when the
// Brand streams: partial gets the reply's text so far at every event
// (a2aclient.StreamEvent.Text; remote text, which the chat cleans before
// drawing).
func (b *Backend) SendStreaming(ctx context.Context, text string, partial func(string)) (tui.Reply, error) {
	b.mu.Lock()
	unsent := b.unsent
	b.mu.Unlock()
	id := "" // deliver picks it: the same text as a message on record as sent and
	// unanswered (this chat's, or one left by an earlier chat) goes under its
	// messageId (§4.3)
	if unsent != nil && unsent.text == text {
		id = unsent.id
	}
	return b.deliver(ctx, text, id, onText(partial))
}

// ResendStreaming is Resend, streaming as SendStreaming does.
func (b *Backend) ResendStreaming(ctx context.Context, partial func(string)) (tui.Reply, error) {
	b.mu.Lock()
	text, asked := b.last, b.asked
	b.mu.Unlock()
	if text == "" {
		return tui.Reply{}, errors.New("there is no message to send again")
	}
	if asked != nil {
		// Sent again only with every scope the Brand asked for, as
		// agent.SendID does: the rule is the core's (StepUp.Granted).
		g, err := b.s.Grant()
		if err != nil && !errors.Is(err, delegation.ErrNoGrant) {
			return tui.Reply{}, &PlainError{Err: err}
		}
		if err := asked.Granted(g); err != nil {
			return tui.Reply{}, &PlainError{Err: err}
		}
	}
	return b.deliver(ctx, text, conversation.NewMessageID(), onText(partial))
}

func onText(partial func(string)) a2aclient.StreamFunc {
	if partial == nil {
		return nil
	}
	return func(ev a2aclient.StreamEvent) {
		if ev.Text != "" {
			partial(ev.Text)
		}
	}
}

var (
	_ tui.SkillBackend        = (*Backend)(nil)
	_ tui.ExtendedCardBackend = (*Backend)(nil)
)

// Skills are the card's skills with the scopes each needs, for `/login`.
func (b *Backend) Skills() []tui.SkillScopes {
	var out []tui.SkillScopes
	for _, sk := range b.s.Card.Skills() {
		out = append(out, tui.SkillScopes{Name: sk.Name, Scopes: sk.Scopes})
	}
	return out
}

// skillLines are "  NAME: needs A, B" (or "identity only") per skill, made
// safe for one line each.
func skillLines(skills []discovery.SkillScopes) []string {
	var lines []string
	for _, sk := range skills {
		need := "identity only"
		if len(sk.Scopes) > 0 {
			q := make([]string, len(sk.Scopes))
			for i, s := range sk.Scopes {
				q[i] = iostreams.SanitizeLine(s)
			}
			need = "needs " + strings.Join(q, ", ")
		}
		lines = append(lines, "  "+iostreams.SanitizeLine(sk.Name)+": "+need)
	}
	return lines
}

// ExtendedCard fetches the Brand's extended card
// (conversation.Session.ExtendedCard) and sums up what this User may use;
// ok is false when the card declares none.
func (b *Backend) ExtendedCard(ctx context.Context) (string, bool, error) {
	if !b.s.Card.HasExtendedCard() {
		return "", false, nil
	}
	b.op.Lock()
	x, err := agent.ExtendedCard(ctx, b.s)
	b.op.Unlock()
	if err != nil {
		return "", true, err
	}
	c := x.Card
	head := "extended card: what you may use"
	if !x.Delegated {
		head += " (identity only; /login may show more)"
	}
	if c.Signature != nil && c.Signature.Verified {
		head += ", " + iostreams.SanitizeLine(c.Signature.Label())
	}
	lines := append([]string{head}, skillLines(c.Skills())...)
	if len(c.Skills()) == 0 {
		lines = append(lines, "  no skills")
	}
	return strings.Join(lines, "\n"), true, nil
}
