package conversation

import (
	"context"

	"github.com/pact-cli/pact/a2aclient"
)

// Streams reports whether messages to this Brand go by message:stream
// when the caller asks for the reply as it arrives: the card declares
// capabilities.streaming and the Provider has not been found unable to
// stream (discovery.Cache.RememberNoStream).
func (s *Session) Streams() bool {
	return s.Card.Streams() && !s.opts.Cards.NoStream(s.Card)
}

// call sends req by message:stream when on is set and Streams, else by
// message:send. A Provider whose card declares streaming but that answers
// message:stream with UNSUPPORTED_OPERATION, no such route or a body that
// is not text/event-stream gets the message once by message:send instead,
// with the same messageId (so the agent does not act twice, PACT §4.3);
// when message:send then answers, pact remembers for this card that the
// Provider does not stream, but only when it refused message:stream
// itself: a stream that began (an event arrived) and broke, whose resume
// (tasks/{id}:subscribe, or message:stream again) was refused, proves the
// Provider streams. (An UNSUPPORTED_OPERATION from message:send too is the
// closed conversation of §4.2, and proves nothing about streaming.)
func (s *Session) call(ctx context.Context, req a2aclient.Request, on a2aclient.StreamFunc) (*a2aclient.Response, error) {
	if on == nil || !s.Streams() {
		return s.opts.Client.Send(ctx, req)
	}
	streamed := false
	resp, err := s.opts.Client.Stream(ctx, req, func(ev a2aclient.StreamEvent) {
		streamed = true
		on(ev)
	})
	if !a2aclient.CannotStream(err) {
		return resp, err
	}
	streamErr := err
	resp, err = s.opts.Client.Send(ctx, req)
	if err == nil && !streamed {
		s.opts.Cards.RememberNoStream(s.Card)
	}
	// The stream's attempts may have reached the Provider (one was cut
	// before UNSUPPORTED_OPERATION answered the next): message:send's
	// answer is then no proof that the message was not processed.
	return resp, a2aclient.AfterAttempts(err, streamErr)
}
