package conversation

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/pact-cli/pact/a2aclient"
	"github.com/pact-cli/pact/demoprovider"
	"github.com/pact-cli/pact/store"
)

// misbehaving stands between pact and the demo Provider: the requests for
// messages (message:send, message:stream, tasks/{id}:subscribe) are
// answered by the next step of its script, which may pass them on
// (forward), lose the answer after the Provider processed it, or answer
// itself.
type misbehaving struct {
	inner http.RoundTripper
	mu    sync.Mutex
	steps []step
	seen  []string // the operation and messageId of every request for a message
}

// step answers one request for a message; forward passes it to the Provider.
type step func(r *http.Request, forward func() (*http.Response, error)) (*http.Response, error)

func (m *misbehaving) RoundTrip(r *http.Request) (*http.Response, error) {
	op := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
	if op != "message:send" && op != "message:stream" && !strings.HasSuffix(op, ":subscribe") {
		return m.inner.RoundTrip(r)
	}
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	id := ""
	if i := bytes.Index(body, []byte(`"messageId":"`)); i >= 0 {
		id, _, _ = strings.Cut(string(body[i+len(`"messageId":"`):]), `"`)
	}
	m.mu.Lock()
	m.seen = append(m.seen, op+" "+id)
	var st step
	if len(m.steps) > 0 {
		st, m.steps = m.steps[0], m.steps[1:]
	}
	m.mu.Unlock()
	forward := func() (*http.Response, error) { return m.inner.RoundTrip(r) }
	if st == nil {
		return forward()
	}
	return st(r, forward)
}

func (m *misbehaving) requests() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.seen...)
}

// lostAnswer lets the Provider process the message, then loses its answer.
func lostAnswer(r *http.Request, forward func() (*http.Response, error)) (*http.Response, error) {
	resp, err := forward()
	if err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return nil, errors.New("connection reset by peer")
}

// answer answers with status and body itself.
func answer(status int, body string) step {
	return func(r *http.Request, _ func() (*http.Response, error)) (*http.Response, error) {
		h := http.Header{"Content-Type": {"application/json"}}
		return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
	}
}

// a2aErr is an A2A error body (§6).
func a2aErr(status int, reason, msg string) step {
	return answer(status, fmt.Sprintf(`{"error":{"code":%d,"status":"X","message":%q,"details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":%q,"domain":"a2a-protocol.org"}]}}`, status, msg, reason))
}

// cutAfter passes a stream on for n events, then breaks the connection.
func cutAfter(n int) step {
	return func(r *http.Request, forward func() (*http.Response, error)) (*http.Response, error) {
		resp, err := forward()
		if err != nil {
			return nil, err
		}
		pr, pw := io.Pipe()
		go func() {
			defer resp.Body.Close()
			br := bufio.NewReader(resp.Body)
			for events := 0; events < n; {
				line, err := br.ReadString('\n')
				io.WriteString(pw, line)
				if line == "\n" {
					events++
				}
				if err != nil {
					break
				}
			}
			pw.CloseWithError(io.ErrUnexpectedEOF)
		}()
		resp.Body = pr
		return resp, nil
	}
}

// misbehave puts m in front of e's Provider for the sessions opened next.
func (e *env) misbehave(steps ...step) *misbehaving {
	m := &misbehaving{inner: e.hc.Transport, steps: steps}
	if m.inner == nil {
		m.inner = http.DefaultTransport
	}
	hc := *e.hc
	hc.Transport = m
	c := *e.opts.Client
	c.HTTP = &hc
	e.opts.Client = &c
	return m
}

// Issue 31 item 1: the Brand processed the message but its answer was lost,
// and the retry under the same messageId is answered UNSUPPORTED_OPERATION
// (the conversation is closed). The outcome is unknown: the send ends with
// an *OutcomeUnknownError (never a *ClosedError, which a front-end answers
// by sending the text again as a new message), the message stays on record
// as sent and unanswered, and the closed conversation is forgotten.
func TestIssue31_1_ClosedAfterAnUnknownOutcomeIsNotAClosedConversation(t *testing.T) {
	e := newEnv(t, demoprovider.Config{})
	first := e.send(e.open(e.brands[1].SiteURL), "hello")
	m := e.misbehave(lostAnswer, a2aErr(400, a2aclient.ReasonUnsupportedOperation, "This conversation is closed"))
	s := e.open(e.brands[1].SiteURL)
	id := NewMessageID()
	_, err := s.SendID(context.Background(), "please cancel order A-10001", id)
	var closed *ClosedError
	if errors.As(err, &closed) {
		t.Fatalf("err = %v: a *ClosedError, which front-ends answer by sending the text again as a new message", err)
	}
	var unknown *OutcomeUnknownError
	if !errors.As(err, &unknown) || !unknown.Closed || unknown.MessageID != id || unknown.ContextID != first.ContextID {
		t.Fatalf("err = %v (%+v), want an *OutcomeUnknownError for the closed conversation", err, unknown)
	}
	if !strings.Contains(err.Error(), "may have reached") || !strings.Contains(err.Error(), "did not send it again") {
		t.Errorf("message %q", err.Error())
	}
	if got := m.requests(); len(got) != 2 || got[0] != got[1] {
		t.Errorf("requests %q, want the message twice under one messageId", got)
	}
	if !s.SentUnanswered(id) {
		t.Error("the message is not on record as sent and unanswered")
	}
	if s.ContextID() != "" {
		t.Errorf("the closed conversation %q is still continued", s.ContextID())
	}
	if runs := e.srv.AgentRuns(); runs != 2 {
		t.Errorf("the agent ran %d times, want 2 (hello, then the message once)", runs)
	}

	// A closed conversation on a first attempt (nothing ever delivered) is
	// still the *ClosedError the front-ends may answer with a new one.
	e.misbehave(a2aErr(400, a2aclient.ReasonUnsupportedOperation, "This conversation is closed"))
	s = e.open(e.brands[1].SiteURL)
	s.UseContext(first.ContextID)
	if _, err := s.Send(context.Background(), "hello again"); !errors.As(err, &closed) {
		t.Fatalf("first attempt: err = %v, want a *ClosedError", err)
	}
}

