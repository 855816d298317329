package conversation

import (
	"context"
	"errors"

	"github.com/pact-cli/pact/store"
)

// A message is on record before it leaves (store.Send): Session.SendID records it as
// sending, then delivered or failed. One still sending when pact starts again was cut
// off (a quit, Ctrl+C, a crash) before its answer arrived; sending it again with the
// same messageId fetches that answer without the Brand's agent acting twice (PACT §4.3).

// TurnUnanswered is Turn.State of a User's message whose answer never arrived.
const TurnUnanswered = "unanswered"

// recordSend puts a message on record before it leaves. A failure to write is not
// the send's failure: the message still goes (the turn is stored with the reply).
func (s *Session) recordSend(t Turn) {
	if s.opts.Store == nil {
		return
	}
	s.opts.Store.db.RecordSend(context.Background(), store.Send{MessageID: t.MessageID, Brand: s.Card.URL,
		InterfaceURL: s.Card.InterfaceURL, ContextID: s.contextID, Text: t.Text, At: t.At})
}

// endSend records how a send ended: delivered (err nil), failed, or, when ctx was
// cancelled (the User left while waiting), still sending: unanswered.
func (s *Session) endSend(ctx context.Context, messageID string, err error) {
	if s.opts.Store == nil {
		return
	}
	switch {
	case err == nil:
		s.opts.Store.db.SetSendState(context.Background(), messageID, store.SendDelivered, "")
	case ctx.Err() != nil || errors.Is(err, context.Canceled):
		// Left while waiting: the message may have reached the Brand.
	default:
		s.opts.Store.db.SetSendState(context.Background(), messageID, store.SendFailed, err.Error())
	}
}

// Unanswered returns the User's messages in the current conversation (or, with no
// current conversation, of a new one) that were sent but never answered, oldest
// first, as turns with State TurnUnanswered.
func (s *Session) Unanswered() ([]Turn, error) {
	if s.opts.Store == nil {
		return nil, nil
	}
	sends, err := s.opts.Store.db.Unanswered(context.Background(), s.Card.URL)
	if err != nil {
		return nil, err
	}
	var out []Turn
	for _, x := range sends {
		if x.ContextID == s.contextID && x.InterfaceURL == s.Card.InterfaceURL {
			out = append(out, Turn{MessageID: x.MessageID, Role: "user", Text: x.Text, At: x.At, State: TurnUnanswered})
		}
	}
	return out, nil
}

// Draft is what the chat had not sent when it was left: the input and the queue.
type Draft = store.Draft

// LoadDraft returns the chat's kept draft for the session's Brand.
func (s *Session) LoadDraft() (Draft, error) {
	if s.opts.Store == nil {
		return Draft{}, nil
	}
	return s.opts.Store.db.LoadDraft(context.Background(), s.Card.URL)
}

// SaveDraft keeps the chat's draft for the session's Brand (an empty one removes it).
func (s *Session) SaveDraft(d Draft) error {
	if s.opts.Store == nil {
		return nil
	}
	return s.opts.Store.db.SaveDraft(context.Background(), s.Card.URL, d)
}
