package a2aclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pact-cli/pact/httpx"
)

const okReply = `{"message":{"messageId":"r-1","contextId":"ctx-1","role":"ROLE_AGENT","parts":[{"text":"hello"}]}}`

type recorder struct {
	mu       sync.Mutex
	ids      []string
	tokens   []string
	headers  []http.Header
	handlers []http.HandlerFunc // one per attempt; the last repeats
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body a2a.SendMessageRequest
	json.NewDecoder(r.Body).Decode(&body)
	rec.mu.Lock()
	rec.ids = append(rec.ids, body.Message.ID)
	rec.tokens = append(rec.tokens, r.Header.Get("Authorization"))
	rec.headers = append(rec.headers, r.Header.Clone())
	n := len(rec.ids)
	rec.mu.Unlock()
	h := rec.handlers[len(rec.handlers)-1]
	if n <= len(rec.handlers) {
		h = rec.handlers[n-1]
	}
	h(w, r)
}

func reply(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/a2a+json")
		io.WriteString(w, body)
	}
}

func a2aError(status int, reason, msg string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/a2a+json")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error":{"code":%d,"status":"X","message":%q,"details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":%q,"domain":"a2a-protocol.org"}]}}`, status, msg, reason)
	}
}

func run(t *testing.T, handlers ...http.HandlerFunc) (*recorder, *Response, []time.Duration, error) {
	t.Helper()
	rec := &recorder{handlers: handlers}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	var waits []time.Duration
	c := &Client{
		HTTP:  httpx.NewClient(httpx.Options{Timeout: 2 * time.Second}),
		Sleep: func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil },
	}
	n := 0
	resp, err := c.Send(context.Background(), Request{
		InterfaceURL: srv.URL + "/a2a/b1",
		Message:      a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi")),
		PAToken:      func(context.Context, string) (string, error) { n++; return fmt.Sprintf("tok-%d", n), nil },
	})
	return rec, resp, waits, err
}

func TestSection4_ReplyMessage(t *testing.T) {
	rec, resp, _, err := run(t, reply(okReply))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message == nil || resp.Message.ContextID != "ctx-1" || resp.Message.Parts[0].Text() != "hello" {
		t.Fatalf("resp = %+v", resp)
	}
	h := rec.headers[0]
	if h.Get("A2A-Version") != "1.0" || h.Get("Content-Type") != "application/json" || h.Get("Authorization") != "Bearer tok-1" {
		t.Fatalf("headers = %v", h)
	}
}

func TestSection4_3_RetryKeepsMessageIDAndMintsFreshTokens(t *testing.T) {
	fail := func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(502) }
	rec, resp, waits, err := run(t, fail, a2aError(500, "INTERNAL", "boom"), reply(okReply))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Attempts != 3 || len(rec.ids) != 3 {
		t.Fatalf("attempts = %d", resp.Attempts)
	}
	if rec.ids[0] != rec.ids[1] || rec.ids[1] != rec.ids[2] {
		t.Fatalf("messageId changed across retries: %v", rec.ids)
	}
	if rec.tokens[0] == rec.tokens[1] || rec.tokens[1] == rec.tokens[2] {
		t.Fatalf("a PA JWT was reused: %v", rec.tokens)
	}
	if len(waits) != 2 || waits[1] <= waits[0] {
		t.Fatalf("backoff waits = %v", waits)
	}
}

func TestSection4_3_ConnectionResetIsRetried(t *testing.T) {
	reset := func(w http.ResponseWriter, r *http.Request) {
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
	}
	rec, resp, _, err := run(t, reset, reply(okReply))
	if err != nil || resp.Attempts != 2 || rec.ids[0] != rec.ids[1] {
		t.Fatalf("err=%v resp=%+v ids=%v", err, resp, rec.ids)
	}
}

func TestRetriesAreBounded(t *testing.T) {
	rec, _, _, err := run(t, a2aError(500, "INTERNAL", "down"))
	var e *Error
	if !errors.As(err, &e) || e.Reason != "INTERNAL" || e.Attempts != 4 || len(rec.ids) != 4 {
		t.Fatalf("err=%v attempts=%d", err, len(rec.ids))
	}
}

func TestSection6_429WaitsRetryAfter(t *testing.T) {
	limited := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3")
		w.WriteHeader(429)
	}
	_, resp, waits, err := run(t, limited, reply(okReply))
	if err != nil || resp.Attempts != 2 || len(waits) != 1 || waits[0] != 3*time.Second {
		t.Fatalf("err=%v waits=%v", err, waits)
	}
}

func TestSection6_429RetryAfterOfAYearIsNotHonoured(t *testing.T) {
	limited := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "31536000")
		w.WriteHeader(429)
	}
	rec, _, waits, err := run(t, limited)
	var e *Error
	if !errors.As(err, &e) || e.Reason != ReasonRateLimited || len(waits) != 0 || len(rec.ids) != 1 {
		t.Fatalf("err=%v waits=%v", err, waits)
	}
	if !strings.Contains(e.Error(), "8760h") {
		t.Fatalf("error should say how long the Provider asks to wait: %v", e)
	}
}

func TestSection6_ReasonFromDetailsNotStatus(t *testing.T) {
	// A 400 whose reason is UNSUPPORTED_OPERATION must not be read as INVALID_PARAMS.
	_, _, _, err := run(t, a2aError(400, "UNSUPPORTED_OPERATION", "context closed"))
	if !IsReason(err, ReasonUnsupportedOperation) {
		t.Fatalf("got %v", err)
	}
	// ErrorInfo not first (a2a-go server order): found by @type.
	later := func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(400)
		io.WriteString(w, `{"error":{"code":400,"status":"INVALID_ARGUMENT","message":"x","details":[{"@type":"type.googleapis.com/google.rpc.BadRequest"},{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"INVALID_PARAMS"}]}}`)
	}
	if _, _, _, err := run(t, later); !IsReason(err, ReasonInvalidParams) {
		t.Fatalf("got %v", err)
	}
}

func TestSection6_ErrorWithoutDetails(t *testing.T) {
	nodetails := func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(400)
		io.WriteString(w, `{"error":{"code":400,"status":"INVALID_ARGUMENT","message":"bad"}}`)
	}
	_, _, _, err := run(t, nodetails)
	var e *Error
	if !errors.As(err, &e) || e.Reason != ReasonUnknown || e.Message != "bad" || e.HTTPStatus != 400 {
		t.Fatalf("got %#v", err)
	}
}

func TestSection3_4_401(t *testing.T) {
	unauth := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="a2a"`)
		w.WriteHeader(401)
	}
	rec, _, _, err := run(t, unauth)
	if !IsReason(err, ReasonUnauthenticated) || len(rec.ids) != 1 {
		t.Fatalf("got %v after %d attempts", err, len(rec.ids))
	}
	invalid := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="a2a", error="invalid_token"`)
		w.WriteHeader(401)
	}
	// Without a delegation token the token refused is the PA JWT: the identity, never
	// "log in again".
	if _, _, _, err := run(t, invalid); !IsReason(err, ReasonUnauthenticated) || strings.Contains(err.Error(), "pact login") {
		t.Fatalf("invalid_token without delegation: got %v", err)
	}
	// With one, it is the delegation that was refused.
	srv := httptest.NewServer(http.HandlerFunc(invalid))
	defer srv.Close()
	c := &Client{HTTP: httpx.NewClient(httpx.Options{Timeout: 2 * time.Second})}
	_, err = c.Send(context.Background(), Request{
		InterfaceURL: srv.URL + "/a2a/b1",
		Message:      a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi")),
		PAToken:      func(context.Context, string) (string, error) { return "pa", nil },
		Delegation:   func(context.Context) (string, error) { return "dt", nil },
	})
	if !IsReason(err, ReasonInvalidToken) || !strings.Contains(err.Error(), "pact login") {
		t.Fatalf("invalid_token with delegation: got %v", err)
	}
}

func TestSection2_2_404WithoutBody(t *testing.T) {
	if _, _, _, err := run(t, http.NotFound); !IsReason(err, ReasonNotFound) {
		t.Fatalf("got %v", err)
	}
}

func TestParseReply_Hostile(t *testing.T) {
	for name, body := range map[string]string{
		"both":      `{"message":{"messageId":"r","contextId":"c","role":"ROLE_AGENT","parts":[]},"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}}`,
		"neither":   `{"other":1}`,
		"user role": `{"message":{"messageId":"r","contextId":"c","role":"ROLE_USER","parts":[]}}`,
		"no ctx":    `{"message":{"messageId":"r","role":"ROLE_AGENT","parts":[]}}`,
		"not json":  `<html>`,
		"deep":      strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
		"bad utf8":  "{\"message\":\xff}",
	} {
		if _, err := ParseReply([]byte(body)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	r, err := ParseReply([]byte(`{"message":{"messageId":"r","contextId":"c","role":"ROLE_AGENT","parts":[{"text":"x"}],"extra":{"a":1}},"unknown":true}`))
	if err != nil || r.Message.Parts[0].Text() != "x" {
		t.Fatalf("unknown fields must be ignored: %v", err)
	}
}

func TestRetryAfterParsing(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if d := parseRetryAfter("7", now); d != 7*time.Second {
		t.Fatal(d)
	}
	if d := parseRetryAfter(now.Add(90*time.Second).Format(http.TimeFormat), now); d != 90*time.Second {
		t.Fatal(d)
	}
	if d := parseRetryAfter("soon", now); d != 0 {
		t.Fatal(d)
	}
}

// §6, §4.3: an A2A error answer is final: INVALID_PARAMS, UNSUPPORTED_OPERATION,
// an error without ErrorInfo or a bare 400 gets one attempt and no wait;
// only no answer, 5xx and 429 are tried again.
func TestSection6_ErrorAnswerIsFinal(t *testing.T) {
	bare400 := func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(400) }
	for name, h := range map[string]http.HandlerFunc{
		"INVALID_PARAMS":        a2aError(400, ReasonInvalidParams, "Unknown contextId"),
		"UNSUPPORTED_OPERATION": a2aError(400, ReasonUnsupportedOperation, "closed"),
		"TASK_NOT_FOUND":        a2aError(404, ReasonTaskNotFound, "no task"),
		"bare 400":              bare400,
	} {
		t.Run(name, func(t *testing.T) {
			rec, _, waits, err := run(t, h, reply(okReply))
			if err == nil {
				t.Fatal("the error answer was retried into a success")
			}
			if len(rec.ids) != 1 || len(waits) != 0 {
				t.Fatalf("%d attempts, waits %v: want one attempt and no wait", len(rec.ids), waits)
			}
		})
	}
}

