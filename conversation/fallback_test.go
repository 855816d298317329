package conversation

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/pact-cli/pact/a2aclient"
	"github.com/pact-cli/pact/demoprovider"
)

// PACT §4.3: a Provider whose card declares streaming but that cannot
// stream (UNSUPPORTED_OPERATION, no such route, a 200 that is not an event
// stream) gets the message once by message:send under the messageId the
// stream request carried, never a new one: the Brand can tell it is the
// same message, and the turn on record is the one it answered.
func TestSection4_3_StreamFallbackKeepsTheMessageID(t *testing.T) {
	refusals := map[string]func(r *http.Request) *http.Response{
		"UNSUPPORTED_OPERATION": func(r *http.Request) *http.Response {
			return canned(r, 400, "application/json", `{"error":{"code":400,"status":"FAILED_PRECONDITION","message":"no","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"UNSUPPORTED_OPERATION"}]}}`)
		},
		"no such route": func(r *http.Request) *http.Response { return canned(r, 404, "text/plain", "404 page not found") },
		"not an event stream": func(r *http.Request) *http.Response {
			return canned(r, 200, "text/html", "<html><body>streaming is coming soon</body></html>")
		},
	}
	for name, refuse := range refusals {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, demoprovider.Config{StreamWordDelay: -1})
			rec := &idRecorder{next: http.DefaultTransport, refuse: refuse}
			e.hc.Transport = rec
			s := e.open(e.brands[0].SiteURL)
			if !s.Streams() {
				t.Fatal("Example Co. should stream")
			}
			id := NewMessageID()
			r, err := s.SendStream(context.Background(), "hello", id, func(a2aclient.StreamEvent) {})
			if err != nil || r.Streamed {
				t.Fatalf("streamed %v, err %v; want an answer by message:send", r != nil && r.Streamed, err)
			}
			ops := rec.list()
			if len(ops) != 2 || ops[0].op != "message:stream" || ops[1].op != "message:send" {
				t.Fatalf("requests %+v, want message:stream then message:send", ops)
			}
			for _, o := range ops {
				if o.messageID != id {
					t.Errorf("%s carried messageId %q, want %q (the one the stream carried)", o.op, o.messageID, id)
				}
			}
			if n := e.srv.AgentRuns(); n != 1 {
				t.Errorf("the Brand's agent ran %d times, want once", n)
			}
			turns, err := s.History()
			if err != nil || len(turns) != 2 || turns[0].MessageID != id {
				t.Fatalf("on record: %+v (%v), want the sent turn under %q and its answer", turns, err, id)
			}
		})
	}
}

// idRecorder answers message:stream with refuse and passes everything
// else on, recording the operation and messageId of every A2A message.
type idRecorder struct {
	next   http.RoundTripper
	refuse func(*http.Request) *http.Response

	mu  sync.Mutex
	ops []sentOp
}

type sentOp struct{ op, messageID string }

func (c *idRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	op := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
	if op != "message:stream" && op != "message:send" {
		return c.next.RoundTrip(r)
	}
	body, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		return nil, err
	}
	var req struct {
		Message struct {
			MessageID string `json:"messageId"`
		} `json:"message"`
	}
	json.Unmarshal(body, &req)
	c.mu.Lock()
	c.ops = append(c.ops, sentOp{op, req.Message.MessageID})
	c.mu.Unlock()
	if op == "message:stream" {
		return c.refuse(r), nil
	}
	r = r.Clone(r.Context())
	r.Body = io.NopCloser(bytes.NewReader(body))
	return c.next.RoundTrip(r)
}

func (c *idRecorder) list() []sentOp {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]sentOp(nil), c.ops...)
}

func canned(r *http.Request, status int, contentType, body string) *http.Response {
	return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {contentType}}, Body: io.NopCloser(strings.NewReader(body)), Request: r}
}
