package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pact-cli/pact/demoprovider"
)

// TestMCP_CancelledSendIsNotAnsweredAndSaidLater: a send_message the client
// cancels while the Brand holds the message gets no answer, its work stops
// (pact hangs up on the Brand), the session goes on, and the next
// send_message to the Brand says the message may have been delivered.
func TestMCP_CancelledSendIsNotAnsweredAndSaidLater(t *testing.T) {
	t.Parallel()
	received, gone, testDone := make(chan struct{}, 4), make(chan struct{}, 4), make(chan struct{})
	var hold atomic.Bool
	hold.Store(true)
	f := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		if hold.Load() {
			// Read the body first: the server notices that the client
			// hung up only once it reads the connection again.
			io.ReadAll(r.Body)
			received <- struct{}{}
			select {
			case <-r.Context().Done():
				gone <- struct{}{}
			case <-testDone:
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(agentReply("Done.")))
	})
	t.Cleanup(func() { close(testDone) }) // runs before the fake's Close
	e := hostileEnv(t, f)
	p := startMCP(t, e)
	p.initialize()
	p.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"send_message","arguments":{"brand":"` + f.URL() + `","text":"cancel all my orders"}}}`)
	wait := func(c chan struct{}, what string) {
		select {
		case <-c:
		case <-time.After(30 * time.Second):
			t.Fatalf("%s within 30 s; stderr:\n%s", what, p.errText())
		}
	}
	wait(received, "the Brand got no message")
	p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"the User stopped it"}}`)
	wait(gone, "pact did not stop the cancelled work (the Brand's request still open)")
	hold.Store(false)

	content, structured, isErr := p.callTool("8", "send_message", map[string]any{"brand": f.URL(), "text": "what happened?"})
	if isErr || !strings.Contains(content[0], "was cancelled after the message left pact: the Brand may have received it") {
		t.Fatalf("the next send does not say the cancelled message may have arrived:\n%s", content[0])
	}
	if earlier, _ := structured["earlier"].([]any); len(earlier) != 1 || earlier[0].(map[string]any)["text"] != "cancel all my orders" {
		t.Fatalf("earlier = %v", structured["earlier"])
	}
	p.end()
	for _, l := range p.seen {
		var m map[string]json.RawMessage
		json.Unmarshal(l, &m)
		if string(m["id"]) == "7" {
			t.Fatalf("the cancelled request was answered: %s", l)
		}
	}
}

// TestMCP_LookAlikeNameIsFlagged: a card calling itself "Exаmple Bank"
// (Cyrillic а) next to the pinned "Example Bank" on another origin is
// flagged by pact card (text and --json) and get_agent_card.
func TestMCP_LookAlikeNameIsFlagged(t *testing.T) {
	t.Parallel()
	named := func(name string) *fakeProvider {
		f := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(agentReply("hello")))
		})
		f.Card = func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(cardJSON(f.Iface(), map[string]any{"name": name})))
		}
		return f
	}
	real, fake := named("Example Bank"), named("Ex\u0430mple Bank")
	e := hostileEnv(t, real)
	e.must("provider", "add", fake.URL(), "--audience", "hostile2", "--json")
	e.must("send", real.URL(), "hi") // the User uses the real one: pinned
	realHost := strings.TrimPrefix(real.URL(), "http://")

	if out := e.must("card", real.URL()).stdout; strings.Contains(out, "warning") {
		t.Fatalf("the real Brand is flagged:\n%s", out)
	}
	out := e.must("card", fake.URL()).stdout
	if !strings.Contains(out, "mixes scripts") || !strings.Contains(out, "looks like that of the Brand at "+realHost) {
		t.Fatalf("pact card does not flag the look-alike:\n%s", out)
	}
	var doc struct {
		Pact struct {
			NameWarnings []string `json:"nameWarnings"`
			BrandName    string   `json:"brandName"`
		} `json:"pact"`
	}
	if err := json.Unmarshal([]byte(e.must("card", fake.URL(), "--json").stdout), &doc); err != nil || len(doc.Pact.NameWarnings) != 2 || doc.Pact.BrandName != "Ex\u0430mple Bank" {
		t.Fatalf("pact card --json: %v %+v", err, doc.Pact)
	}
	p := startMCP(t, e)
	p.initialize()
	content, structured, _ := p.callTool("2", "get_agent_card", map[string]any{"brand": fake.URL()})
	w, _ := structured["pact"].(map[string]any)["nameWarnings"].([]any)
	if len(w) != 2 || !strings.Contains(content[0], "pact WARNING: the name looks like that of the Brand at "+realHost) {
		t.Fatalf("get_agent_card does not flag the look-alike: %v\n%s", w, content[0])
	}
	p.end()
}

// elicitingClient is the go-sdk client with URL elicitation, connected to
// the real `pact mcp`; each elicitation is answered with the next of
// answers and recorded.
type elicitingClient struct {
	cs      *mcp.ClientSession
	answers chan string
	mu      sync.Mutex
	asked   []*mcp.ElicitParams
}

func newElicitingClient(t *testing.T, d *demoEnv, protocol string) *elicitingClient {
	t.Helper()
	c := &elicitingClient{answers: make(chan string, 8)}
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-elicit", Version: "0"}, &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			c.mu.Lock()
			c.asked = append(c.asked, req.Params)
			c.mu.Unlock()
			return &mcp.ElicitResult{Action: <-c.answers}, nil
		},
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	t.Cleanup(cancel)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: d.cmd(ctx, "mcp", "--no-browser")}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	c.cs = cs
	return c
}

func (c *elicitingClient) last() *mcp.ElicitParams {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.asked[len(c.asked)-1]
}

