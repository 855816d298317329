package a2aclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pact-cli/pact/httpx"
)

// streamRec records each request (path, messageId, PA JWT, delegation
// header) and answers it with the next handler; the last repeats.
type streamRec struct {
	mu       sync.Mutex
	paths    []string
	ids      []string
	tokens   []string
	dels     []string
	accepts  []string
	handlers []http.HandlerFunc
}

func (rec *streamRec) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body a2a.SendMessageRequest
	json.NewDecoder(r.Body).Decode(&body)
	rec.mu.Lock()
	id := ""
	if body.Message != nil {
		id = body.Message.ID
	}
	rec.paths = append(rec.paths, r.URL.Path)
	rec.ids = append(rec.ids, id)
	rec.tokens = append(rec.tokens, r.Header.Get("Authorization"))
	rec.dels = append(rec.dels, r.Header.Get("X-A2A-User-Delegation"))
	rec.accepts = append(rec.accepts, r.Header.Get("Accept"))
	n := len(rec.paths)
	rec.mu.Unlock()
	h := rec.handlers[len(rec.handlers)-1]
	if n <= len(rec.handlers) {
		h = rec.handlers[n-1]
	}
	h(w, r)
}

const (
	evTask  = `{"task":{"id":"t-1","contextId":"ctx-1","status":{"state":"TASK_STATE_WORKING"}}}`
	evChunk = `{"artifactUpdate":{"taskId":"t-1","contextId":"ctx-1","append":true,"artifact":{"artifactId":"a-1","parts":[{"text":"%s"}]}}}`
	evDone  = `{"statusUpdate":{"taskId":"t-1","contextId":"ctx-1","status":{"state":"TASK_STATE_COMPLETED","message":{"messageId":"r-1","role":"ROLE_AGENT","parts":[{"text":"Hello big world"}],"metadata":{"pact.receipt":{"jws":"a.b.c"}}}}}}`
)

// sse writes events, flushing each; cut > 0 closes the connection after
// that many events without ending the stream.
func sse(cut int, events ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		for i, e := range events {
			if cut > 0 && i == cut {
				conn, buf, _ := w.(http.Hijacker).Hijack()
				buf.Flush()
				conn.Close()
				return
			}
			fmt.Fprintf(w, "data: %s\n\n", e)
			w.(http.Flusher).Flush()
		}
	}
}

func runStream(t *testing.T, c *Client, handlers ...http.HandlerFunc) (*streamRec, *Response, []StreamEvent, error) {
	t.Helper()
	rec := &streamRec{handlers: handlers}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	if c == nil {
		c = &Client{}
	}
	c.HTTP = httpx.NewClient(httpx.Options{Timeout: 2 * time.Second})
	c.Sleep = func(ctx context.Context, d time.Duration) error { return nil }
	n := 0
	var evs []StreamEvent
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi"))
	resp, err := c.Stream(context.Background(), Request{
		InterfaceURL: srv.URL + "/a2a/b1",
		Message:      msg,
		PAToken:      func(context.Context, string) (string, error) { n++; return fmt.Sprintf("tok-%d", n), nil },
		Delegation:   func(context.Context) (string, error) { return "del", nil },
	}, func(e StreamEvent) { evs = append(evs, e) })
	return rec, resp, evs, err
}

func TestStreamShowsTheReplyAsItArrivesAndEndsWithTheFinalMessage(t *testing.T) {
	rec, resp, evs, err := runStream(t, nil, sse(0, evTask, fmt.Sprintf(evChunk, "Hello "), fmt.Sprintf(evChunk, "big "), fmt.Sprintf(evChunk, "world"), evDone))
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{}
	for _, e := range evs {
		texts = append(texts, e.Text)
	}
	if got := strings.Join(texts, "|"); got != "|Hello |Hello big |Hello big world|Hello big world" {
		t.Errorf("texts as they came = %q", got)
	}
	if resp.Message == nil || resp.Message.ContextID != "ctx-1" || resp.Message.Metadata["pact.receipt"] == nil {
		t.Fatalf("final = %+v, want the completed status message with its receipt and the task's contextId", resp)
	}
	if !strings.HasPrefix(string(resp.Raw), `{"message":`) {
		t.Errorf("Raw = %s, want a message:send-shaped reply", resp.Raw)
	}
	if rec.paths[0] != "/a2a/b1/message:stream" || rec.accepts[0] != "text/event-stream" || rec.dels[0] != "Bearer del" {
		t.Errorf("request = %s accept %q delegation %q", rec.paths[0], rec.accepts[0], rec.dels[0])
	}
}

func TestStreamBrokenAfterTheTaskResumesWithSubscribe(t *testing.T) {
	subscribe := sse(0, `{"task":{"id":"t-1","contextId":"ctx-1","status":{"state":"TASK_STATE_WORKING"},"artifacts":[{"artifactId":"a-1","parts":[{"text":"Hello big "}]}]}}`,
		fmt.Sprintf(evChunk, "world"), evDone)
	rec, resp, evs, err := runStream(t, nil, sse(2, evTask, fmt.Sprintf(evChunk, "Hello "), "never"), subscribe)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.paths) != 2 || rec.paths[1] != "/a2a/b1/tasks/t-1:subscribe" {
		t.Fatalf("paths = %v, want message:stream then tasks/t-1:subscribe", rec.paths)
	}
	if rec.tokens[0] == rec.tokens[1] || rec.dels[1] != "Bearer del" {
		t.Errorf("subscribe reused the PA JWT (%v) or lost the delegation token (%q)", rec.tokens, rec.dels[1])
	}
	if resp.Attempts != 2 || resp.Message == nil || resp.Message.Parts[0].Text() != "Hello big world" {
		t.Fatalf("resp = %+v", resp)
	}
	if !evs[2].Resumed || evs[2].Text != "Hello big " {
		t.Errorf("first event after the resume = %+v", evs[2])
	}
}

