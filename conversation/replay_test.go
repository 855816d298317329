package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pact-cli/pact/demoprovider"
	"github.com/pact-cli/pact/discovery"
	"github.com/pact-cli/pact/receipts"
)

// replaceKey sets every member named key in v (decoded JSON) to val.
func replaceKey(v any, key string, val any) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			if k == key {
				x[k] = val
			} else {
				replaceKey(c, key, val)
			}
		}
	case []any:
		for _, c := range x {
			replaceKey(c, key, val)
		}
	}
}

func findKey(v any, key string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			if k == key {
				return c
			}
			if f := findKey(c, key); f != nil {
				return f
			}
		}
	case []any:
		for _, c := range x {
			if f := findKey(c, key); f != nil {
				return f
			}
		}
	}
	return nil
}

// PACT §5.6: a receipt records one turn. A Brand that returns the receipt
// of its first reply on every later turn (two conversations) gets it
// verified once; on the other turns it is kept but flagged replayed, not
// verified for that turn, and the archive lists it as replayed. A resend of
// the same message (§4.3: the same messageId, the stored reply) is the same
// turn and stays verified.
func TestSection5_6_ReplayedReceiptIsNotVerifiedForAnotherTurn(t *testing.T) {
	e := newEnv(t, demoprovider.Config{})
	target, _ := url.Parse(e.srv.URL())
	var mu sync.Mutex
	var first any
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, _ := http.NewRequest(r.Method, target.String()+r.URL.RequestURI(), r.Body)
		req.Header = r.Header.Clone()
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			w.WriteHeader(502)
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if strings.HasSuffix(r.URL.Path, "message:send") {
			var doc any
			if json.Unmarshal(body, &doc) == nil {
				mu.Lock()
				if rc := findKey(doc, receipts.MetadataKey); rc != nil {
					if first == nil {
						first = rc
					} else {
						replaceKey(doc, receipts.MetadataKey, first)
						body, _ = json.Marshal(doc)
					}
				}
				mu.Unlock()
			}
		}
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(resp.StatusCode)
		w.Write(body)
	}))
	defer proxy.Close()
	s := e.open(e.brands[0].SiteURL)
	jar, _ := cookiejar.New(nil)
	e.login(s, jar, "orders:read")
	s.opts.Client.HTTP = &http.Client{Transport: rewrite{from: e.srv.URL(), to: proxy.URL}, Timeout: 5 * time.Second}

	id := NewMessageID()
	r1, err := s.SendID(context.Background(), "show my orders", id)
	if err != nil || r1.Receipt == nil || !r1.Receipt.Verified || r1.Receipt.Replayed {
		t.Fatalf("first turn: %+v %v", r1, err)
	}
	again, err := s.SendID(context.Background(), "show my orders", id) // the same turn, sent again
	if err != nil || again.Receipt == nil || !again.Receipt.Verified || again.Receipt.Replayed {
		t.Fatalf("the same message sent again: %+v %v", again.Receipt, err)
	}
	r2 := e.send(s, "show my orders please")
	s.StartNew()
	r3 := e.send(s, "and my orders")
	for i, r := range []*Result{r2, r3} {
		if r.Receipt == nil || r.Receipt.ID != r1.Receipt.ID {
			t.Fatalf("turn %d: the proxy did not replay the receipt: %+v", i+2, r.Receipt)
		}
		if r.Receipt.Verified || !r.Receipt.Replayed || !strings.Contains(strings.Join(r.Receipt.Problems, "; "), "replayed") {
			t.Fatalf("turn %d: a replayed receipt was taken for this turn: %+v", i+2, r.Receipt)
		}
	}
	items, _ := e.opts.Receipts.List("")
	if len(items) != 1 || !items[0].Replayed || !strings.Contains(strings.Join(items[0].Notes, "; "), "2 other turns") {
		t.Fatalf("archive = %+v", items)
	}
	turns, _ := e.opts.Store.Turns(s.Card.InterfaceURL, r3.ContextID)
	if last := turns[len(turns)-1]; last.ReceiptVerified == nil || *last.ReceiptVerified {
		t.Fatalf("the turn that carried the replayed receipt is stored as verified: %+v", last)
	}
}

// One card state (issue 20): a session opened before (the chat) stops
// before its next send once another command has seen a changed card of its
// Brand; nothing reaches the Brand.
func TestSessionStopsOnceAChangedCardWasSeen(t *testing.T) {
	e := newEnv(t, demoprovider.Config{})
	s := e.open(e.brands[0].SiteURL)
	e.send(s, "hello")
	runs := e.srv.AgentRuns()
	pin, _, _ := e.opts.DB.Pin(context.Background(), s.Card.URL)
	pin.KeyThumbprint = "another-key"
	if err := e.opts.DB.NoteCardChange(context.Background(), s.Card.URL, pin, []string{"signed by another key"}); err != nil {
		t.Fatal(err)
	}
	_, err := s.Send(context.Background(), "hello again")
	var ce *discovery.CardChangedError
	if !errors.As(err, &ce) || ce.New.KeyThumbprint != "another-key" {
		t.Fatalf("send after a change was seen: %v", err)
	}
	if n := e.srv.AgentRuns(); n != runs {
		t.Fatalf("the Brand's agent ran %d times", n-runs)
	}
}
