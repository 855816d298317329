package a2aclient

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Issue 31 item 7: a resumed stream is held to the task the first stream
// named. tasks/{id}:subscribe answered with another task (its state, its
// updates and its final message) is refused as it would be in the first
// stream, never taken as this message's answer.
func TestIssue31_7_ResumedStreamOfAnotherTaskIsRefused(t *testing.T) {
	const (
		otherTask = `{"task":{"id":"t-other","contextId":"ctx-1","status":{"state":"TASK_STATE_WORKING"}}}`
		otherDone = `{"statusUpdate":{"taskId":"t-other","contextId":"ctx-1","status":{"state":"TASK_STATE_COMPLETED","message":{"messageId":"r-9","role":"ROLE_AGENT","parts":[{"text":"Refund of 900 EUR issued"}],"metadata":{"pact.receipt":{"jws":"x.y.z"}}}}}}`
		otherCtx  = `{"task":{"id":"t-1","contextId":"ctx-someone-else","status":{"state":"TASK_STATE_WORKING"}}}`
		otherMsg  = `{"message":{"messageId":"r-9","contextId":"ctx-1","taskId":"t-other","role":"ROLE_AGENT","parts":[{"text":"Refund issued"}]}}`
	)
	for name, subscribe := range map[string]http.HandlerFunc{
		"another task":                    sse(0, otherTask, otherDone),
		"another task's updates":          sse(0, otherDone),
		"the task in another context":     sse(0, otherCtx, evDone),
		"a final message of another task": sse(0, otherMsg),
	} {
		t.Run(name, func(t *testing.T) {
			rec, resp, _, err := runStream(t, nil, sse(2, evTask, fmt.Sprintf(evChunk, "Hello "), "never"), subscribe)
			if len(rec.paths) != 2 || rec.paths[1] != "/a2a/b1/tasks/t-1:subscribe" {
				t.Fatalf("requests = %v, want message:stream then tasks/t-1:subscribe, and no more: the refusal is final", rec.paths)
			}
			if err == nil {
				t.Fatalf("the resumed stream was taken as the answer: %s", resp.Raw)
			}
			var e *Error
			if !errors.As(err, &e) || e.Reason != ReasonBadReply || !strings.Contains(e.Message, "not the reply to this message") {
				t.Fatalf("err = %v (%+v), want INVALID_REPLY naming the other task", err, e)
			}
			if !e.Reached || e.Unprocessed() {
				t.Errorf("the message was received (the first stream began): Reached %v, Unprocessed %v", e.Reached, e.Unprocessed())
			}
		})
	}
	// The same events in the first stream are refused too.
	_, _, _, err := runStream(t, nil, sse(0, evTask, otherTask, otherDone))
	if !IsReason(err, ReasonBadReply) {
		t.Errorf("first stream: err = %v, want INVALID_REPLY", err)
	}
}

