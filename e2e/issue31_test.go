package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// scriptedSends is a hostile Provider's message:send and message:stream:
// each request is recorded (messageId, contextId) and answered by the next
// handler of the script (the last one repeats).
type scriptedSends struct {
	mu       sync.Mutex
	handlers []http.HandlerFunc
	ids      []string // messageId of each request
	ctxs     []string // contextId of each request
}

func (s *scriptedSends) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var req struct {
		Message struct {
			MessageID string `json:"messageId"`
			ContextID string `json:"contextId"`
		} `json:"message"`
	}
	json.Unmarshal(body, &req)
	s.mu.Lock()
	s.ids = append(s.ids, req.Message.MessageID)
	s.ctxs = append(s.ctxs, req.Message.ContextID)
	h := s.handlers[min(len(s.ids), len(s.handlers))-1]
	s.mu.Unlock()
	h(w, r)
}

func (s *scriptedSends) seen() (ids, ctxs []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.ids...), append([]string(nil), s.ctxs...)
}

// hangUp lets the request in (the Brand's agent processed it), then closes
// the connection without an answer: the reply is lost.
func hangUp(w http.ResponseWriter, r *http.Request) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		conn.Close()
	}
}

// a2aError answers an A2A error (§6).
func a2aError(status int, reason, message string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error":{"code":%d,"status":"X","message":%q,"details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":%q,"domain":"a2a-protocol.org"}]}}`, status, message, reason)
	}
}

func replyWith(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body)
	}
}

// scriptedProvider is a hostile Provider whose message:send follows script.
func scriptedProvider(t *testing.T, script ...http.HandlerFunc) (*fakeProvider, *scriptedSends) {
	s := &scriptedSends{handlers: script}
	return newFakeProvider(t, s.serve), s
}

// errorDoc is the --json error object with the members an unknown outcome
// adds.
type errorDoc struct {
	Error struct {
		jsonError
		MessageID string `json:"messageId"`
		ContextID string `json:"contextId"`
		Closed    bool   `json:"closed"`
	} `json:"error"`
}

func parseErrorDoc(t *testing.T, line string) errorDoc {
	t.Helper()
	var d errorDoc
	if err := json.Unmarshal([]byte(line), &d); err != nil {
		t.Fatalf("not an error document: %v\n%s", err, line)
	}
	return d
}

