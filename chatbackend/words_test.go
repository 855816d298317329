package chatbackend

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"syscall"
	"testing"

	"github.com/pact-cli/pact/a2aclient"
	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/delegation"
	"github.com/pact-cli/pact/demoprovider"
	"github.com/pact-cli/pact/tui"
)

// noJargon fails when s carries what people should not have to read in the chat.
func noJargon(t *testing.T, s string) {
	t.Helper()
	for _, bad := range []string{"§", "message id", "messageId", "INVALID_PARAMS", "UNSUPPORTED_OPERATION", "HTTP 400", "HTTP 4", "Post ", "http://", "dial tcp"} {
		if strings.Contains(s, bad) {
			t.Errorf("%q contains %q", s, bad)
		}
	}
}

func TestPlainWordsForPeople(t *testing.T) {
	refused := &url.Error{Op: "Post", URL: "http://127.0.0.1:9/v1/message:send", Err: fmt.Errorf("dial tcp 127.0.0.1:9: %w", syscall.ECONNREFUSED)}
	for _, c := range []struct {
		err  error
		want string
	}{
		{&a2aclient.Error{Reason: a2aclient.ReasonNetwork, Err: refused}, "the connection was refused"},
		{&a2aclient.Error{HTTPStatus: 400, Reason: a2aclient.ReasonInvalidParams, Message: "unknown contextId"}, "The Provider refused the message: unknown contextId"},
		{&a2aclient.Error{HTTPStatus: 503, Reason: a2aclient.ReasonHTTP}, "Try again later"},
		{&delegation.LoginRequiredError{Brand: "b", Reason: "the provider refused the token even after a refresh"}, "The delegation stopped working"},
		{errors.New("the Provider answered in context x, not y (§4.2)"), "the Provider answered in context x, not y"},
	} {
		got := Plain(c.err)
		if !strings.Contains(got, c.want) {
			t.Errorf("Plain(%v) = %q, want it to say %q", c.err, got, c.want)
		}
		noJargon(t, got)
	}
}

// §4.2: after a Provider restart the stored contextId is unknown (INVALID_PARAMS): Send
// says so at once, in plain words, wrapping tui.ErrContextUnknown so that the chat offers
// a new conversation.
func TestSection4_2_UnknownContextOffersNew(t *testing.T) {
	r := newRig(t, demoprovider.Config{})
	ctx := testCtx(t)
	r.b.s.UseContext("ctx-forgotten-by-a-restart")
	_, err := r.b.Send(ctx, "still there?")
	if !errors.Is(err, tui.ErrContextUnknown) {
		t.Fatalf("Send in an unknown context = %v, want tui.ErrContextUnknown", err)
	}
	var stale *conversation.StaleContextError
	if !errors.As(err, &stale) {
		t.Fatalf("error %v does not unwrap to *conversation.StaleContextError", err)
	}
	noJargon(t, err.Error())
	if n := len(r.rec.all()); n != 1 {
		t.Errorf("the message went out %d times; an error answer is final", n)
	}
}
