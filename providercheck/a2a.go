package providercheck

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"mime"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// a2aContentType is the Content-Type of every A2A response (§2).
const a2aContentType = "application/a2a+json"

// errorInfoType is the @type of the ErrorInfo detail (§6).
const errorInfoType = "type.googleapis.com/google.rpc.ErrorInfo"

// reasonStatus is the table of §6: reason → HTTP status and status name.
var reasonStatus = map[string]struct {
	code   int
	status string
}{
	"INVALID_PARAMS":                  {400, "INVALID_ARGUMENT"},
	"CONTENT_TYPE_NOT_SUPPORTED":      {400, "INVALID_ARGUMENT"},
	"UNSUPPORTED_OPERATION":           {400, "FAILED_PRECONDITION"},
	"PUSH_NOTIFICATION_NOT_SUPPORTED": {400, "FAILED_PRECONDITION"},
	"TASK_NOT_FOUND":                  {404, "NOT_FOUND"},
	"INTERNAL":                        {500, "INTERNAL"},
}

// randomID is prefix + 96 random bits, base64url.
func randomID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return prefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// iface is the Brand's interface URL.
func (r *runner) iface() string { return r.card.InterfaceURL }

// token is a good PA JWT for endpoint (profile.BoundMinter: only under the
// registration).
func (r *runner) token(ctx context.Context, endpoint string) (string, error) {
	return r.bound.Token(ctx, endpoint)
}

// a2aHeaders are the headers of an A2A request (§2, §3.2).
func a2aHeaders(token string) map[string]string {
	h := map[string]string{"A2A-Version": "1.0", "Accept": a2aContentType + ", application/json"}
	if token != "" {
		h["Authorization"] = "Bearer " + token
	}
	return h
}

// message is the JSON of a SendMessageRequest whose text is prefixed
// "pact provider check: " (§4.1). extra members are added to the message.
func message(text, contextID, messageID string, extra map[string]any) []byte {
	m := map[string]any{
		"messageId": messageID,
		"role":      "ROLE_USER",
		"parts":     []any{map[string]any{"text": checkText + text}},
	}
	if contextID != "" {
		m["contextId"] = contextID
	}
	for k, v := range extra {
		m[k] = v
	}
	b, _ := json.Marshal(map[string]any{"message": m})
	return b
}

// send POSTs body to {interface}/message:send with token ("" = none) and
// the extra headers.
func (r *runner) send(ctx context.Context, body []byte, token string, extra map[string]string) exchange {
	h := a2aHeaders(token)
	h["Content-Type"] = "application/json"
	for k, v := range extra {
		h[k] = v
	}
	return r.do(ctx, request{method: "POST", url: r.iface() + "/message:send", header: h, body: body, a2a: true})
}

// sendGood sends body with a fresh good PA JWT.
func (r *runner) sendGood(ctx context.Context, body []byte, extra map[string]string) exchange {
	tok, err := r.token(ctx, r.iface()+"/message:send")
	if err != nil {
		return exchange{method: "POST", url: r.iface() + "/message:send", err: err}
	}
	return r.send(ctx, body, tok, extra)
}

// mediaType is the exchange's Content-Type without parameters.
func (e exchange) mediaType() string {
	mt, _, err := mime.ParseMediaType(e.header.Get("Content-Type"))
	if err != nil {
		return strings.TrimSpace(e.header.Get("Content-Type"))
	}
	return mt
}