// Issue 31 item 1, in `pact send` (piped and --json) and line-mode `pact
// chat`: the Brand processed the message, its answer was lost, and the
// same message sent again is answered "conversation closed". pact reports
// that it may have been delivered and never sends it again as a new
// message (no request without the contextId, no new messageId).
func TestIssue31_1_ClosedAfterAnUnknownOutcomeIsNotSentAgain(t *testing.T) {
	t.Parallel()
	closed := a2aError(400, "UNSUPPORTED_OPERATION", "This conversation is closed")
	for _, c := range []struct {
		name  string
		args  []string
		stdin string
	}{
		{"send piped", []string{"send", "", "please cancel order A-10001"}, ""},
		{"send --json", []string{"send", "", "please cancel order A-10001", "--json"}, ""},
		{"line-mode chat", []string{"chat", ""}, "please cancel order A-10001\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f, sends := scriptedProvider(t, replyWith(agentReply("hello")), hangUp, closed)
			e := hostileEnv(t, f)
			e.must("send", f.URL(), "hello")
			args := append([]string(nil), c.args...)
			args[1] = f.URL()
			cmd := e.cmd(t.Context(), args...)
			var out, errb bytes.Buffer
			cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(c.stdin), &out, &errb
			err := cmd.Run()
			if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 1 {
				t.Fatalf("exit %v, want 1\nstdout: %s\nstderr: %s", err, out.String(), errb.String())
			}
			ids, ctxs := sends.seen()
			if len(ids) != 3 || ids[1] != ids[2] || ctxs[2] != "ctx-1" {
				t.Fatalf("requests: messageIds %q, contextIds %q; want hello, then the message twice under one messageId in ctx-1", ids, ctxs)
			}
			if strings.Contains(errb.String(), "Starting a new conversation") {
				t.Errorf("pact started a new conversation:\n%s", errb.String())
			}
			if slicesContains(c.args, "--json") {
				d := parseErrorDoc(t, out.String())
				if d.Error.Reason != "OUTCOME_UNKNOWN" || d.Error.HTTPStatus != 400 || d.Error.MessageID != ids[1] || d.Error.ContextID != "ctx-1" || !d.Error.Closed {
					t.Errorf("error document %+v", d.Error)
				}
			} else if !strings.Contains(errb.String(), "may have reached") || !strings.Contains(errb.String(), "did not send it again") {
				t.Errorf("stderr does not say the message may have been delivered:\n%s", errb.String())
			}
		})
	}
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// Issue 31 item 8: the Provider answered 200 with a reply pact cannot read
// (a number like 1e400): the message was delivered. pact says so (never
// "try again"), keeps it on record, and the same message sent again goes
// under the same messageId, which fetches the stored answer.
func TestIssue31_8_AnUnreadableReplyIsAskedForAgainUnderTheSameMessageID(t *testing.T) {
	t.Parallel()
	bad := replyWith(`{"message":{"messageId":"r-1","contextId":"ctx-1","role":"ROLE_AGENT","parts":[{"text":"refunded"}],"metadata":{"amount":1e400}}}`)
	f, sends := scriptedProvider(t, bad, replyWith(agentReply("Refund issued.")))
	e := hostileEnv(t, f)
	r := e.run("send", f.URL(), "please refund order A-10001", "--json")
	je := wantError(t, r, 1, "OUTCOME_UNKNOWN", 200, "may have been delivered", "same message again")
	if strings.Contains(strings.ToLower(je.Message), "try again") {
		t.Errorf("message %q tells to try again", je.Message)
	}
	d := parseErrorDoc(t, r.stdout)
	r = e.run("send", f.URL(), "please refund order A-10001")
	if r.code != 0 || !strings.Contains(r.stdout, "Refund issued.") || !strings.Contains(r.stderr, "Asking again") {
		t.Fatalf("asking again: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if ids, _ := sends.seen(); len(ids) != 2 || ids[1] != ids[0] || ids[0] != d.Error.MessageID {
		t.Errorf("messageIds %q, want the same twice (%s)", ids, d.Error.MessageID)
	}
	// Answered: another message of the same text is a new message.
	e.must("send", f.URL(), "please refund order A-10001")
	if ids, _ := sends.seen(); len(ids) != 3 || ids[2] == ids[0] {
		t.Errorf("messageIds %q, want a new one for a new message", ids)
	}
}

// streamingProvider is a hostile Provider whose card declares streaming:
// message:stream and tasks/{id}:subscribe follow their scripts.
func streamingProvider(t *testing.T, stream, subscribe []http.HandlerFunc) (*fakeProvider, *scriptedSends, *scriptedSends) {
	st, sub := &scriptedSends{handlers: stream}, &scriptedSends{handlers: subscribe}
	f := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request) { http.Error(w, "streams only", 500) })
	f.Card = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(cardJSON(f.Iface(), map[string]any{"capabilities": map[string]any{"streaming": true}})))
	}
	f.mux.HandleFunc("/a2a/b1/message:stream", st.serve)
	f.mux.HandleFunc("/a2a/b1/tasks/", sub.serve)
	return f, st, sub
}

// events answers Server-Sent Events; with cut, the connection is closed
// after them, as a broken stream.
func events(cut bool, evs ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		for _, ev := range evs {
			fmt.Fprintf(w, "data: %s\n\n", ev)
			w.(http.Flusher).Flush()
		}
		if cut {
			hangUp(w, r)
		}
	}
}

const (
	evTask  = `{"task":{"id":"t-1","contextId":"ctx-1","status":{"state":"TASK_STATE_WORKING"}}}`
	evChunk = `{"artifactUpdate":{"taskId":"t-1","contextId":"ctx-1","artifact":{"artifactId":"a-1","parts":[{"text":"Looking at order A-10001… "}]}}}`
)