// Issue 31 item 8: the Provider answered, but pact cannot read the reply
// (a number like 1e400, a body over 4 MiB): the message was delivered. The
// error says so, the message stays on record as sent and unanswered, and
// sending the same text again asks under the same messageId.
func TestIssue31_8_AReplyPactCannotReadMayHaveBeenDelivered(t *testing.T) {
	for name, bad := range map[string]step{
		"1e400":     answer(200, `{"message":{"messageId":"r","contextId":"c","role":"ROLE_AGENT","parts":[{"text":"done"}],"metadata":{"n":1e400}}}`),
		"too large": answer(200, `{"message":{"messageId":"r","contextId":"c","role":"ROLE_AGENT","parts":[{"text":"`+strings.Repeat("a", a2aclient.MaxReplySize)+`"}]}}`),
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, demoprovider.Config{})
			m := e.misbehave(func(r *http.Request, forward func() (*http.Response, error)) (*http.Response, error) {
				if resp, err := forward(); err == nil {
					resp.Body.Close()
				}
				return bad(r, nil)
			})
			s := e.open(e.brands[1].SiteURL)
			_, err := s.Send(context.Background(), "please cancel order A-10001")
			var unknown *OutcomeUnknownError
			if !errors.As(err, &unknown) || !unknown.Received {
				t.Fatalf("err = %v, want an *OutcomeUnknownError (received)", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, "may have been delivered") || !strings.Contains(msg, unknown.MessageID) || strings.Contains(msg, "try again") {
				t.Errorf("message %q: want it to say the message may have been delivered and how to ask again under its id", msg)
			}
			if !s.SentUnanswered(unknown.MessageID) {
				t.Error("the message is not on record as sent and unanswered")
			}
			id, earlier := s.MessageIDFor("please cancel order A-10001")
			if id != unknown.MessageID || earlier == nil {
				t.Errorf("MessageIDFor the same text = %q (%v), want %q", id, earlier, unknown.MessageID)
			}
			if other, _ := s.MessageIDFor("another text"); other == unknown.MessageID {
				t.Error("another text reuses the messageId")
			}
			// Asked again: the Provider's stored answer, the agent ran once.
			r, err := s.SendID(context.Background(), "please cancel order A-10001", id)
			if err != nil || r.MessageID != unknown.MessageID {
				t.Fatalf("asking again: %v", err)
			}
			if runs := e.srv.AgentRuns(); runs != 1 {
				t.Errorf("the agent ran %d times, want 1", runs)
			}
			if got := m.requests(); len(got) != 2 || got[0] != got[1] {
				t.Errorf("requests %q", got)
			}
		})
	}
}

// Issue 31 item 8: a stream cut after it began, sent again under the same
// messageId and answered INVALID_PARAMS (the Provider has no stored answer
// yet): the message may have been delivered; the live conversation is not
// marked unknown.
func TestIssue31_8_AStreamCutThenNoAnswerYetIsNotAStaleConversation(t *testing.T) {
	e := newEnv(t, demoprovider.Config{StreamWordDelay: -1})
	first := e.send(e.open(e.brands[0].SiteURL), "hello")
	e.misbehave(cutAfter(0), a2aErr(400, a2aclient.ReasonInvalidParams, "messageId is already being processed; retry later"))
	s := e.open(e.brands[0].SiteURL)
	_, err := s.SendStream(context.Background(), "Where is my order A-88213?", NewMessageID(), func(a2aclient.StreamEvent) {})
	var unknown *OutcomeUnknownError
	var stale *StaleContextError
	if !errors.As(err, &unknown) || errors.As(err, &stale) {
		t.Fatalf("err = %v, want an *OutcomeUnknownError, not a stale conversation", err)
	}
	if !s.SentUnanswered(unknown.MessageID) {
		t.Error("the message is not on record as sent and unanswered")
	}
	list, _ := e.opts.Store.List()
	for _, c := range list {
		if c.ContextID == first.ContextID && c.State != StateOpen {
			t.Errorf("the live conversation is now %q", c.State)
		}
	}
}

