package conversation

import (
	"context"
	"errors"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pact-cli/pact/a2aclient"
	"github.com/pact-cli/pact/demoprovider"
)

// The streaming Brand's reply arrives in events whose text grows, and the
// Result is the final message: stored, with its receipt verified as for
// message:send (§5.6). The other Brand, whose card does not declare
// streaming, is sent by message:send even when the caller asks for a
// stream.
func TestStreamedReplyAndReceipt(t *testing.T) {
	e := newEnv(t, demoprovider.Config{StreamWordDelay: -1})
	s := e.open(e.brands[0].SiteURL)
	if !s.Streams() {
		t.Fatal("Example Co. should stream")
	}
	jar, _ := cookiejar.New(nil)
	e.login(s, jar, "orders:read")
	var texts []string
	r, err := s.SendStream(context.Background(), "show my orders", NewMessageID(), func(ev a2aclient.StreamEvent) { texts = append(texts, ev.Text) })
	if err != nil {
		t.Fatal(err)
	}
	if !r.Streamed || len(texts) < 3 || texts[len(texts)-1] != r.Text() || !strings.HasPrefix(r.Text(), texts[2]) {
		t.Fatalf("streamed %v, texts %q, final %q", r.Streamed, texts, r.Text())
	}
	if r.Receipt == nil || !r.Receipt.Verified {
		t.Fatalf("receipt = %+v", r.Receipt)
	}
	turns, _ := s.History()
	if len(turns) != 2 || turns[1].Text != r.Text() || turns[1].ReceiptID == "" {
		t.Fatalf("stored turns = %+v", turns)
	}

	o := e.open(e.brands[1].SiteURL)
	if o.Streams() {
		t.Fatal("Other Shop should not stream")
	}
	called := false
	r, err = o.SendStream(context.Background(), "hello", NewMessageID(), func(a2aclient.StreamEvent) { called = true })
	if err != nil || r.Streamed || called || r.Text() == "" {
		t.Fatalf("other brand: streamed %v, events %v, err %v", r != nil && r.Streamed, called, err)
	}
}

// A Provider that declares streaming but answers message:stream with
// UNSUPPORTED_OPERATION gets the message once by message:send, same
// messageId, and pact remembers it for that card: the next message goes
// by message:send at once.
func TestStreamRefusedFallsBackToSendAndIsRemembered(t *testing.T) {
	e := newEnv(t, demoprovider.Config{StreamWordDelay: -1})
	var mu countingStreams
	e.hc.Transport = &mu
	mu.next = http.DefaultTransport
	s := e.open(e.brands[0].SiteURL)
	if !s.Streams() {
		t.Fatal("Example Co. should stream")
	}
	r, err := s.SendStream(context.Background(), "hello", NewMessageID(), func(a2aclient.StreamEvent) {})
	if err != nil || r.Streamed {
		t.Fatalf("first: streamed %v err %v", r != nil && r.Streamed, err)
	}
	if mu.streams != 1 || mu.sends != 1 {
		t.Fatalf("first: %d streams %d sends, want 1 and 1", mu.streams, mu.sends)
	}
	s2 := e.open(e.brands[0].SiteURL)
	if s2.Streams() {
		t.Fatal("the refusal was not remembered for the card")
	}
	if _, err := s2.SendStream(context.Background(), "again", NewMessageID(), func(a2aclient.StreamEvent) {}); err != nil {
		t.Fatal(err)
	}
	if mu.streams != 1 || mu.sends != 2 {
		t.Fatalf("second: %d streams %d sends, want no new stream", mu.streams, mu.sends)
	}
}

// countingStreams answers every message:stream with UNSUPPORTED_OPERATION
// (a Provider whose card declares more than it does) and counts requests.
type countingStreams struct {
	next           http.RoundTripper
	streams, sends int
}

func (c *countingStreams) RoundTrip(r *http.Request) (*http.Response, error) {
	switch {
	case strings.HasSuffix(r.URL.Path, "/message:stream"):
		c.streams++
		body := `{"error":{"code":400,"status":"FAILED_PRECONDITION","message":"no","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"UNSUPPORTED_OPERATION"}]}}`
		return &http.Response{StatusCode: 400, Header: http.Header{"Content-Type": {"application/json"}}, Body: nopCloser{strings.NewReader(body)}, Request: r}, nil
	case strings.HasSuffix(r.URL.Path, "/message:send"):
		c.sends++
	}
	return c.next.RoundTrip(r)
}

type nopCloser struct{ *strings.Reader }

func (nopCloser) Close() error { return nil }

