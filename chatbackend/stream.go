package chatbackend

import (
	"context"
	"errors"

	"github.com/pact-cli/pact/a2aclient"
	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/delegation"
	"github.com/pact-cli/pact/tui"
)

var _ tui.Streamer = (*Backend)(nil)

// SendStreaming is Send that shows the reply as it arrives when the
// Brand streams: partial gets the reply's text so far at every event
// (a2aclient.StreamEvent.Text; remote text, which the chat cleans before
// drawing).
func (b *Backend) SendStreaming(ctx context.Context, text string, partial func(string)) (tui.Reply, error) {
	b.mu.Lock()
	id := conversation.NewMessageID()
	if b.unsent != nil && b.unsent.text == text {
		id = b.unsent.id
	} else if rid, ok := b.retry[text]; ok {
		id = rid
	}
	delete(b.retry, text)
	b.mu.Unlock()
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
