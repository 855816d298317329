package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/pact-cli/pact/demoprovider"
)

// cutProxy stands in front of the demo Provider like resetProxy, but
// forwards event streams as they come, and cuts the first message:stream
// after `after` events (0: before any event reached the client, once the
// Provider has started the turn), as a broken connection would.
type cutProxy struct {
	srv    *httptest.Server
	target string
	after  int
	cuts   atomic.Int32
	mu     sync.Mutex
	paths  []string // every A2A operation seen
	ids    []string // messageId of every message:stream / message:send
}

func newCutProxy(t *testing.T, after int) *cutProxy {
	p := &cutProxy{after: after}
	p.cuts.Store(1)
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *cutProxy) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	last := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
	isStream := last == "message:stream"
	if isStream || last == "message:send" || strings.HasSuffix(last, ":subscribe") {
		var req struct {
			Message struct {
				MessageID string `json:"messageId"`
			} `json:"message"`
		}
		json.Unmarshal(body, &req)
		p.mu.Lock()
		p.paths = append(p.paths, last)
		p.ids = append(p.ids, req.Message.MessageID)
		p.mu.Unlock()
	}
	out, _ := http.NewRequestWithContext(r.Context(), r.Method, p.target+r.URL.RequestURI(), bytes.NewReader(body))
	out.Header = r.Header.Clone()
	resp, err := http.DefaultTransport.RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		if k != "Content-Length" {
			w.Header()[k] = v
		}
	}
	if resp.Header.Get("Content-Type") != "text/event-stream" {
		rb, _ := io.ReadAll(resp.Body)
		rb = bytes.ReplaceAll(rb, []byte(p.target), []byte(p.srv.URL))
		w.WriteHeader(resp.StatusCode)
		w.Write(rb)
		return
	}
	cut := isStream && p.cuts.Add(-1) >= 0
	w.WriteHeader(resp.StatusCode)
	br := bufio.NewReader(resp.Body)
	events := 0
	for {
		line, err := br.ReadString('\n')
		if cut && events == p.after && strings.HasPrefix(line, "data:") {
			// The Provider is streaming the turn it ran; the client's
			// connection breaks here.
			conn, buf, herr := w.(http.Hijacker).Hijack()
			if herr == nil {
				buf.Flush()
				conn.Close()
			}
			return
		}
		io.WriteString(w, line)
		if line == "\n" {
			events++
			w.(http.Flusher).Flush()
		}
		if err != nil {
			return
		}
	}
}

func (p *cutProxy) seen() ([]string, []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.paths...), append([]string(nil), p.ids...)
}

// streamLines splits `pact send --json-stream` output into its events and
// the final document.
func streamLines(t *testing.T, r result) (events []map[string]json.RawMessage, final sendOut) {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("pact send --json-stream: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	for _, l := range lines[:len(lines)-1] {
		var ev map[string]json.RawMessage
		if err := json.Unmarshal([]byte(l), &ev); err != nil || ev["event"] == nil {
			t.Fatalf("event line %q: %v", l, err)
		}
		events = append(events, ev)
	}
	return events, parseSend(t, result{stdout: lines[len(lines)-1]})
}

// Issue #23: the streaming Brand's reply is cut mid-stream; pact picks the
// task up with tasks/{id}:subscribe (fresh request, same conversation) and
// the agent acted once. Cut before the first event (no task id known),
// pact sends again with the same messageId, and the agent still acts once.
func TestStreamCutMidwayResumesAgentActsOnce(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		after   int
		again   string // the operation that picked the reply up
		resumed int    // events marked resumed (none when none had been shown)
	}{
		{"after two events", 2, ":subscribe", 1},
		{"before any event", 0, "message:stream", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			proxy := newCutProxy(t, c.after)
			d := newDemoEnv(t, demoprovider.Config{StreamWordDelay: 5e6}, func(s *demoprovider.Server) string {
				proxy.target = s.URL()
				return proxy.srv.URL
			})
			brandArg := proxy.srv.URL + "/a2a/" + d.brand.ID + "/.well-known/agent-card.json"
			events, final := streamLines(t, d.run("send", brandArg, "Where is my order A-88213?", "--json-stream"))
			if runs := d.prov.AgentRuns(); runs != 1 {
				t.Fatalf("the agent ran %d times, want 1", runs)
			}
			paths, ids := proxy.seen()
			if len(paths) != 2 || paths[0] != "message:stream" || !strings.HasSuffix(paths[1], c.again) {
				t.Fatalf("operations %q, want message:stream then %s", paths, c.again)
			}
			if paths[1] == "message:stream" && ids[1] != ids[0] {
				t.Fatalf("sent again under messageId %q, want %q", ids[1], ids[0])
			}
			if ids[0] != final.MessageID || len(events) < 3 {
				t.Fatalf("messageId %q (final %q), %d events", ids[0], final.MessageID, len(events))
			}
			resumed := 0
			for _, ev := range events {
				if string(ev["resumed"]) == "true" {
					resumed++
				}
			}
			if resumed != c.resumed {
				t.Errorf("%d events marked resumed, want %d", resumed, c.resumed)
			}
			// The turn is stored once, with the whole reply.
			r := d.must("conversations", "--json")
			if !strings.Contains(r.stdout, final.ContextID) {
				t.Errorf("conversation %s not stored: %s", final.ContextID, r.stdout)
			}
		})
	}
}

// The streaming Brand's reply is printed as it arrives (plain text, the
// whole reply once); the other Brand still answers by message:send.
func TestStreamSendPrintsTextAndOtherBrandUsesSend(t *testing.T) {
	t.Parallel()
	d := newDemoEnv(t, demoprovider.Config{StreamWordDelay: 1e6}, nil)
	r := d.must("send", d.brand.SiteURL, "Where is my order A-88213?")
	if strings.Count(r.stdout, "A-88213 (wireless headphones) has shipped") != 1 {
		t.Fatalf("stdout %q, want the reply once", r.stdout)
	}
	other := d.prov.Brands()[1]
	r = d.must("send", other.SiteURL, "hello", "--json-stream")
	if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); len(lines) != 1 || strings.Contains(r.stdout, `"streamed"`) {
		t.Fatalf("Other Shop: %q, want only the final document (no stream)", r.stdout)
	}
}
