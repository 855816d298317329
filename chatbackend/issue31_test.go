package chatbackend

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/demoprovider"
	"github.com/pact-cli/pact/tui"
)

// scripted answers the next message:send requests by its steps (the
// Provider processes each one first; the step decides what pact gets),
// then lets them through.
type scripted struct {
	next  http.RoundTripper
	mu    sync.Mutex
	steps []func(r *http.Request) (*http.Response, error)
}

func (s *scripted) RoundTrip(r *http.Request) (*http.Response, error) {
	if !strings.HasSuffix(r.URL.Path, "/message:send") {
		return s.next.RoundTrip(r)
	}
	s.mu.Lock()
	var step func(*http.Request) (*http.Response, error)
	if len(s.steps) > 0 {
		step, s.steps = s.steps[0], s.steps[1:]
	}
	s.mu.Unlock()
	resp, err := s.next.RoundTrip(r)
	if step == nil || err != nil {
		return resp, err
	}
	io.Copy(io.Discard, resp.Body) // processed by the Brand's agent; the answer is replaced
	resp.Body.Close()
	return step(r)
}

func lost(*http.Request) (*http.Response, error) { return nil, errors.New("connection reset by peer") }

func answered(status int, body string) func(*http.Request) (*http.Response, error) {
	return func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
	}
}

const closedAnswer = `{"error":{"code":400,"status":"FAILED_PRECONDITION","message":"This conversation is closed","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"UNSUPPORTED_OPERATION"}]}}`

// Issue 31 item 1 in the full-screen chat: the Brand processed the message,
// its answer was lost, and the same message sent again was answered
// "conversation closed". Send's error matches tui.ErrContextClosed and
// tui.ErrSentUnanswered, so that the chat says so and offers no new
// conversation with the message sent again; nothing more was sent.
func TestIssue31_1_ChatClosedAfterAnUnknownOutcomeIsNotOfferedAgain(t *testing.T) {
	r := newRig(t, demoprovider.Config{})
	ctx := testCtx(t)
	if _, err := r.b.Send(ctx, "hello"); err != nil {
		t.Fatal(err)
	}
	r.rec.next = &scripted{next: r.rec.next, steps: []func(*http.Request) (*http.Response, error){lost, answered(400, closedAnswer)}}
	_, err := r.b.Send(ctx, "please cancel order A-10001")
	if !errors.Is(err, tui.ErrContextClosed) || !errors.Is(err, tui.ErrSentUnanswered) {
		t.Fatalf("err = %v, want one matching tui.ErrContextClosed and tui.ErrSentUnanswered", err)
	}
	var unknown *conversation.OutcomeUnknownError
	if !errors.As(err, &unknown) || !unknown.Closed {
		t.Fatalf("err = %v, want a *conversation.OutcomeUnknownError", err)
	}
	if !strings.Contains(err.Error(), "may have reached") {
		t.Errorf("words %q", err.Error())
	}
	reqs := r.rec.all()
	if len(reqs) != 3 || reqs[1].messageID != reqs[2].messageID {
		t.Errorf("requests %+v, want hello and the message twice under one messageId", reqs)
	}
}

// Issue 31 item 8 in the chat: a reply pact cannot read (1e400) was
// delivered: the error says so (tui.ErrSentUnanswered: the message waits,
// unanswered), and Enter on it asks again under the same messageId.
func TestIssue31_8_ChatUnreadableReplyIsAskedAgainUnderItsMessageID(t *testing.T) {
	r := newRig(t, demoprovider.Config{})
	ctx := testCtx(t)
	r.rec.next = &scripted{next: r.rec.next, steps: []func(*http.Request) (*http.Response, error){
		answered(200, `{"message":{"messageId":"r","contextId":"c","role":"ROLE_AGENT","parts":[{"text":"x"}],"metadata":{"n":1e400}}}`)}}
	_, err := r.b.Send(ctx, "where is my order A-10001?")
	if !errors.Is(err, tui.ErrSentUnanswered) || errors.Is(err, tui.ErrContextClosed) {
		t.Fatalf("err = %v, want tui.ErrSentUnanswered", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "may have been delivered") || !strings.Contains(msg, "Enter") || strings.Contains(msg, "Try again") {
		t.Errorf("words %q", msg)
	}
	first := r.rec.last()
	if _, err := r.b.Send(ctx, "where is my order A-10001?"); err != nil {
		t.Fatal(err)
	}
	if again := r.rec.last(); again.messageID != first.messageID {
		t.Errorf("asked again under %q, want %q", again.messageID, first.messageID)
	}
	if n := r.srv.AgentRuns(); n != 1 {
		t.Errorf("the agent ran %d times, want 1", n)
	}
}

// Issue 31 item 2: a message left unanswered that the User replaced or
// removed in the chat (Abandon) does not come back when the chat opens
// again, and its text sent again is a new message.
func TestIssue31_2_AbandonedMessageDoesNotComeBack(t *testing.T) {
	for _, replaced := range []bool{true, false} {
		r := newRig(t, demoprovider.Config{})
		ctx := testCtx(t)
		r.rec.next = &scripted{next: r.rec.next, steps: []func(*http.Request) (*http.Response, error){lost, lost, lost, lost}}
		if _, err := r.b.Send(ctx, "cancel order A-10001"); !errors.Is(err, tui.ErrSentUnanswered) {
			t.Fatalf("err = %v, want the message left unanswered", err)
		}
		b := r.reopen()
		h := b.History()
		if len(h) != 1 || h[0].State != tui.Unanswered {
			t.Fatalf("History = %+v, want the unanswered message", h)
		}
		if err := b.Abandon(h[0], replaced); err != nil {
			t.Fatal(err)
		}
		if h := r.reopen().History(); len(h) != 0 {
			t.Errorf("replaced %v: History on the next open = %+v, want nothing", replaced, h)
		}
		if _, err := b.Send(ctx, "cancel order A-10001"); err != nil {
			t.Fatal(err)
		}
		if id := r.rec.last().messageID; id == h[0].ID {
			t.Errorf("replaced %v: the abandoned messageId was used again", replaced)
		}
	}
}

// Issue 31 item 2, for a message of this chat left unanswered: Abandon finds
// it by its text, and the next open does not bring it back.
func TestIssue31_2_AbandonedMessageOfThisChatDoesNotComeBack(t *testing.T) {
	r := newRig(t, demoprovider.Config{})
	ctx := testCtx(t)
	r.rec.next = &scripted{next: r.rec.next, steps: []func(*http.Request) (*http.Response, error){lost, lost, lost, lost}}
	if _, err := r.b.Send(ctx, "cancel order A-10001"); !errors.Is(err, tui.ErrSentUnanswered) {
		t.Fatalf("err = %v, want the message left unanswered", err)
	}
	if err := r.b.Abandon(tui.Turn{Role: tui.RoleUser, Text: "cancel order A-10001", State: tui.Unanswered}, true); err != nil {
		t.Fatal(err)
	}
	if h := r.reopen().History(); len(h) != 0 {
		t.Errorf("History on the next open = %+v, want nothing", h)
	}
}