func TestStreamBrokenBeforeATaskSendsAgainWithTheSameMessageID(t *testing.T) {
	rec, resp, _, err := runStream(t, nil, func(w http.ResponseWriter, r *http.Request) {
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
	}, sse(0, okMessageEvent))
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.ids) != 2 || rec.ids[0] != rec.ids[1] || rec.paths[1] != "/a2a/b1/message:stream" || rec.tokens[0] == rec.tokens[1] {
		t.Fatalf("requests = %v %v %v, want message:stream twice with one messageId and fresh tokens", rec.paths, rec.ids, rec.tokens)
	}
	if resp.Message == nil || resp.Message.ID != "r-1" {
		t.Fatalf("resp = %+v", resp)
	}
}

const okMessageEvent = `{"message":{"messageId":"r-1","contextId":"ctx-1","role":"ROLE_AGENT","parts":[{"text":"hello"}]}}`

func TestStreamSubscribeRefusedSendsAgain(t *testing.T) {
	rec, resp, _, err := runStream(t, nil, sse(1, evTask, "x"), a2aError(400, ReasonUnsupportedOperation, "task is done"), sse(0, okMessageEvent))
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.paths) != 3 || rec.paths[1] != "/a2a/b1/tasks/t-1:subscribe" || rec.paths[2] != "/a2a/b1/message:stream" || rec.ids[2] != rec.ids[0] {
		t.Fatalf("requests = %v %v", rec.paths, rec.ids)
	}
	if resp.Message == nil {
		t.Fatalf("resp = %+v", resp)
	}
}

func TestStreamThatCannotStream(t *testing.T) {
	for name, h := range map[string]http.HandlerFunc{
		ReasonUnsupportedOperation: a2aError(400, ReasonUnsupportedOperation, "no streaming"),
		ReasonNotStream:            reply(okReply),
		ReasonNotFound:             func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(404) },
	} {
		rec, _, _, err := runStream(t, nil, h)
		if !IsReason(err, name) || !CannotStream(err) {
			t.Errorf("%s: err = %v, want that reason and CannotStream", name, err)
		}
		if len(rec.paths) != 1 {
			t.Errorf("%s: %d requests, want 1 (not retried)", name, len(rec.paths))
		}
	}
}

func TestStreamLimitsAndStall(t *testing.T) {
	big := fmt.Sprintf(evChunk, strings.Repeat("a", 200))
	_, _, _, err := runStream(t, &Client{MaxStreamEvent: 100}, sse(0, evTask, big))
	if !IsReason(err, ReasonTooLarge) || !strings.Contains(err.Error(), "100 bytes") {
		t.Errorf("big event: err = %v, want STREAM_TOO_LARGE naming 100 bytes", err)
	}
	_, _, _, err = runStream(t, &Client{MaxStreamSize: 300}, sse(0, evTask, fmt.Sprintf(evChunk, "a"), fmt.Sprintf(evChunk, "b"), fmt.Sprintf(evChunk, "c")))
	if !IsReason(err, ReasonTooLarge) || !strings.Contains(err.Error(), "stream is larger than 300 bytes") {
		t.Errorf("big stream: err = %v", err)
	}
	release := make(chan struct{})
	defer close(release)
	stall := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\n\n", evTask)
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}
	rec, _, _, err := runStream(t, &Client{StreamStall: 50 * time.Millisecond, MaxAttempts: 2}, stall)
	if !IsReason(err, ReasonStalled) || !strings.Contains(err.Error(), "stopped arriving") {
		t.Errorf("stall: err = %v, want STREAM_STALLED", err)
	}
	if len(rec.paths) != 2 || rec.paths[1] != "/a2a/b1/tasks/t-1:subscribe" {
		t.Errorf("stall: requests = %v, want a subscribe after the stall", rec.paths)
	}
}

func TestStreamErrorEventAndStepUp(t *testing.T) {
	_, _, _, err := runStream(t, nil, sse(0, evTask, `{"error":{"code":500,"status":"INTERNAL","message":"agent crashed","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"INTERNAL"}]}}`))
	if !IsReason(err, ReasonInternal) {
		t.Errorf("error event: err = %v, want INTERNAL", err)
	}
	_, resp, _, err := runStream(t, nil, sse(0, `{"task":{"id":"t-2","contextId":"ctx-1","status":{"state":"TASK_STATE_AUTH_REQUIRED"},"metadata":{"pact.missingScopes":["orders:write"]}}}`))
	if err != nil || resp.Task == nil || resp.Task.Status.State != a2a.TaskStateAuthRequired {
		t.Fatalf("step-up: resp = %+v err = %v, want the auth-required task", resp, err)
	}
}
