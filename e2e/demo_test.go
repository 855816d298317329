package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pact-cli/pact/demoprovider"
)

// demoEnv is a profile registered with a real demo Provider, its keys
// served by an in-test JWKS endpoint (what `pact jwks serve` would do).
type demoEnv struct {
	*env
	prov  *demoprovider.Server
	brand demoprovider.Brand
}

// newDemoEnv starts the JWKS endpoint and the demo Provider, runs `pact
// init` with the endpoint as issuer and registers the Provider (at
// providerURL, "" = the Provider's own URL).
func newDemoEnv(t *testing.T, cfg demoprovider.Config, providerURL func(*demoprovider.Server) string) *demoEnv {
	t.Helper()
	var jwks atomic.Value
	jwks.Store([]byte(`{"keys":[]}`))
	var issuer string
	js := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/jwks.json":
			w.Write(jwks.Load().([]byte))
		case "/.well-known/openid-configuration":
			json.NewEncoder(w).Encode(map[string]string{"issuer": issuer, "jwks_uri": issuer + "/.well-known/jwks.json"})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(js.Close)
	issuer = js.URL
	e := newEnv(t, issuer)
	jwks.Store([]byte(e.must("jwks").stdout))
	prov := startDemo(t, cfg)
	url := prov.URL()
	if providerURL != nil {
		url = providerURL(prov)
	}
	e.must("provider", "add", url, "--audience", prov.Audience(), "--json")
	return &demoEnv{env: e, prov: prov, brand: prov.Brands()[0]}
}

// sendOut is the part of `pact send --json` the tests read.
type sendOut struct {
	Brand        string `json:"brand"`
	InterfaceURL string `json:"interfaceUrl"`
	ContextID    string `json:"contextId"`
	MessageID    string `json:"messageId"`
	Reply        struct {
		Message *struct {
			MessageID string `json:"messageId"`
			ContextID string `json:"contextId"`
		} `json:"message"`
	} `json:"reply"`
}

func parseSend(t *testing.T, r result) sendOut {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("pact send: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	var o sendOut
	if err := json.Unmarshal([]byte(r.stdout), &o); err != nil || o.ContextID == "" || o.MessageID == "" || o.Reply.Message == nil {
		t.Fatalf("pact send --json output %q: %v", r.stdout, err)
	}
	return o
}

// resetProxy stands in front of the demo Provider: it forwards every
// request, rewriting the Provider's URL to its own in bodies (so the card's
// interface URL points here), and for the first `drops` message:send it lets
// the Provider process the request fully, then drops the connection without
// answering, as a network failure after processing would.
type resetProxy struct {
	srv      *httptest.Server
	target   string
	drops    atomic.Int32
	mu       sync.Mutex
	sendIDs  []string // messageId of every message:send seen
	contexts []string // contextId of every message:send seen
}

func newResetProxy(t *testing.T, drops int32) *resetProxy {
	p := &resetProxy{}
	p.drops.Store(drops)
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *resetProxy) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	isSend := strings.HasSuffix(r.URL.Path, "/message:send")
	if isSend {
		var req struct {
			Message struct {
				MessageID string `json:"messageId"`
				ContextID string `json:"contextId"`
			} `json:"message"`
		}
		json.Unmarshal(body, &req)
		p.mu.Lock()
		p.sendIDs = append(p.sendIDs, req.Message.MessageID)
		p.contexts = append(p.contexts, req.Message.ContextID)
		p.mu.Unlock()
	}
	out, err := http.NewRequestWithContext(r.Context(), r.Method, p.target+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	out.Header = r.Header.Clone()
	resp, err := http.DefaultTransport.RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	rb, _ := io.ReadAll(resp.Body)
	if isSend && p.drops.Add(-1) >= 0 {
		// The Provider has run the turn and stored its reply; the client
		// never hears of it.
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
		return
	}
	rb = bytes.ReplaceAll(rb, []byte(p.target), []byte(p.srv.URL))
	for k, v := range resp.Header {
		if k != "Content-Length" {
			w.Header()[k] = v
		}
	}
	w.WriteHeader(resp.StatusCode)
	w.Write(rb)
}

// §4.3: a connection reset after the Provider processed a message is
// retried with the same messageId and the agent runs once — both for a
// first message (no contextId; the demo Provider dedupes those per
// (iss, sub, Brand), beyond §4.3) and for a continuing one.
func TestSection4_3_ResetAfterProcessingRetriesSameMessageIDAgentRunsOnce(t *testing.T) {
	t.Parallel()
	proxy := newResetProxy(t, 1)
	d := newDemoEnv(t, demoprovider.Config{}, func(s *demoprovider.Server) string {
		proxy.target = s.URL()
		return proxy.srv.URL
	})
	brandArg := proxy.srv.URL + "/a2a/" + d.brand.ID + "/.well-known/agent-card.json"

	first := parseSend(t, d.run("send", brandArg, "status of A-88213?", "--json"))
	if runs := d.prov.AgentRuns(); runs != 1 {
		t.Fatalf("first message: agent ran %d times, want 1", runs)
	}
	proxy.mu.Lock()
	ids, ctxs := append([]string(nil), proxy.sendIDs...), append([]string(nil), proxy.contexts...)
	proxy.mu.Unlock()
	if len(ids) != 2 || ids[0] != first.MessageID || ids[1] != first.MessageID || ctxs[0] != "" || ctxs[1] != "" {
		t.Fatalf("message:send attempts %q (contexts %q), want the same messageId %q twice without contextId", ids, ctxs, first.MessageID)
	}
	if !strings.HasPrefix(first.InterfaceURL, proxy.srv.URL) {
		t.Fatalf("interface URL %q does not go through the proxy", first.InterfaceURL)
	}

	// A continuing message, dropped once more.
	proxy.drops.Store(1)
	second := parseSend(t, d.run("send", brandArg, "and A-10001?", "--json"))
	if second.ContextID != first.ContextID {
		t.Errorf("second message went to context %q, want %q", second.ContextID, first.ContextID)
	}
	if runs := d.prov.AgentRuns(); runs != 2 {
		t.Fatalf("after two messages the agent ran %d times, want 2", runs)
	}
	proxy.mu.Lock()
	ids = append([]string(nil), proxy.sendIDs[2:]...)
	proxy.mu.Unlock()
	if len(ids) != 2 || ids[0] != second.MessageID || ids[1] != second.MessageID {
		t.Fatalf("second message attempts %q, want %q twice", ids, second.MessageID)
	}
	// Both turns are stored once each.
	r := d.must("conversations", "--json")
	var convs []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &convs); err != nil || len(convs) != 1 {
		t.Fatalf("conversations: %v %s", err, r.stdout)
	}
}

// startDemo starts a demo Provider with cfg for the rest of the test.
func startDemo(t *testing.T, cfg demoprovider.Config) *demoprovider.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	prov, err := demoprovider.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { prov.Close() })
	return prov
}