// Issue 31 items 1 and 8: an error after an attempt that may have reached
// the Provider says so (Earlier, Reached), so that the answer to the
// attempt sent again (UNSUPPORTED_OPERATION, INVALID_PARAMS) is never read
// as the fate of the message.
func TestIssue31_8_ErrorsSayWhetherTheMessageMayHaveArrived(t *testing.T) {
	cut := func(w http.ResponseWriter, r *http.Request) {
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
	}
	bigNumber := reply(`{"message":{"messageId":"r","contextId":"c","role":"ROLE_AGENT","parts":[{"text":"hi"}],"metadata":{"n":1e400}}}`)
	tooBig := func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"message":{"messageId":"r","contextId":"c","role":"ROLE_AGENT","parts":[{"text":"`)
		w.Write([]byte(strings.Repeat("a", MaxReplySize+1)))
	}
	for _, c := range []struct {
		name             string
		handlers         []http.HandlerFunc
		reason           string
		earlier, reached bool
		unprocessed      bool
	}{
		{"a first refusal", []http.HandlerFunc{a2aError(400, ReasonInvalidParams, "Unknown contextId")}, ReasonInvalidParams, false, false, true},
		{"429 then a refusal", []http.HandlerFunc{func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(429) }, a2aError(400, ReasonInvalidParams, "bad")}, ReasonInvalidParams, false, false, true},
		{"no answer, then closed", []http.HandlerFunc{cut, a2aError(400, ReasonUnsupportedOperation, "conversation closed")}, ReasonUnsupportedOperation, true, false, false},
		{"a 502, then no stored reply yet", []http.HandlerFunc{func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(502) }, a2aError(400, ReasonInvalidParams, "no stored reply")}, ReasonInvalidParams, true, false, false},
		{"a number like 1e400", []http.HandlerFunc{bigNumber}, ReasonBadReply, false, true, false},
		{"a reply over 4 MiB", []http.HandlerFunc{tooBig}, ReasonBadReply, false, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, _, err := run(t, c.handlers...)
			var e *Error
			if !errors.As(err, &e) || e.Reason != c.reason {
				t.Fatalf("err = %v, want %s", err, c.reason)
			}
			if e.Earlier != c.earlier || e.Reached != c.reached || e.Unprocessed() != c.unprocessed {
				t.Errorf("Earlier %v Reached %v Unprocessed %v, want %v %v %v", e.Earlier, e.Reached, e.Unprocessed(), c.earlier, c.reached, c.unprocessed)
			}
		})
	}

	// A stream cut before it named a task, sent again under the same
	// messageId and answered INVALID_PARAMS (no stored reply yet).
	_, _, _, err := runStream(t, nil, cut, a2aError(400, ReasonInvalidParams, "no stored reply"))
	var e *Error
	if !errors.As(err, &e) || e.Unprocessed() {
		t.Errorf("stream: err = %v (%+v), want an outcome that may have been processed", err, e)
	}
	_, _, _, err = runStream(t, nil, sse(2, evTask, fmt.Sprintf(evChunk, "Hello "), "never"), a2aError(400, ReasonInvalidParams, "no"), a2aError(400, ReasonInvalidParams, "no stored reply"))
	if !errors.As(err, &e) || !e.Reached || e.Unprocessed() {
		t.Errorf("stream cut after it began: err = %v (%+v), want Reached", err, e)
	}
	// An A2A error as the stream's first event is a refusal.
	_, _, _, err = runStream(t, nil, sse(0, `{"error":{"code":400,"status":"INVALID_ARGUMENT","message":"too long","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"INVALID_PARAMS"}]}}`))
	if !errors.As(err, &e) || !e.Unprocessed() {
		t.Errorf("error event first: err = %v (%+v), want a refusal", err, e)
	}
}

// Issue 31 item 9: only an INVALID_PARAMS about the contextId means the
// Provider no longer knows the conversation; the error's own details say
// which (AIP-193 ErrorInfo metadata, BadRequest field violations, the
// message), read conservatively.
func TestIssue31_9_InvalidParamsAboutTheContext(t *testing.T) {
	info := func(meta string) string {
		return `{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"INVALID_PARAMS","domain":"a2a-protocol.org"` + meta + `}`
	}
	for _, c := range []struct {
		name    string
		message string
		details string
		want    bool
	}{
		{"the example of §6", "Unknown contextId", info(""), true},
		{"context not found", "Context not found", info(""), true},
		{"metadata names the field", "Invalid request", info(`,"metadata":{"field":"message.contextId"}`), true},
		{"metadata keyed by the context", "Invalid request", info(`,"metadata":{"context_id":"c-1"}`), true},
		{"a field violation", "Invalid request", info("") + `,{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"message.contextId","description":"unknown"}]}`, true},
		{"a body over the limit", "Request body unreadable or too large", info(""), false},
		{"no stored reply", "messageId is already being processed; retry later", info(""), false},
		{"another field", "Invalid request", info(`,"metadata":{"field":"message.parts"}`) + `,{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"message.parts[0].text"}]}`, false},
		{"no message at all", "", info(""), false},
		{"a word that only contains it", "Subcontexts are not supported", info(""), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, _, err := run(t, func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(400)
				fmt.Fprintf(w, `{"error":{"code":400,"status":"INVALID_ARGUMENT","message":%q,"details":[%s]}}`, c.message, c.details)
			})
			if !IsReason(err, ReasonInvalidParams) {
				t.Fatalf("err = %v", err)
			}
			if got := AboutContext(err); got != c.want {
				t.Errorf("AboutContext = %v, want %v (%+v)", got, c.want, err)
			}
		})
	}
	if AboutContext(&Error{Reason: ReasonUnsupportedOperation, Message: "Unknown contextId"}) {
		t.Error("another reason than INVALID_PARAMS is never about the context here")
	}
}