// Issue 31 item 9: an INVALID_PARAMS that is not about the context (a body
// over the Provider's limit, here the demo's real 1 MiB) is a refusal of
// the message: the conversation stays open and is continued. One about the
// contextId marks it unknown, as before.
func TestIssue31_9_InvalidParamsNotAboutTheContextKeepsTheConversation(t *testing.T) {
	e := newEnv(t, demoprovider.Config{})
	s := e.open(e.brands[1].SiteURL)
	first := e.send(s, "hello")
	_, err := s.Send(context.Background(), strings.Repeat("a", 1<<20+1))
	var stale *StaleContextError
	if errors.As(err, &stale) || !a2aclient.IsReason(err, a2aclient.ReasonInvalidParams) {
		t.Fatalf("err = %v, want the INVALID_PARAMS refusal, not a stale conversation", err)
	}
	if strings.Contains(err.Error(), "no longer knows") {
		t.Errorf("message %q", err.Error())
	}
	if s2 := e.open(e.brands[1].SiteURL); s2.ContextID() != first.ContextID {
		t.Fatalf("the conversation is not continued after the refusal: %q", s2.ContextID())
	}
	list, _ := e.opts.Store.List()
	if len(list) != 1 || list[0].State != StateOpen {
		t.Fatalf("conversations %+v, want the one open", list)
	}
	if r := e.send(s, "A-88213"); r.ContextID != first.ContextID {
		t.Fatalf("next message in %q, want %q", r.ContextID, first.ContextID)
	}
}

// Issue 31 item 2: a message left unanswered that the User replaced or
// removed is abandoned on record: no longer unanswered (it does not come
// back), not failed (it may have been delivered).
func TestIssue31_2_AnAbandonedMessageDoesNotComeBack(t *testing.T) {
	e := newEnv(t, demoprovider.Config{})
	s := e.open(e.brands[1].SiteURL)
	e.send(s, "hello")
	ctx := context.Background()
	for _, why := range []string{AbandonReplaced, AbandonRemoved} {
		id := NewMessageID()
		if err := e.opts.Store.db.RecordSend(ctx, store.Send{MessageID: id, Brand: s.Card.URL, InterfaceURL: s.Card.InterfaceURL,
			ContextID: s.ContextID(), Text: "cancel order A-10001", At: e.opts.now()}); err != nil {
			t.Fatal(err)
		}
		if un, _ := s.Unanswered(); len(un) != 1 || un[0].MessageID != id {
			t.Fatalf("unanswered = %+v", un)
		}
		if err := s.Abandon(id, why); err != nil {
			t.Fatal(err)
		}
		if un, _ := e.open(e.brands[1].SiteURL).Unanswered(); len(un) != 0 {
			t.Errorf("%s: still unanswered on the next open: %+v", why, un)
		}
		if st, _ := e.opts.Store.db.SendState(ctx, id); st != store.SendAbandoned {
			t.Errorf("%s: state %q, want %q", why, st, store.SendAbandoned)
		}
		if again, earlier := s.MessageIDFor("cancel order A-10001"); again == id || earlier != nil {
			t.Errorf("%s: the abandoned messageId is offered again", why)
		}
	}
	// A delivered message is not abandoned.
	r := e.send(s, "A-88213")
	if err := s.Abandon(r.MessageID, AbandonRemoved); err != nil {
		t.Fatal(err)
	}
	if st, _ := e.opts.Store.db.SendState(ctx, r.MessageID); st != store.SendDelivered {
		t.Errorf("a delivered message became %q", st)
	}
}

// Issue 31 item 1, after a cut stream: the stream broke after the Provider
// answered 200, message:stream sent again was answered UNSUPPORTED_OPERATION
// and so was message:send (the fallback of a Provider that cannot stream):
// the outcome is unknown all the same.
func TestIssue31_1_ClosedAfterACutStreamIsAnUnknownOutcome(t *testing.T) {
	e := newEnv(t, demoprovider.Config{StreamWordDelay: -1})
	e.send(e.open(e.brands[0].SiteURL), "hello")
	closed := a2aErr(400, a2aclient.ReasonUnsupportedOperation, "This conversation is closed")
	m := e.misbehave(cutAfter(0), closed, closed)
	s := e.open(e.brands[0].SiteURL)
	_, err := s.SendStream(context.Background(), "please cancel order A-10001", NewMessageID(), func(a2aclient.StreamEvent) {})
	var unknown *OutcomeUnknownError
	if !errors.As(err, &unknown) || !unknown.Closed {
		t.Fatalf("err = %v, want an *OutcomeUnknownError for the closed conversation", err)
	}
	if got := m.requests(); len(got) != 3 || !strings.HasPrefix(got[2], "message:send ") {
		t.Errorf("requests %q, want message:stream twice then message:send", got)
	}
}
