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
		// An HTML error page: pact's own "HTTP 400 from the Provider" is not the Provider's
		// message, and no leftover "from the Provider" follows the colon.
		{&a2aclient.Error{HTTPStatus: 400, Reason: a2aclient.ReasonHTTP, Message: "HTTP 400 from the Provider"}, "The Provider refused the message."},
		{&a2aclient.Error{HTTPStatus: 400, Reason: a2aclient.ReasonUnknown, Message: "HTTP 400 with an A2A error that has no ErrorInfo reason"}, "The Provider refused the message."},
		{&delegation.LoginRequiredError{Brand: "b", Reason: "the provider refused the token even after a refresh"}, "The delegation stopped working"},
		{errors.New("the Provider answered in context x, not y (§4.2)"), "the Provider answered in context x, not y"},
	} {
		got := Plain(c.err)
		if strings.Contains(got, ": from the Provider") || strings.Contains(got, "ErrorInfo") {
			t.Errorf("Plain(%v) = %q: leftover wire words", c.err, got)
		}
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
	r.s.UseContext("ctx-forgotten-by-a-restart")
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

// §5.5, issue 10 (8): a delegation the Provider revoked cannot be used or renewed: Send
// says so in plain words wrapping tui.ErrDelegationLost, the grant is dropped, the header
// says identity only and the delegation stopped working, and the next message goes out
// with identity only and gets a reply.
func TestSection5_5_DeadGrantDropsToIdentityOnly(t *testing.T) {
	r := newRig(t, demoprovider.Config{})
	ctx := testCtx(t)
	if _, err := r.b.Login(ctx, []string{"orders:read"}, nil); err != nil {
		t.Fatal(err)
	}
	g, err := r.s.Grant()
	if err != nil {
		t.Fatal(err)
	}
	if !r.srv.RevokeGrant(g.GrantID) {
		t.Fatalf("no grant %s at the Provider", g.GrantID)
	}
	_, err = r.b.Send(ctx, "where is my order A-10001?")
	if !errors.Is(err, tui.ErrDelegationLost) {
		t.Fatalf("Send with a revoked grant = %v, want tui.ErrDelegationLost", err)
	}
	noJargon(t, err.Error())
	h := r.b.Header()
	if !h.DelegationLost || !h.ExpiresAt.IsZero() || len(h.Scopes) != 0 {
		t.Fatalf("header after the dead grant = %+v, want identity only with DelegationLost", h)
	}
	res, err := r.b.Send(ctx, "where is my order A-10001?")
	if err != nil || len(res.Turns) == 0 || !strings.Contains(res.Turns[0].Text, "A-10001") {
		t.Fatalf("identity-only send after the drop = %+v, %v", res, err)
	}
}