// call calls a tool, answering the elicitation it may raise with answer.
func (c *elicitingClient) call(t *testing.T, answer, name string, args map[string]any) (string, map[string]any) {
	t.Helper()
	if answer != "" {
		c.answers <- answer
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var b strings.Builder
	for _, ct := range res.Content {
		b.WriteString(ct.(*mcp.TextContent).Text + "\n")
	}
	if res.IsError {
		t.Fatalf("%s: tool error %s", name, b.String())
	}
	var out map[string]any
	raw, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(raw, &out)
	return b.String() + string(raw), out
}

var codeRE = regexp.MustCompile(`shows the code (\S+),`)

// checkAsked: the last elicitation was URL mode, named the Brand's host
// and the scopes, and neither its link nor its code is in the result.
func checkAsked(t *testing.T, c *elicitingClient, d *demoEnv, result string, scopes ...string) *mcp.ElicitParams {
	t.Helper()
	c.mu.Lock()
	n := len(c.asked)
	c.mu.Unlock()
	if n == 0 {
		t.Fatalf("the User was not asked (no elicitation); the result:\n%s", result)
	}
	el := c.last()
	host := strings.TrimPrefix(strings.TrimPrefix(d.brand.SiteURL, "http://"), "https://")
	host = strings.TrimSuffix(host, "/")
	if el.Mode != "url" || !strings.HasPrefix(el.URL, "http") || el.ElicitationID == "" || !strings.Contains(el.Message, host) {
		t.Fatalf("elicitation = %+v", el)
	}
	for _, sc := range scopes {
		if !strings.Contains(el.Message, sc) {
			t.Fatalf("the elicitation does not name %s: %s", sc, el.Message)
		}
	}
	m := codeRE.FindStringSubmatch(el.Message)
	if m == nil {
		t.Fatalf("the elicitation gives no code: %s", el.Message)
	}
	if strings.Contains(result, el.URL) || strings.Contains(result, m[1]) {
		t.Fatalf("the link or the code reached the model:\n%s", result)
	}
	return el
}

// TestMCP_ConsentGoesToTheUserByURLElicitation: with a client that
// declares URL elicitation, start_login and a step-up in send_message
// send the consent link to the User (elicitation/create, mode url),
// never to the model; decline, cancel and accept are reported as the
// User's answers, and an accepted login completes in the Brand's page.
//
// Both protocols: 2025-11-25 (pact's elicitation/create while the call
// runs) and 2026-07-28 (an input-required result the client fulfils, the
// go-sdk client's default).
func TestMCP_ConsentGoesToTheUserByURLElicitation(t *testing.T) {
	t.Parallel()
	for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(protocol, func(t *testing.T) {
			t.Parallel()
			consentByElicitation(t, protocol)
		})
	}
}

func consentByElicitation(t *testing.T, protocol string) {
	d := newDemoEnv(t, demoprovider.Config{PollInterval: time.Second}, nil)
	c := newElicitingClient(t, d, protocol)
	b := d.brand.SiteURL
	status := func() string {
		_, st := c.call(t, "", "login_status", map[string]any{"brand": b})
		return st["status"].(string)
	}

	res, st := c.call(t, "decline", "start_login", map[string]any{"brand": b, "scopes": []string{"orders:read"}})
	checkAsked(t, c, d, res, "orders:read")
	if st["status"] != "declined" || st["userAnswer"] != "decline" || !strings.Contains(res, "declined to open the Brand's login page") || status() != "declined" {
		t.Fatalf("declined: %v\n%s", st, res)
	}
	res, st = c.call(t, "cancel", "start_login", map[string]any{"brand": b, "scopes": []string{"orders:read"}})
	checkAsked(t, c, d, res, "orders:read")
	if st["status"] != "cancelled" || !strings.Contains(res, "dismissed the request without answering") || status() != "cancelled" {
		t.Fatalf("cancelled: %v\n%s", st, res)
	}
	res, st = c.call(t, "accept", "start_login", map[string]any{"brand": b, "scopes": []string{"orders:read"}})
	el := checkAsked(t, c, d, res, "orders:read")
	if st["status"] != "pending" || st["askedVia"] != "elicitation" || !strings.Contains(res, "the User chose to open the page") {
		t.Fatalf("accepted: %v\n%s", st, res)
	}
	// The User, in the browser the client opened.
	approve := func(link string) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := (demoprovider.ScriptedUser{Username: "jane", Password: "jane-demo-pass"}).Visit(ctx, link); err != nil {
			t.Fatal(err)
		}
	}
	waitGranted := func() {
		for deadline := time.Now().Add(20 * time.Second); status() != "granted"; time.Sleep(200 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the login was not granted within 20 s")
			}
		}
	}
	approve(el.URL)
	waitGranted()

	// A step-up inside send_message: the link for orders:cancel goes to
	// the User too.
	c.call(t, "", "send_message", map[string]any{"brand": b, "text": "show my orders"})
	res, su := c.call(t, "accept", "send_message", map[string]any{"brand": b, "text": "cancel A-10001"})
	el = checkAsked(t, c, d, res, "orders:cancel")
	step, _ := su["stepUp"].(map[string]any)
	if step == nil || step["login"].(map[string]any)["askedVia"] != "elicitation" {
		t.Fatalf("step-up: %v", su)
	}
	approve(el.URL)
	waitGranted()
	_, done := c.call(t, "", "send_message", map[string]any{"brand": b, "text": "cancel A-10001"})
	if done["stepUp"] != nil || !strings.Contains(done["text"].(string), "cancelled") {
		t.Fatalf("sent again after the step-up: %v", done)
	}
}
