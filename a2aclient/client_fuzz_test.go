package a2aclient

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// FuzzParseReply checks §4.2/§5.5 reply rules as properties: ParseReply
// never panics, and an accepted reply holds exactly one of message or task,
// a message is from ROLE_AGENT with a contextId, a task has a contextId, and
// Raw is the bytes received
// (with invalid UTF-8 replaced, so it is valid JSON to print) and decodes to
// the same message or task.
func FuzzParseReply(f *testing.F) {
	for _, s := range []string{
		okReply,
		`{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_AUTH_REQUIRED"}}}`,
		`{"message":{"messageId":"r","contextId":"c","role":"ROLE_AGENT","parts":[{"text":"a"}]},"task":{"id":"t","contextId":"c"}}`,
		`{"message":{"messageId":"r","contextId":"c","role":"ROLE_USER","parts":[]}}`,
		`{"message":{"messageId":"r","role":"ROLE_AGENT","parts":[]}}`,
		`{"message":null,"task":null}`, `{}`, `[]`, `null`, `"x"`,
		`{"message":{"messageId":"r","contextId":"c","role":"ROLE_AGENT","parts":[{"text":"\u00ff"}],"metadata":{"pact.receipt":{"jws":"a.b.c"}}},"extra":{"x":[1,2,3]}}`,
		"{\"message\":{\"messageId\":\"r\",\"contextId\":\"c\xff\",\"role\":\"ROLE_AGENT\",\"parts\":[{\"text\":\"\xfe\"}]}}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseReply(data)
		if err != nil {
			if r != nil {
				t.Fatalf("ParseReply returned a response with error %v", err)
			}
			return
		}
		if (r.Message == nil) == (r.Task == nil) {
			t.Fatalf("accepted reply has message=%v task=%v; want exactly one", r.Message != nil, r.Task != nil)
		}
		if m := r.Message; m != nil && (m.Role != a2a.MessageRoleAgent || m.ContextID == "") {
			t.Fatalf("accepted message with role %q contextId %q", m.Role, m.ContextID)
		}
		if r.Task != nil && r.Task.ContextID == "" {
			t.Fatalf("accepted task without contextId")
		}
		if utf8.Valid(data) && string(r.Raw) != string(data) {
			t.Fatalf("Raw differs from the (valid UTF-8) bytes received")
		}
		if !utf8.Valid(r.Raw) || !json.Valid(r.Raw) {
			t.Fatalf("Raw is not valid UTF-8 JSON: %q", r.Raw)
		}
		// Raw says what the decoded reply says: re-parsing it gives the
		// same message or task.
		again, err := ParseReply(r.Raw)
		if err != nil {
			t.Fatalf("Raw does not parse again: %v", err)
		}
		a, _ := json.Marshal(r.Message)
		b, _ := json.Marshal(again.Message)
		c, _ := json.Marshal(r.Task)
		d, _ := json.Marshal(again.Task)
		if string(a) != string(b) || string(c) != string(d) {
			t.Fatalf("Raw decodes differently:\n%s\n%s\n%s\n%s", a, b, c, d)
		}
	})
}

// FuzzEnvelopeReasonOf checks §6 as properties of Envelope.ReasonOf on any
// decodable error body: it never panics; when an ErrorInfo with a reason is
// put first (details[0], as §6 requires), that reason is the answer whatever
// follows; and a reason found is not changed by appending more details.
func FuzzEnvelopeReasonOf(f *testing.F) {
	for _, s := range []string{
		`{"error":{"code":400,"status":"INVALID_ARGUMENT","message":"m","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"INVALID_PARAMS","domain":"a2a-protocol.org"}]}}`,
		`{"error":{"code":400,"details":[{"@type":"type.googleapis.com/google.rpc.BadRequest"},{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND"}]}}`,
		`{"error":{"details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":""}]}}`,
		`{"error":{"details":[1,"x",null,[],{}]}}`,
		`{"error":{"details":[{"@TYPE":"type.googleapis.com/google.rpc.ErrorInfo","REASON":"X"}]}}`,
		`{"error":null}`, `{}`, `{"error":{"details":null}}`,
	} {
		f.Add([]byte(s), "SOME_FUTURE_REASON")
	}
	f.Fuzz(func(t *testing.T, data []byte, first string) {
		var env Envelope
		if json.Unmarshal(data, &env) != nil {
			return
		}
		got := env.ReasonOf()
		if got != "" {
			more := env
			more.Error.Details = append(append([]json.RawMessage(nil), env.Error.Details...), json.RawMessage(`{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"APPENDED"}`))
			if again := more.ReasonOf(); again != got {
				t.Fatalf("appending a detail changed the reason from %q to %q", got, again)
			}
		}
		if first == "" || !utf8.ValidString(first) {
			return // JSON cannot carry invalid UTF-8: Marshal would change it
		}
		head, err := json.Marshal(map[string]string{"@type": errorInfoType, "reason": first, "domain": "a2a-protocol.org"})
		if err != nil {
			return
		}
		pre := env
		pre.Error.Details = append([]json.RawMessage{head}, env.Error.Details...)
		if r := pre.ReasonOf(); r != first {
			t.Fatalf("details[0] reason %q, ReasonOf = %q", first, r)
		}
	})
}
