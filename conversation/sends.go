package conversation

import (
	"context"
	"errors"

	"github.com/pact-cli/pact/a2aclient"

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

// endSend records how a send ended (PACT §4.3: the Brand's agent must not act twice, and
// a message on record is asked about again only under its own messageId):
//
//   - delivered: err is nil (the answer arrived);
//   - failed: only when the message is known not to have been processed: no earlier
//     attempt under this messageId is on record (first is true) and err is a refusal
//     before delivery (refusedUnprocessed; see outcomeUnknown);
//   - otherwise still sending, that is sent and unanswered with an unknown outcome: ctx
//     cancelled (the User left while waiting), a network failure of any kind (a timeout
//     after the request left; even "connection refused", because only the last of the
//     client's attempts is known and an earlier one may have reached the Brand), a 5xx,
//     and any failure of a message sent before. Reopening offers it for fetching with
//     the same messageId.
func (s *Session) endSend(ctx context.Context, messageID string, first bool, err error) {
	if s.opts.Store == nil {
		return
	}
	switch {
	case err == nil:
		s.opts.Store.db.SetSendState(context.Background(), messageID, store.SendDelivered, "")
	case !outcomeUnknown(first, ctx.Err() != nil, err):
		s.opts.Store.db.SetSendState(context.Background(), messageID, store.SendFailed, err.Error())
	}
}

// refusedUnprocessed reports whether err proves that the message was not processed: the
// request never went out (no *a2aclient.Error: minting the PA JWT or reading the grant
// failed), or every attempt was refused before processing, the last with a 4xx error
// answer, final per §6 (a2aclient.Error.Unprocessed: 408 Request Timeout excepted, the
// request may have been read).
func refusedUnprocessed(err error) bool {
	var e *a2aclient.Error
	if !errors.As(err, &e) {
		return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
	}
	return e.Unprocessed()
}

// onRecord reports whether a send of messageID is on record as sending: an earlier
// attempt that may have reached the Brand.
func (s *Session) onRecord(messageID string) bool {
	if s.opts.Store == nil {
		return false
	}
	st, err := s.opts.Store.db.SendState(context.Background(), messageID)
	return err != nil || st == store.SendSending
}

// SentUnanswered reports whether the message messageID is on record as sent and
// unanswered (store.SendSending): its outcome is unknown, and it is asked about again
// only under the same messageId (§4.3), never sent as a new message.
func (s *Session) SentUnanswered(messageID string) bool {
	if s.opts.Store == nil {
		return false
	}
	st, err := s.opts.Store.db.SendState(context.Background(), messageID)
	return err == nil && st == store.SendSending
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

// MessageIDFor is the messageId to send text under in the current conversation: that of
// the latest message of the same text still on record as sent and unanswered (its
// outcome unknown: asking again under its messageId fetches its answer and the Brand's
// agent does not act twice, PACT §4.3), else a new one. earlier is that message, nil
// when the id is new. A message the User abandoned (Abandon) is not asked about again.
func (s *Session) MessageIDFor(text string) (id string, earlier *Turn) {
	un, err := s.Unanswered()
	if err != nil {
		return NewMessageID(), nil
	}
	for i := len(un) - 1; i >= 0; i-- {
		if un[i].Text == text {
			return un[i].MessageID, &un[i]
		}
	}
	return NewMessageID(), nil
}

// Reasons a message left unanswered was abandoned (Abandon).
const (
	AbandonReplaced = "replaced by the User with another text; it may still have been delivered"
	AbandonRemoved  = "removed by the User; it may still have been delivered"
)

// Abandon records that the User gave up the message messageID, on record as sent and
// unanswered, for why (AbandonReplaced, AbandonRemoved): it may still have been
// delivered, so it is not marked failed, but it is no longer offered to be asked about
// again (Unanswered, MessageIDFor). A message in another state is left as it is.
func (s *Session) Abandon(messageID, why string) error {
	if s.opts.Store == nil {
		return nil
	}
	delete(s.unanswered, messageID)
	_, err := s.opts.Store.db.AbandonSend(context.Background(), messageID, why)
	return err
}
