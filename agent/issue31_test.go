package agent

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pact-cli/pact/conversation"
)

// lossyProvider lets the Provider run the message:send it is given, loses
// the answer, and answers the next one (the same message sent again)
// UNSUPPORTED_OPERATION: the conversation is closed. Other requests pass.
type lossyProvider struct {
	inner http.RoundTripper
	mu    sync.Mutex
	armed bool
	sends []string // messageId and contextId of every message:send
}

func (l *lossyProvider) RoundTrip(r *http.Request) (*http.Response, error) {
	if !strings.HasSuffix(r.URL.Path, "/message:send") {
		return l.inner.RoundTrip(r)
	}
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(strings.NewReader(string(body)))
	l.mu.Lock()
	l.sends = append(l.sends, string(body))
	n, armed := len(l.sends), l.armed
	l.mu.Unlock()
	switch {
	case armed && n == 2:
		resp, err := l.inner.RoundTrip(r)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return nil, errors.New("connection reset by peer")
	case armed && n >= 3:
		b := `{"error":{"code":400,"status":"FAILED_PRECONDITION","message":"This conversation is closed","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"UNSUPPORTED_OPERATION","domain":"a2a-protocol.org"}]}}`
		return &http.Response{StatusCode: 400, Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(b)), Request: r}, nil
	}
	return l.inner.RoundTrip(r)
}

// Issue 31 item 1, in the core every front-end calls: the Brand processed
// the message, its answer was lost, and the same message sent again was
// answered "conversation closed". Restart is never asked (no front-end can
// send the text again as a new message); the turn ends with the
// *conversation.OutcomeUnknownError, and nothing more is sent.
func TestIssue31_1_AClosedConversationAfterAnUnknownOutcomeIsNeverRestarted(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	opts, brand := demo(t)
	lossy := &lossyProvider{inner: opts.Client.HTTP.Transport}
	if lossy.inner == nil {
		lossy.inner = http.DefaultTransport
	}
	hc := *opts.Client.HTTP
	hc.Transport = lossy
	opts.Client.HTTP = &hc
	opts.Client.Sleep = func(context.Context, time.Duration) error { return nil }
	s, err := Open(ctx, opts, brand.SiteURL, Start{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Send(ctx, s, "hello", Front{}); err != nil {
		t.Fatal(err)
	}
	lossy.mu.Lock()
	lossy.armed = true
	lossy.mu.Unlock()
	asked := false
	_, err = Send(ctx, s, "please cancel order A-10001", Front{Restart: func(*conversation.ClosedError) bool { asked = true; return true }})
	var unknown *conversation.OutcomeUnknownError
	if !errors.As(err, &unknown) || !unknown.Closed {
		t.Fatalf("err = %v, want the *conversation.OutcomeUnknownError of a closed conversation", err)
	}
	if asked {
		t.Error("Restart was asked: a front-end would send the message again as a new message")
	}
	lossy.mu.Lock()
	defer lossy.mu.Unlock()
	if len(lossy.sends) != 3 {
		t.Fatalf("%d message:send requests, want 3 (hello, the message, the same message again)", len(lossy.sends))
	}
}

// Issue 31 item 8: the same text sent again while its earlier message is on
// record as sent and unanswered goes under that message's messageId (Again
// is told), so the Brand's agent answers it once.
func TestIssue31_8_TheSameTextAsksAgainUnderItsMessageID(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	opts, brand := demo(t)
	s, err := Open(ctx, opts, brand.SiteURL, Start{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Send(ctx, s, "hello", Front{}); err != nil {
		t.Fatal(err)
	}
	// A message whose answer never came (the User left while waiting).
	gone, stop := context.WithCancel(ctx)
	stop()
	if _, err := Send(gone, s, "Where is my order A-88213?", Front{}); err == nil {
		t.Fatal("sent with a cancelled context")
	}
	un, err := s.Unanswered()
	if err != nil || len(un) != 1 {
		t.Fatalf("unanswered = %+v, %v", un, err)
	}
	var told *conversation.Turn
	res, err := Send(ctx, s, "Where is my order A-88213?", Front{Again: func(t *conversation.Turn) { told = t }})
	if err != nil {
		t.Fatal(err)
	}
	if res.MessageID != un[0].MessageID || told == nil || told.MessageID != un[0].MessageID {
		t.Fatalf("sent as %q (told %+v), want the unanswered message's id %q", res.MessageID, told, un[0].MessageID)
	}
	res2, err := Send(ctx, s, "Where is my order A-88213?", Front{Again: func(*conversation.Turn) { t.Error("Again told for an answered message") }})
	if err != nil || res2.MessageID == res.MessageID {
		t.Fatalf("the same text once answered: %v, id %q", err, res2.MessageID)
	}
}
