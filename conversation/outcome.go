package conversation

import (
	"errors"

	"github.com/pact-cli/pact/a2aclient"
)

// OutcomeUnknownError ends a send whose message may have reached the Brand's
// agent, and been acted on, although no answer to it could be used (PACT
// §4.3): the Provider answered 200 but pact could not read the reply (too
// large, not valid), a stream broke after it began and could not be picked
// up again, or the message was sent again under its messageId (an earlier
// attempt got no answer) and that attempt was refused: the conversation is
// closed, or the Provider has no answer for it yet. The outcome is the
// User's to find out, never pact's to guess: the message stays on record as
// sent and unanswered (store.SendSending), it is never sent again as a new
// message, and while its conversation goes on, sending the same text again
// asks under the same messageId (Session.MessageIDFor), so the Brand's agent
// does not act twice.
//
// It unwraps to the *a2aclient.Error of the last attempt. The CLI exits 1
// with the --json reason OUTCOME_UNKNOWN (docs/json.md).
type OutcomeUnknownError struct {
	MessageID string
	// ContextID is the conversation the message went in ("" for the first
	// message of a new one).
	ContextID string
	// Received is set when the Provider is known to have received the
	// message (a2aclient.Error.Reached).
	Received bool
	// Closed is set when the Provider answered the message sent again that
	// the conversation is closed (§4.2, UNSUPPORTED_OPERATION): its answer
	// cannot be fetched any more, and the next message starts a new
	// conversation. (A closed conversation on a message that never reached
	// the Brand is a *ClosedError.)
	Closed bool
	Err    error
}

// Error is the CLI's words: what happened, then what to do (Remedy with
// the CLI's way of asking again).
func (e *OutcomeUnknownError) Error() string {
	if e.Closed {
		return e.What()
	}
	return e.What() + " " + e.Remedy("send the same message again")
}

// What says what happened in plain words, without the way to ask again.
func (e *OutcomeUnknownError) What() string {
	switch {
	case e.Closed:
		return "the Brand's agent ended this conversation, and your message may have reached it before (its answer was lost): " +
			"pact did not send it again. Check with the Brand whether it acted before you send it in a new conversation; the next message starts one."
	case e.Received && (a2aclient.IsReason(e.Err, a2aclient.ReasonBadReply) || a2aclient.IsReason(e.Err, a2aclient.ReasonTooLarge)):
		return "the Provider received your message, but pact cannot read its answer (too large, or not a valid reply): it may have been delivered and acted on."
	case e.Received:
		return "the Provider received your message, but its answer stopped arriving and could not be picked up again: it may have been delivered and acted on."
	default:
		return "your message may have been delivered and acted on (an earlier attempt got no answer), but the Provider has no answer for it yet."
	}
}

// Remedy is how to fetch the answer, with again the front-end's way to send
// the same message again ("send the same message again", "press Enter on
// it", "call send_message again with the same text").
func (e *OutcomeUnknownError) Remedy(again string) string {
	return "Do not send it as a new message: to fetch its answer, " + again + " (pact asks under the same message id, " + e.MessageID +
		", so the Brand's agent does not act twice); tell the Brand if it persists."
}

// Detail is the wire detail (messageId, contextId, the last answer).
func (e *OutcomeUnknownError) Detail() string {
	d := "messageId " + e.MessageID
	if e.ContextID != "" {
		d += ", contextId " + e.ContextID
	}
	return d + ": " + detailOf(e.Err)
}

// ErrorDetails are the members the --json error object adds: messageId
// and contextId, for asking again under the same messageId; closed; and
// cause, the reason of the last answer (INVALID_REPLY, UNSUPPORTED_OPERATION,
// INVALID_PARAMS, NETWORK…).
func (e *OutcomeUnknownError) ErrorDetails() map[string]any {
	cause := ""
	var ae *a2aclient.Error
	if errors.As(e.Err, &ae) {
		cause = ae.Reason
	}
	return map[string]any{"messageId": e.MessageID, "contextId": e.ContextID, "closed": e.Closed, "cause": cause}
}

func (e *OutcomeUnknownError) Unwrap() error { return e.Err }

// outcomeUnknown reports whether a send that failed with err may have been
// processed by the Provider, so that it stays on record as sent and
// unanswered (endSend): it is known not to have been only when no earlier
// attempt under this messageId is on record (first), the User did not
// leave while it was on its way, and err proves it (refusedUnprocessed).
func outcomeUnknown(first, cancelled bool, err error) bool {
	return !first || cancelled || !refusedUnprocessed(err)
}
