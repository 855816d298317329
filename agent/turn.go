package agent

import (
	"context"
	"errors"

	"github.com/pact-cli/pact/a2aclient"
	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/delegation"
)

// Front is how a front-end answers the events of a turn. Every field may
// be nil: the zero Front sends once and leaves every event to the error or
// result it ends with.
type Front struct {
	// Waiting is called as each request to the Brand starts; the func it
	// returns is called when the answer is in (a spinner, on the CLI).
	Waiting func(s *conversation.Session) (done func())
	// Restart answers ContextClosed: the Provider ended the conversation
	// (PACT §4.2, UNSUPPORTED_OPERATION) before the message reached the
	// Brand. true sends the message again in a new conversation (new
	// messageId); false, or nil, ends the turn with the
	// *conversation.ClosedError. It is never asked when the message may
	// already have been delivered (the turn then ends with
	// *conversation.OutcomeUnknownError: the User decides, §4.3).
	Restart func(closed *conversation.ClosedError) bool
	// DeadGrant is told that the message went identity-only because the
	// Brand's delegation grant is dead (conversation.DelegationStatus).
	DeadGrant func(dead *conversation.DelegationStatus)
	// NeedsScopes answers a step-up the User may be asked for
	// (StepUp.Askable): it obtains the grant, e.g. with Session.Login, presenting
	// the request its own way, and returns it. The core then requires the
	// grant to hold every scope asked (else *NotGrantedError) and sends the
	// message again in the same conversation with a new messageId (§5.5).
	// nil, or a nil grant with a nil error, leaves the step-up pending: the
	// turn ends with *StepUpPending.
	NeedsScopes func(ctx context.Context, su *StepUp) (*delegation.Grant, error)
	// Resending is told just before the message goes again after a
	// step-up was granted.
	Resending func()
	// Again is told, by Send, that the text is that of an earlier message
	// still on record as sent and unanswered (its outcome unknown): it goes
	// under that message's messageId, which fetches its answer without the
	// Brand's agent acting twice (§4.3).
	Again func(earlier *conversation.Turn)
	// Stream, when set, receives the events of each reply that streams:
	// a Brand whose card declares capabilities.streaming is then sent
	// message:stream (conversation.Session.SendStream), and Stream shows
	// the reply as it arrives (StreamEvent.Text is the text so far). The
	// result is the same as without it.
	Stream a2aclient.StreamFunc
}

// Send is one turn: text goes to the Brand of s, and the events on the way
// are answered by f. It goes as a new message (fresh messageId), unless the
// same text is on record as sent and unanswered in this conversation (a
// reply lost, a stream cut, the User gone while waiting): then it goes under
// that message's messageId (conversation.Session.MessageIDFor, told to
// f.Again), so that the Provider answers it once (§4.3). See SendID.
func Send(ctx context.Context, s *conversation.Session, text string, f Front) (*conversation.Result, error) {
	id, earlier := s.MessageIDFor(text)
	if earlier != nil && f.Again != nil {
		f.Again(earlier)
	}
	return SendID(ctx, s, text, id, f)
}

// SendID is Send with the messageId of the first attempt given: a message
// whose reply was lost goes again under its messageId, so that the Brand
// acts once (§4.3). Messages sent again after a closed conversation or a
// step-up get new messageIds. A conversation found closed when the message
// may already have been processed is never restarted (f.Restart is not
// asked): the turn ends with *conversation.OutcomeUnknownError.
//
// The result is the last reply: its receipt verified and archived (§5.6,
// Result.Receipt). Errors: *StepUpPending (with the step-up's reply, also
// returned as the result), *NotGrantedError, Login's errors, and
// conversation.Session.SendID's unchanged (*conversation.SaveError comes
// with its result).
func SendID(ctx context.Context, s *conversation.Session, text, messageID string, f Front) (*conversation.Result, error) {
	res, err := f.send(ctx, s, text, messageID)
	var closed *conversation.ClosedError
	if errors.As(err, &closed) && f.Restart != nil && f.Restart(closed) {
		res, err = f.send(ctx, s, text, conversation.NewMessageID())
	}
	if err != nil {
		return res, err
	}
	if res.DeadGrant != nil && f.DeadGrant != nil {
		f.DeadGrant(res.DeadGrant)
	}
	su := NewStepUp(s, res)
	if su == nil {
		return res, nil
	}
	if !su.Askable() || f.NeedsScopes == nil {
		return res, &StepUpPending{StepUp: su}
	}
	g, err := f.NeedsScopes(ctx, su)
	if err != nil {
		return res, err
	}
	if g == nil {
		return res, &StepUpPending{StepUp: su}
	}
	if err := su.Granted(g); err != nil {
		return res, err
	}
	if f.Resending != nil {
		f.Resending()
	}
	res, err = f.send(ctx, s, text, conversation.NewMessageID())
	if err == nil {
		if again := NewStepUp(s, res); again != nil {
			// Asked once per turn: a second step-up is left to the User.
			return res, &StepUpPending{StepUp: again}
		}
	}
	return res, err
}

// send is one message:send (or message:stream, see Stream), inside
// Waiting.
func (f Front) send(ctx context.Context, s *conversation.Session, text, id string) (*conversation.Result, error) {
	if f.Waiting != nil {
		defer f.Waiting(s)()
	}
	return s.SendStream(ctx, text, id, f.Stream)
}
