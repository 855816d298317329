package mcpserver

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// lossy lets the Provider process message:send requests; when armed, the
// next ones get the answers of its script instead of the Provider's.
type lossy struct {
	next  http.RoundTripper
	mu    sync.Mutex
	steps []func(*http.Request) (*http.Response, error)
	ids   []string // messageId of every message:send
}

func (l *lossy) arm(steps ...func(*http.Request) (*http.Response, error)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.steps = steps
}

func (l *lossy) RoundTrip(r *http.Request) (*http.Response, error) {
	if !strings.HasSuffix(r.URL.Path, "/message:send") {
		return l.next.RoundTrip(r)
	}
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(strings.NewReader(string(body)))
	id := ""
	if i := strings.Index(string(body), `"messageId":"`); i >= 0 {
		id, _, _ = strings.Cut(string(body)[i+len(`"messageId":"`):], `"`)
	}
	l.mu.Lock()
	l.ids = append(l.ids, id)
	var step func(*http.Request) (*http.Response, error)
	if len(l.steps) > 0 {
		step, l.steps = l.steps[0], l.steps[1:]
	}
	l.mu.Unlock()
	resp, err := l.next.RoundTrip(r)
	if step == nil || err != nil {
		return resp, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return step(r)
}

func (l *lossy) sent() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.ids...)
}

func lostAnswer(*http.Request) (*http.Response, error) {
	return nil, errors.New("connection reset by peer")
}

func answered(status int, body string) func(*http.Request) (*http.Response, error) {
	return func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
	}
}

func newLossyEnv(t *testing.T) (*env, *lossy) {
	var l *lossy
	e := newEnvWith(t, true, func(rt http.RoundTripper) http.RoundTripper { l = &lossy{next: rt}; return l })
	return e, l
}

// Issue 31 item 1 in MCP send_message: the Brand processed the message, its
// answer was lost, the same message sent again was answered "conversation
// closed". The tool reports that it may have been delivered and sends
// nothing more: no new conversation, no new messageId.
func TestIssue31_1_MCP_ClosedAfterAnUnknownOutcomeIsNotSentAgain(t *testing.T) {
	e, l := newLossyEnv(t)
	b := e.brands[1].SiteURL
	e.mustCall("send_message", map[string]any{"brand": b, "text": "hello"}, nil)
	l.arm(lostAnswer, answered(400, `{"error":{"code":400,"status":"FAILED_PRECONDITION","message":"This conversation is closed","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"UNSUPPORTED_OPERATION"}]}}`))
	res := e.call("send_message", map[string]any{"brand": b, "text": "please cancel order A-10001"}, nil)
	if !res.IsError || !strings.Contains(text(res), "may have reached") || strings.Contains(text(res), "started a new one") {
		t.Fatalf("send_message: error %v, %s", res.IsError, text(res))
	}
	if ids := l.sent(); len(ids) != 3 || ids[1] != ids[2] {
		t.Errorf("message:send messageIds %q, want hello then the message twice under one messageId", ids)
	}
}

// Issue 31 item 8 in MCP: a reply pact cannot read was delivered; the tool
// says so and how to fetch the answer: the same text again asks under the
// same messageId.
func TestIssue31_8_MCP_UnreadableReplyIsAskedAgainUnderItsMessageID(t *testing.T) {
	e, l := newLossyEnv(t)
	b := e.brands[1].SiteURL
	l.arm(answered(200, `{"message":{"messageId":"r","contextId":"c","role":"ROLE_AGENT","parts":[{"text":"x"}],"metadata":{"n":1e400}}}`))
	res := e.call("send_message", map[string]any{"brand": b, "text": "hello"}, nil)
	if !res.IsError || !strings.Contains(text(res), "may have been delivered") || !strings.Contains(text(res), "call send_message again with the same text") {
		t.Fatalf("send_message: error %v, %s", res.IsError, text(res))
	}
	var out SendOutput
	res = e.mustCall("send_message", map[string]any{"brand": b, "text": "hello"}, &out)
	ids := l.sent()
	if len(ids) != 2 || ids[0] != ids[1] || out.MessageID != ids[0] || !strings.Contains(text(res), "asked again under the same messageId") {
		t.Fatalf("messageIds %q, result %s", ids, text(res))
	}
}

// Issue 31 item 9 in MCP: an INVALID_PARAMS not about the context (a body
// over the demo Provider's 1 MiB) is a refusal of this message: the tool
// does not say the Provider forgot the conversation, and the next message
// continues it.
func TestIssue31_9_MCP_InvalidParamsNotAboutTheContextKeepsTheConversation(t *testing.T) {
	e := newEnv(t, true)
	b := e.brands[1].SiteURL
	var first SendOutput
	e.mustCall("send_message", map[string]any{"brand": b, "text": "hello"}, &first)
	res := e.call("send_message", map[string]any{"brand": b, "text": strings.Repeat("a", 1<<20+1)}, nil)
	if !res.IsError || strings.Contains(text(res), "no longer knows") || strings.Contains(text(res), "new: true") {
		t.Fatalf("send_message: error %v, %s", res.IsError, text(res))
	}
	var next SendOutput
	e.mustCall("send_message", map[string]any{"brand": b, "text": "A-88213"}, &next)
	if next.ContextID != first.ContextID {
		t.Fatalf("the next message went in %q, want the conversation %q continued", next.ContextID, first.ContextID)
	}
}

// Issue 31 item 8 in MCP, review: a reply in another conversation than the one continued
// was a tool error ("…; start a new conversation") without the reply, although the message
// was delivered: the model, told to start a new conversation, sent it again. The tool
// gives the reply and says the message was delivered.
func TestIssue31_8_MCP_AReplyInAnotherConversationWasDelivered(t *testing.T) {
	e, l := newLossyEnv(t)
	b := e.brands[1].SiteURL
	e.mustCall("send_message", map[string]any{"brand": b, "text": "hello"}, nil)
	l.arm(answered(200, `{"message":{"messageId":"r-2","contextId":"ctx-other","role":"ROLE_AGENT","parts":[{"text":"Refund issued."}]}}`))
	res := e.call("send_message", map[string]any{"brand": b, "text": "please refund order A-10001"}, nil)
	if res.IsError || !strings.Contains(text(res), "Refund issued.") || !strings.Contains(text(res), "do not send it again") {
		t.Fatalf("send_message: error %v, %s", res.IsError, text(res))
	}
}

// Issue 31 item 1 in MCP, review: the answer was lost, and the message sent again under
// its messageId was answered "unknown contextId" (the Provider forgot the conversation,
// perhaps after acting on it). The tool told the model to "call send_message again with
// new: true": the same text in a new conversation, under a new messageId. It says to
// tell the User, who decides.
func TestIssue31_1_MCP_ForgottenConversationAfterAnUnknownOutcome(t *testing.T) {
	e, l := newLossyEnv(t)
	b := e.brands[1].SiteURL
	e.mustCall("send_message", map[string]any{"brand": b, "text": "hello"}, nil)
	l.arm(lostAnswer, answered(400, `{"error":{"code":400,"status":"INVALID_ARGUMENT","message":"unknown contextId","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"INVALID_PARAMS"}]}}`))
	res := e.call("send_message", map[string]any{"brand": b, "text": "please cancel order A-10001"}, nil)
	if !res.IsError || !strings.Contains(text(res), "may have reached") || !strings.Contains(text(res), "only if the User says so") || strings.Contains(text(res), "call send_message again with new: true") {
		t.Fatalf("send_message: error %v, %s", res.IsError, text(res))
	}
}