// Issue 31 item 7: the stream breaks, and tasks/{id}:subscribe answers
// with another task's updates and final message. pact refuses it as it
// refuses the same events in the first stream: nothing is stored or shown
// as this message's answer, and the outcome is reported as unknown.
func TestIssue31_7_AResumedStreamOfAnotherTaskIsRefused(t *testing.T) {
	t.Parallel()
	other := events(false,
		`{"task":{"id":"t-other","contextId":"ctx-1","status":{"state":"TASK_STATE_WORKING"}}}`,
		`{"statusUpdate":{"taskId":"t-other","contextId":"ctx-1","status":{"state":"TASK_STATE_COMPLETED","message":{"messageId":"r-9","role":"ROLE_AGENT","parts":[{"text":"Refund of 900 EUR issued to another account."}]}}}}`)
	f, _, sub := streamingProvider(t, []http.HandlerFunc{events(true, evTask, evChunk)}, []http.HandlerFunc{other})
	e := hostileEnv(t, f)
	r := e.run("send", f.URL(), "where is my order A-10001?", "--json-stream")
	if r.code != 1 || strings.Contains(r.stdout, `"brand"`) {
		t.Fatalf("exit %d, want 1 and no final document\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	d := parseErrorDoc(t, lines[len(lines)-1])
	if d.Error.Reason != "OUTCOME_UNKNOWN" || !strings.Contains(d.Error.Message, "not the reply to this message") {
		t.Errorf("error %+v, want OUTCOME_UNKNOWN naming the other task", d.Error)
	}
	if ids, _ := sub.seen(); len(ids) != 1 {
		t.Errorf("%d subscribe requests, want 1", len(ids))
	}
	r = e.must("conversations", "--json")
	if strings.Contains(r.stdout, "ctx-1") {
		t.Errorf("the other task's answer was stored: %s", r.stdout)
	}
	r = e.must("receipts", "list", "--json")
	if strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("receipts: %s", r.stdout)
	}
}

// Issue 31 item 8: a stream that broke after it began and cannot be picked
// up again (every resume cut too) was delivered: pact says so, not "could
// not reach the Provider".
func TestIssue31_8_AStreamThatCannotBeResumedMayHaveBeenDelivered(t *testing.T) {
	t.Parallel()
	f, _, _ := streamingProvider(t, []http.HandlerFunc{events(true, evTask, evChunk)}, []http.HandlerFunc{hangUp})
	e := hostileEnv(t, f)
	r := e.run("send", f.URL(), "where is my order A-10001?")
	if r.code != 1 || strings.Contains(r.stderr, "could not reach") || !strings.Contains(r.stderr, "may have been delivered") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
}

// Issue 31 item 9: an INVALID_PARAMS about something else than the context
// (a body over the Provider's limit) is a refusal of the message: the
// conversation stays open, and the next message continues it.
func TestIssue31_9_InvalidParamsNotAboutTheContextKeepsTheConversation(t *testing.T) {
	t.Parallel()
	f, sends := scriptedProvider(t, replyWith(agentReply("hello")), a2aError(400, "INVALID_PARAMS", "Request body unreadable or too large"), replyWith(agentReply("ok")))
	e := hostileEnv(t, f)
	e.must("send", f.URL(), "hello")
	r := e.run("send", f.URL(), "a long message", "--json")
	je := wantError(t, r, 1, "INVALID_PARAMS", 400, "too large")
	if strings.Contains(je.Message, "no longer knows") {
		t.Errorf("message %q", je.Message)
	}
	r = e.must("conversations", "--json")
	if !strings.Contains(r.stdout, `"state": "open"`) {
		t.Errorf("the conversation is no longer open: %s", r.stdout)
	}
	e.must("send", f.URL(), "a shorter one")
	if _, ctxs := sends.seen(); len(ctxs) != 3 || ctxs[2] != "ctx-1" {
		t.Errorf("contextIds %q, want the conversation continued", ctxs)
	}
}

// Issue 31 item 8, review: the Provider answered the message, in another conversation
// than the one continued. pact printed only "…; start a new conversation", no reply: a
// delivered message reported as a failure, and the same text, sent again in a new
// conversation as told, made the Brand's agent act twice. pact shows the reply and says
// the message was delivered.
func TestIssue31_8_AReplyInAnotherConversationWasDelivered(t *testing.T) {
	t.Parallel()
	other := replyWith(`{"message":{"messageId":"r-2","contextId":"ctx-2","role":"ROLE_AGENT","parts":[{"text":"Refund issued."}]}}`)
	for _, c := range []struct {
		name  string
		args  []string
		stdin string
	}{
		{"send", []string{"send", "", "please refund order A-10001"}, ""},
		{"line-mode chat", []string{"chat", ""}, "please refund order A-10001\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f, _ := scriptedProvider(t, replyWith(agentReply("hello")), other)
			e := hostileEnv(t, f)
			e.must("send", f.URL(), "hello")
			args := append([]string(nil), c.args...)
			args[1] = f.URL()
			cmd := e.cmd(t.Context(), args...)
			var out, errb bytes.Buffer
			cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(c.stdin), &out, &errb
			cmd.Run()
			if cmd.ProcessState.ExitCode() == 0 || !strings.Contains(out.String(), "Refund issued.") {
				t.Errorf("exit %d, want a failure with the reply shown\nstdout: %s\nstderr: %s", cmd.ProcessState.ExitCode(), out.String(), errb.String())
			}
			if !strings.Contains(errb.String(), "was delivered") || !strings.Contains(errb.String(), "do not send it again") {
				t.Errorf("stderr does not say the message was delivered:\n%s", errb.String())
			}
		})
	}
}