// Human error text is plain words: no protocol reasons, status codes or
// URLs (those are in Detail, for --json and --debug).
func TestErrorTextIsPlainWords(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	c := &Client{HTTP: httpx.NewClient(httpx.Options{Timeout: 2 * time.Second}), MaxAttempts: 1}
	_, netErr := c.Send(context.Background(), Request{
		InterfaceURL: deadURL + "/a2a/b1",
		Message:      a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi")),
		PAToken:      func(context.Context, string) (string, error) { return "tok", nil },
	})
	_, _, _, invalid := run(t, a2aError(400, ReasonInvalidParams, "Unknown contextId"))
	_, _, _, internal := run(t, a2aError(500, ReasonInternal, "boom"))
	_, _, _, unauth := run(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(401) })
	_, _, _, bad := run(t, reply(`{"message":{"messageId":"r","role":"ROLE_AGENT","parts":[{"text":"x"}]}}`))
	for _, err := range []error{netErr, invalid, internal, unauth, bad} {
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("err = %v", err)
		}
		msg := e.Error()
		for _, bad := range []string{"HTTP 4", "HTTP 5", "INVALID_PARAMS", "INTERNAL", "UNAUTHENTICATED", "INVALID_REPLY", "§", "http://", "Post ", "message id", "messageId"} {
			if strings.Contains(msg, bad) {
				t.Errorf("%q contains %q", msg, bad)
			}
		}
		if e.Detail() == "" || !strings.Contains(e.Detail(), e.Reason) {
			t.Errorf("detail %q lacks the reason %s", e.Detail(), e.Reason)
		}
	}
	if !strings.Contains(invalid.(*Error).Detail(), "INVALID_PARAMS (HTTP 400): Unknown contextId") {
		t.Errorf("detail = %q", invalid.(*Error).Detail())
	}
	if !strings.Contains(netErr.Error(), "could not reach the Provider") {
		t.Errorf("network error = %q", netErr)
	}
}