// The extended card shows what this User may use: before login the skills
// open to the personal agent, after login those of the granted scopes too;
// it is signed by the Brand like the public card.
func TestExtendedCardMoreSkillsAfterLogin(t *testing.T) {
	e := newEnv(t, demoprovider.Config{})
	s := e.open(e.brands[0].SiteURL)
	ids := func() []string {
		t.Helper()
		c, err := s.ExtendedCard(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !c.Signature.Verified {
			t.Fatalf("extended card signature %+v", c.Signature)
		}
		var out []string
		for _, sk := range c.Skills() {
			out = append(out, sk.ID)
		}
		return out
	}
	if got := strings.Join(ids(), ","); got != "orders" {
		t.Errorf("before login: %s", got)
	}
	jar, _ := cookiejar.New(nil)
	e.login(s, jar, "orders:read", "orders:cancel")
	if got := strings.Join(ids(), ","); got != "orders,order-status,cancel-order" {
		t.Errorf("after login: %s", got)
	}
	o := e.open(e.brands[1].SiteURL)
	if _, err := o.ExtendedCard(context.Background()); !errors.Is(err, ErrNoExtendedCard) {
		t.Errorf("Other Shop: err = %v, want ErrNoExtendedCard", err)
	}
}

// A step-up inside a stream (a task in TASK_STATE_AUTH_REQUIRED) ends the
// stream and is the Result's step-up, as with message:send (§5.5).
func TestStreamedStepUp(t *testing.T) {
	e := newEnv(t, demoprovider.Config{StreamWordDelay: -1})
	s := e.open(e.brands[0].SiteURL)
	jar, _ := cookiejar.New(nil)
	e.login(s, jar, "orders:read")
	events := 0
	r, err := s.SendStream(context.Background(), "please cancel order A-10001", NewMessageID(), func(a2aclient.StreamEvent) { events++ })
	if err != nil {
		t.Fatal(err)
	}
	su := r.StepUp()
	if !r.Streamed || events != 1 || su == nil || strings.Join(su.MissingScopes, ",") != "orders:cancel" {
		t.Fatalf("streamed %v, %d events, step-up %+v", r.Streamed, events, su)
	}
}

// Issue 31, review: a Brand that streams is not remembered as one that does
// not because a stream of it broke and its resume was refused. Its stream
// began (an event naming the task), broke, and tasks/{id}:subscribe was
// answered with the task as JSON (NOT_A_STREAM) or UNSUPPORTED_OPERATION:
// the message goes by message:send, same messageId, for its answer, and
// the next message is streamed again. Only a Provider that refused
// message:stream itself is remembered
// (TestStreamRefusedFallsBackToSendAndIsRemembered).
func TestIssue31_ABrokenStreamWhoseResumeWasRefusedIsStillStreamed(t *testing.T) {
	refusals := map[string]func(r *http.Request) *http.Response{
		"the task as JSON": func(r *http.Request) *http.Response {
			return canned(r, 200, "application/json", `{"task":{"id":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_WORKING"}}}`)
		},
		"UNSUPPORTED_OPERATION": func(r *http.Request) *http.Response {
			return canned(r, 400, "application/json", `{"error":{"code":400,"status":"FAILED_PRECONDITION","message":"no","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"UNSUPPORTED_OPERATION"}]}}`)
		},
	}
	for name, refuse := range refusals {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, demoprovider.Config{StreamWordDelay: -1})
			tr := &brokenStreams{next: http.DefaultTransport, subscribe: refuse}
			e.hc.Transport = tr
			s := e.open(e.brands[0].SiteURL)
			events := 0
			r, err := s.SendStream(context.Background(), "hello", NewMessageID(), func(a2aclient.StreamEvent) { events++ })
			if err != nil || r.Text() == "" {
				t.Fatalf("the message after its stream broke: %v", err)
			}
			if events == 0 || tr.subscribes.Load() == 0 || tr.sends.Load() != 1 {
				t.Fatalf("%d events, %d subscribes, %d sends: the stream did not begin, break and fall back as meant", events, tr.subscribes.Load(), tr.sends.Load())
			}
			if !e.open(e.brands[0].SiteURL).Streams() {
				t.Fatal("the Brand whose stream broke is remembered as one that does not stream")
			}
		})
	}
}

// brokenStreams answers message:stream with a stream that names a task and
// breaks, tasks/{id}:subscribe with subscribe, and passes the rest on.
type brokenStreams struct {
	next              http.RoundTripper
	subscribe         func(*http.Request) *http.Response
	subscribes, sends atomic.Int32
}

func (b *brokenStreams) RoundTrip(r *http.Request) (*http.Response, error) {
	switch {
	case strings.HasSuffix(r.URL.Path, "/message:stream"):
		return canned(r, 200, "text/event-stream", "data: {\"task\":{\"id\":\"t-1\",\"contextId\":\"c-1\",\"status\":{\"state\":\"TASK_STATE_WORKING\"}}}\n\n"), nil
	case strings.HasSuffix(r.URL.Path, ":subscribe"):
		b.subscribes.Add(1)
		return b.subscribe(r), nil
	case strings.HasSuffix(r.URL.Path, "/message:send"):
		b.sends.Add(1)
	}
	return b.next.RoundTrip(r)
}