// hasA2ABody reports whether the answer carries an A2A body: the A2A
// media type, or a JSON object with an error, message or task member.
func (e exchange) hasA2ABody() bool {
	if e.mediaType() == a2aContentType {
		return true
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(e.body, &m) != nil {
		return false
	}
	_, a := m["error"]
	_, b := m["message"]
	_, c := m["task"]
	return a || b || c
}

// envelope is the §6 error body.
type envelope struct {
	Error *struct {
		Code    int               `json:"code"`
		Status  string            `json:"status"`
		Message string            `json:"message"`
		Details []json.RawMessage `json:"details"`
	} `json:"error"`
}

type errorInfo struct {
	Type   string `json:"@type"`
	Reason string `json:"reason"`
	Domain string `json:"domain"`
}

// reason0 is details[0].reason of an A2A error body ("" when absent).
func (e exchange) reason0() string {
	var env envelope
	if json.Unmarshal(e.body, &env) != nil || env.Error == nil || len(env.Error.Details) == 0 {
		return ""
	}
	var info errorInfo
	_ = json.Unmarshal(env.Error.Details[0], &info)
	return info.Reason
}

// describe is the answer in one line: status, the A2A reason or the
// reply's kind, and the headers that matter.
func (e exchange) describe() string {
	if e.err != nil {
		return "no answer: " + e.err.Error()
	}
	parts := []string{fmt.Sprint(e.status)}
	if e.status == 401 {
		if v := e.header.Get("WWW-Authenticate"); v != "" {
			parts = append(parts, "WWW-Authenticate: "+v)
		} else {
			parts = append(parts, "no WWW-Authenticate")
		}
	}
	if e.status == 429 {
		if v := e.header.Get("Retry-After"); v != "" {
			parts = append(parts, "Retry-After: "+v)
		} else {
			parts = append(parts, "no Retry-After")
		}
	}
	if len(e.body) == 0 {
		parts = append(parts, "no body")
		return strings.Join(parts, ", ")
	}
	if mt := e.mediaType(); mt != "" {
		parts = append(parts, mt)
	}
	var env envelope
	if json.Unmarshal(e.body, &env) == nil && env.Error != nil {
		r := e.reason0()
		if r == "" {
			r = "no reason in details[0]"
		}
		parts = append(parts, fmt.Sprintf("%s (%s): %q", r, env.Error.Status, env.Error.Message))
		return strings.Join(parts, ", ")
	}
	if rep, err := parseReply(e.body); err == nil {
		switch {
		case rep.Message != nil:
			parts = append(parts, fmt.Sprintf("message %s in context %s", rep.Message.ID, rep.Message.ContextID))
		case rep.Task != nil:
			parts = append(parts, fmt.Sprintf("task %s (%s) in context %s", rep.Task.ID, rep.Task.Status.State, rep.Task.ContextID))
		}
		return strings.Join(parts, ", ")
	}
	parts = append(parts, fmt.Sprintf("%d bytes", len(e.body)))
	return strings.Join(parts, ", ")
}

// reply is a 200 body of message:send (§4.2, §5.5).
type reply struct {
	Message *a2a.Message `json:"message"`
	Task    *a2a.Task    `json:"task"`
}

func parseReply(body []byte) (*reply, error) {
	var rep reply
	if err := json.Unmarshal(body, &rep); err != nil {
		return nil, err
	}
	if (rep.Message == nil) == (rep.Task == nil) {
		return nil, fmt.Errorf("want exactly one of message and task")
	}
	return &rep, nil
}

// want401 lists how an answer differs from the §3.4 failure: 401, a
// Bearer challenge with realm="a2a" and without error="invalid_token"
// (that one is for delegation tokens, §5.5), no A2A body.
func want401(e exchange) []string {
	if e.err != nil {
		return []string{"no answer: " + e.err.Error()}
	}
	var p []string
	if e.status != 401 {
		p = append(p, fmt.Sprintf("status %d, want 401", e.status))
	}
	ch := e.header.Get("WWW-Authenticate")
	switch {
	case ch == "":
		p = append(p, "no WWW-Authenticate header")
	case !strings.HasPrefix(strings.ToLower(strings.TrimSpace(ch)), "bearer"):
		p = append(p, "WWW-Authenticate is not a Bearer challenge")
	case !strings.Contains(ch, `realm="a2a"`):
		p = append(p, `WWW-Authenticate has no realm="a2a"`)
	}
	if strings.Contains(ch, "invalid_token") {
		p = append(p, `WWW-Authenticate says error="invalid_token", which §5.5 keeps for a bad delegation token`)
	}
	if e.status == 401 && e.hasA2ABody() {
		p = append(p, "the 401 has an A2A body")
	}
	return p
}

// wantError lists how an answer differs from the §6 error for reason: the
// status of the table, application/a2a+json, code equal to the status,
// the status name, and an ErrorInfo with the reason as details[0].
func wantError(e exchange, reason string) []string {
	if e.err != nil {
		return []string{"no answer: " + e.err.Error()}
	}
	want := reasonStatus[reason]
	var p []string
	if e.status != want.code {
		p = append(p, fmt.Sprintf("status %d, want %d", e.status, want.code))
	}
	var env envelope
	if json.Unmarshal(e.body, &env) != nil || env.Error == nil {
		return append(p, "no A2A error envelope ({\"error\": {…}}) in the body")
	}
	if mt := e.mediaType(); mt != a2aContentType {
		p = append(p, fmt.Sprintf("Content-Type %q, want %s", mt, a2aContentType))
	}
	if env.Error.Code != e.status {
		p = append(p, fmt.Sprintf("error.code %d does not repeat the HTTP status %d", env.Error.Code, e.status))
	}
	if env.Error.Status != want.status {
		p = append(p, fmt.Sprintf("error.status %q, want %q", env.Error.Status, want.status))
	}
	if len(env.Error.Details) == 0 {
		return append(p, "error.details is empty: the reason belongs in details[0]")
	}
	var info errorInfo
	if json.Unmarshal(env.Error.Details[0], &info) != nil || info.Type != errorInfoType {
		p = append(p, "details[0] is not a google.rpc.ErrorInfo ("+errorInfoType+")")
	} else if info.Reason != reason {
		p = append(p, fmt.Sprintf("details[0].reason %q, want %s", info.Reason, reason))
	}
	return p
}

// judge turns problems into an outcome.
func judge(sent string, e exchange, problems []string) outcome {
	if len(problems) == 0 {
		return pass(sent, e.describe())
	}
	return fail(sent, e.describe(), "%s", strings.Join(problems, "; "))
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
func jsonMarshal(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
