package mcpserver

import (
	"context"
	"encoding/json"
	"github.com/pact-cli/pact/agent"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/demoprovider"
	"github.com/pact-cli/pact/discovery"
	"github.com/pact-cli/pact/httpx"
	"github.com/pact-cli/pact/internal/testrun"
	"github.com/pact-cli/pact/jwks"
	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/secrets"
	"github.com/pact-cli/pact/store"
)

// env is a profile registered with a running demo Provider, served to an
// in-process MCP client over the SDK's in-memory transport.
type env struct {
	t       *testing.T
	srv     *demoprovider.Server
	brands  []demoprovider.Brand
	cs      *mcp.ClientSession
	opened  chan string // links the server asked to open in a browser
	pins    discovery.Pins
	backend store.Backend
}

func (e *env) pinOf(t *testing.T, brand string) (store.Pin, bool) {
	t.Helper()
	p, ok, err := e.pins.Pin(context.Background(), brand)
	if err != nil {
		t.Fatal(err)
	}
	return p, ok
}

func newEnv(t *testing.T, noBrowser bool, cfgs ...demoprovider.Config) *env {
	t.Helper()
	return newEnvWith(t, noBrowser, nil, cfgs...)
}

// newEnvWith is newEnv whose HTTP transport wrap wraps (nil: as is).
func newEnvWith(t *testing.T, noBrowser bool, wrap func(http.RoundTripper) http.RoundTripper, cfgs ...demoprovider.Config) *env {
	t.Helper()
	testrun.Parallel(t)
	dir := t.TempDir()
	dirs := store.Dirs{Config: filepath.Join(dir, "config"), Data: filepath.Join(dir, "data")}
	sec, _ := secrets.Open("file", dirs.Data, 0)
	p := &profile.Profile{Name: "t", Dirs: dirs, Secrets: sec}
	var issuer string
	jw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _ := p.Load()
		jwks.Handler(issuer, issuer+"/.well-known/jwks.json", func() (jose.JSONWebKeySet, error) { return c.JWKS(), nil }).ServeHTTP(w, r)
	}))
	t.Cleanup(jw.Close)
	issuer = jw.URL
	if _, err := p.Init(issuer, "", "ES256", false); err != nil {
		t.Fatal(err)
	}
	cfg := demoprovider.Config{PollInterval: time.Second}
	if len(cfgs) > 0 {
		cfg = cfgs[0]
	}
	srv, err := demoprovider.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	if _, err := p.AddProvider(srv.URL(), srv.Audience()); err != nil {
		t.Fatal(err)
	}
	hc := httpx.NewClient(httpx.Options{Timeout: 5 * time.Second})
	if wrap != nil {
		hc.Transport = wrap(hc.Transport)
	}
	opts := conversation.NewOptions(p, hc)
	e := &env{t: t, srv: srv, brands: srv.Brands(), opened: make(chan string, 4), pins: opts.Pins, backend: opts.Backend}
	s := New(Config{Agent: agent.NewLocal(opts), NoBrowser: noBrowser, Version: "test",
		Open: func(link string) error { e.opened <- link; return nil }})
	st, ct := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, st) }()
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "v0"}, nil)
	cs, err := client.Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.cs = cs
	t.Cleanup(func() {
		cs.Close()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("server: %v", err)
		}
	})
	return e
}

// call calls a tool and decodes its structured result into out (when not
// nil). It fails the test on a protocol error; tool errors are returned.
func (e *env) call(name string, args map[string]any, out any) *mcp.CallToolResult {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := e.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		e.t.Fatalf("%s: protocol error: %v", name, err)
	}
	if out != nil && !res.IsError {
		data, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(data, out); err != nil {
			e.t.Fatalf("%s: structuredContent %s: %v", name, data, err)
		}
	}
	return res
}

// mustCall is call that fails the test on a tool error.
func (e *env) mustCall(name string, args map[string]any, out any) *mcp.CallToolResult {
	e.t.Helper()
	res := e.call(name, args, out)
	if res.IsError {
		e.t.Fatalf("%s: tool error: %s", name, text(res))
	}
	return res
}

// toolError calls a tool that must fail with a tool error containing want.
func (e *env) toolError(name string, args map[string]any, want string) {
	e.t.Helper()
	res := e.call(name, args, nil)
	if !res.IsError {
		e.t.Fatalf("%s(%v): no tool error; got %s", name, args, text(res))
	}
	if !strings.Contains(text(res), want) {
		e.t.Fatalf("%s(%v): error %q, want it to say %q", name, args, text(res), want)
	}
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// approve plays the User in the browser on link (the demo Provider's
// scripted User: the Brand's login form and the consent page, by HTTP).
func (e *env) approve(link string, u demoprovider.ScriptedUser) {
	e.t.Helper()
	if u.Username == "" {
		u.Username, u.Password = "jane", "jane-demo-pass"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := u.Visit(ctx, link); err != nil {
		e.t.Fatal(err)
	}
}

// waitLogin polls login_status until it is no longer pending.
func (e *env) waitLogin(brand string) LoginStatus {
	e.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var st LoginStatus
		e.mustCall("login_status", map[string]any{"brand": brand}, &st)
		if st.Status != StatusPending {
			return st
		}
		if time.Now().After(deadline) {
			e.t.Fatal("login still pending after 20s")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestMCP_ToolsHaveDescriptionsAndSchemas(t *testing.T) {
	e := newEnv(t, true)
	res, err := e.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if len(tool.Description) < 80 {
			t.Errorf("%s: description too thin for a model to act on: %q", tool.Name, tool.Description)
		}
		in, _ := json.Marshal(tool.InputSchema)
		out, _ := json.Marshal(tool.OutputSchema)
		if !strings.Contains(string(in), `"type":"object"`) || !strings.Contains(string(out), `"type":"object"`) {
			t.Errorf("%s: schemas in=%s out=%s", tool.Name, in, out)
		}
	}
	slices.Sort(names)
	want := []string{"get_agent_card", "get_conversation", "list_conversations", "list_receipts", "login_status", "send_message", "start_login", "verify_receipts"}
	if !slices.Equal(names, want) {
		t.Fatalf("tools = %v, want %v", names, want)
	}
	tpl, err := e.cs.ListResourceTemplates(context.Background(), nil)
	if err != nil || len(tpl.ResourceTemplates) != 1 || tpl.ResourceTemplates[0].URITemplate != "pact://receipts/{id}" {
		t.Fatalf("resource templates = %+v, %v", tpl, err)
	}
}

func TestMCP_GetAgentCard(t *testing.T) {
	e := newEnv(t, true)
	var out CardOutput
	e.mustCall("get_agent_card", map[string]any{"brand": e.brands[0].SiteURL}, &out)
	f := out.Pact
	if !strings.HasPrefix(f.Name, "Example Co.") || f.InterfaceURL != e.brands[0].InterfaceURL || len(f.Skills) == 0 {
		t.Fatalf("findings = %+v", f)
	}
	if f.Provider == nil || f.Provider.Audience != e.srv.Audience() {
		t.Fatalf("provider = %+v", f.Provider)
	}
	if f.Delegation == nil || f.Delegation.Scopes["orders:read"] == "" {
		t.Fatalf("delegation = %+v", f.Delegation)
	}
	// The demo Brand site signs its card with a key at its own origin.
	if !f.Signature.Verified || f.Signature.KID == "" || !strings.HasPrefix(f.Signature.KeyURL, e.brands[0].SiteURL) ||
		!strings.HasPrefix(f.Signature.Label, "signed by ") || len(f.Signature.Problems) != 0 {
		t.Fatalf("signature = %+v", f.Signature)
	}
	if card, ok := out.Card.(map[string]any); !ok || card["name"] != f.Name {
		t.Fatalf("card = %v", out.Card)
	}
	if f.Pin.State != "new" || f.Pin.Old != nil || f.Pin.New.InterfaceURL != f.InterfaceURL || f.Pin.Fingerprint == "" {
		t.Fatalf("pin = %+v", f.Pin)
	}
}

// get_agent_card reports a card that no longer matches its pin, as
// `pact card` does, without recording a pin from a look: new before the
// first send, same after it, changed (with a CARD_CHANGED problem) once the
// rogue card is served, and send_message refuses it.
func TestMCP_GetAgentCardReportsThePin(t *testing.T) {
	e := newEnv(t, true, demoprovider.Config{PollInterval: time.Second, RogueCard: true})
	b := e.brands[0].SiteURL
	var out CardOutput
	e.mustCall("get_agent_card", map[string]any{"brand": b}, &out) // the real card (the first look)
	if out.Pact.Pin.State != "new" {
		t.Fatalf("first look: pin %+v", out.Pact.Pin)
	}
	if out.Pact.Brand != out.Pact.CardURL || out.Pact.BrandName == "" {
		t.Fatalf("get_agent_card names the Brand %q %q", out.Pact.Brand, out.Pact.BrandName)
	}
	if out.Pact.Pin.New.PinnedAt.Nanosecond() != 0 {
		t.Fatalf("pinnedAt is not to the second: %v", out.Pact.Pin.New.PinnedAt)
	}
	if _, ok, _ := discovery.LookupPin(context.Background(), e.pins, out.Pact.CardURL); ok {
		t.Fatal("get_agent_card recorded a pin")
	}
	// The rogue card from now on: the first send pins it, then it is the same.
	var r SendOutput
	e.mustCall("send_message", map[string]any{"brand": b, "text": "hello"}, &r)
	e.mustCall("get_agent_card", map[string]any{"brand": b}, &out)
	if out.Pact.Pin.State != "same" || out.Pact.Pin.Old == nil || len(out.Pact.Problems) != 0 {
		t.Fatalf("after the first send: pin %+v problems %v", out.Pact.Pin, out.Pact.Problems)
	}
	// Pin the real card's key again (as if the rogue card came later).
	pin, _ := e.pinOf(t, out.Pact.CardURL)
	pin.KeyThumbprint = "the-real-key"
	e.pins.SetPin(context.Background(), pin)
	res := e.mustCall("get_agent_card", map[string]any{"brand": b}, &out)
	p := out.Pact.Pin
	if p.State != "changed" || !slices.Contains(p.Changes, "signed by another key") || p.Old.KeyThumbprint != "the-real-key" || p.Fingerprint != discovery.PinFingerprint(p.New) {
		t.Fatalf("pin %+v", p)
	}
	if len(out.Pact.Problems) != 1 || !strings.HasPrefix(out.Pact.Problems[0], "CARD_CHANGED") || !strings.Contains(out.Pact.Problems[0], "--expect "+p.Fingerprint) {
		t.Fatalf("problems %v", out.Pact.Problems)
	}
	if !strings.Contains(text(res), "CHANGED") {
		t.Fatalf("text:\n%s", text(res))
	}
	if got, _ := e.pinOf(t, out.Pact.CardURL); got.KeyThumbprint != "the-real-key" {
		t.Fatal("get_agent_card changed the pin")
	}
	e.toolError("send_message", map[string]any{"brand": b, "text": "hello"}, "changed")
}

func TestSection4_2_MCP_ConversationContinuesAndIsStored(t *testing.T) {
	e := newEnv(t, true)
	b := e.brands[0].SiteURL
	var r1, r2 SendOutput
	e.mustCall("send_message", map[string]any{"brand": b, "text": "hello"}, &r1)
	if r1.ContextID == "" || !strings.Contains(r1.Text, "order number") || r1.Receipt != nil || r1.StepUp != nil {
		t.Fatalf("first reply: %+v", r1)
	}
	if m, ok := r1.Reply.(map[string]any); !ok || m["message"] == nil {
		t.Fatalf("reply = %v, want the A2A {message}", r1.Reply)
	}
	e.mustCall("send_message", map[string]any{"brand": b, "text": "A-88213"}, &r2)
	if r2.ContextID != r1.ContextID {
		t.Fatalf("context not continued: %s then %s", r1.ContextID, r2.ContextID)
	}
	var list Conversations
	e.mustCall("list_conversations", map[string]any{}, &list)
	if len(list.Conversations) != 1 || list.Conversations[0].ContextID != r1.ContextID || !list.Conversations[0].Current {
		t.Fatalf("conversations = %+v", list)
	}
	var conv ConversationOutput
	e.mustCall("get_conversation", map[string]any{"brand": b}, &conv)
	if len(conv.Turns) != 4 || conv.Turns[0].Text != "hello" || conv.Turns[3].Role != "agent" {
		t.Fatalf("turns = %+v", conv.Turns)
	}
	e.mustCall("get_conversation", map[string]any{"context": r1.ContextID, "limit": 1}, &conv)
	if len(conv.Turns) != 1 || conv.Turns[0].Role != "agent" || conv.ContextID != r1.ContextID {
		t.Fatalf("limited turns = %+v", conv)
	}
	// new: a new conversation.
	var r3 SendOutput
	e.mustCall("send_message", map[string]any{"brand": b, "text": "hello", "new": true}, &r3)
	if r3.ContextID == r1.ContextID {
		t.Fatal("new: true continued the stored conversation")
	}
}

// A full delegated session: consent through the scripted User, a step-up
// answered between two send_message calls (PACT §5.5), verified receipts
// listed, verified again and read as resources (§5.6).
func TestSection5_5_MCP_StepUpCompletesBetweenTwoSends(t *testing.T) {
	e := newEnv(t, false)
	b := e.brands[0].SiteURL

	var started LoginStarted
	e.mustCall("start_login", map[string]any{"brand": b, "scopes": []string{"orders:read"}}, &started)
	if started.Status != StatusPending || started.UserCode == "" || !strings.HasPrefix(started.VerificationURIComplete, "http") ||
		len(started.Scopes) != 1 || started.Scopes[0].Description == "" || time.Until(started.ExpiresAt) <= 0 || started.ExpiresAt.Nanosecond() != 0 || !started.BrowserOpened ||
		started.BrandName != "Example Co. Support" {
		t.Fatalf("start_login = %+v", started)
	}
	select {
	case link := <-e.opened:
		if link != started.VerificationURIComplete {
			t.Fatalf("opened %s, returned %s", link, started.VerificationURIComplete)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the browser was not opened")
	}
	var st LoginStatus
	e.mustCall("login_status", map[string]any{"brand": b}, &st)
	if st.Status != StatusPending || st.BrandName != "Example Co. Support" {
		t.Fatalf("before the User answers: %+v", st)
	}
	e.approve(started.VerificationURIComplete, demoprovider.ScriptedUser{})
	st = e.waitLogin(b)
	if st.Status != StatusGranted || !slices.Equal(st.ScopesGranted, []string{"orders:read"}) || st.GrantID == "" || st.ExpiresAt == nil || st.ExpiresAt.Nanosecond() != 0 || st.BrandName == "" {
		t.Fatalf("after approval: %+v", st)
	}

	var orders SendOutput
	e.mustCall("send_message", map[string]any{"brand": b, "text": "show my orders"}, &orders)
	if orders.Receipt == nil || !orders.Receipt.Verified {
		t.Fatalf("show my orders: receipt %+v", orders.Receipt)
	}

	// The step-up: not an error; the login for the missing scope is started.
	var su SendOutput
	res := e.mustCall("send_message", map[string]any{"brand": b, "text": "cancel A-10001"}, &su)
	if su.StepUp == nil || !slices.Equal(su.StepUp.MissingScopes, []string{"orders:cancel"}) || su.StepUp.Login == nil ||
		su.StepUp.Login.UserCode == "" || su.StepUp.Login.Scopes[0].ID != "orders:cancel" {
		t.Fatalf("step-up = %+v", su.StepUp)
	}
	if !strings.Contains(text(res), su.StepUp.Login.VerificationURIComplete) || !strings.Contains(text(res), "orders:cancel") {
		t.Fatalf("step-up text does not tell the model what to do: %s", text(res))
	}
	<-e.opened
	e.approve(su.StepUp.Login.VerificationURIComplete, demoprovider.ScriptedUser{})
	st = e.waitLogin(b)
	if st.Status != StatusGranted || !slices.Contains(st.ScopesGranted, "orders:cancel") {
		t.Fatalf("after step-up approval: %+v", st)
	}
	var done SendOutput
	e.mustCall("send_message", map[string]any{"brand": b, "text": "cancel A-10001"}, &done)
	if done.StepUp != nil || done.ContextID != su.ContextID || done.Receipt == nil || !done.Receipt.Verified || !strings.Contains(done.Text, "cancelled") {
		t.Fatalf("sent again: %+v", done)
	}

	var list ReceiptList
	e.mustCall("list_receipts", map[string]any{"brand": b}, &list)
	// Three receipts: the orders shown, the step-up answer (no action) and
	// the cancellation.
	if len(list.Receipts) != 3 || len(list.Problems) != 0 {
		t.Fatalf("receipts = %+v", list)
	}
	var tools []string
	for _, r := range list.Receipts {
		if !r.Verified || r.URI != "pact://receipts/"+r.ID {
			t.Fatalf("receipt = %+v", r)
		}
		for _, a := range r.Actions {
			tools = append(tools, a.(map[string]any)["tool"].(string))
		}
	}
	if slices.Sort(tools); !slices.Equal(tools, []string{"cancel_order", "lookup_orders"}) {
		t.Fatalf("actions = %v", tools)
	}
	ids := []string{list.Receipts[0].ID, list.Receipts[1].ID, list.Receipts[2].ID}
	newest := ids[2]
	e.mustCall("list_receipts", map[string]any{"limit": 1}, &list)
	if len(list.Receipts) != 1 || list.Receipts[0].ID != newest || list.Total != 3 {
		t.Fatalf("limit 1 = %+v, want the newest %s", list.Receipts, newest)
	}
	e.mustCall("list_receipts", map[string]any{"limit": 2}, &list)
	if len(list.Receipts) != 2 || list.Receipts[0].ID != ids[1] || list.Receipts[1].ID != ids[2] || list.Total != 3 {
		t.Fatalf("limit 2 = %+v, want the newest two, oldest first: %v", list.Receipts, ids[1:])
	}
	e.mustCall("list_receipts", map[string]any{"since": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}, &list)
	if len(list.Receipts) != 0 {
		t.Fatalf("since the future = %+v", list.Receipts)
	}
	var ver VerifyOutput
	e.mustCall("verify_receipts", map[string]any{}, &ver)
	if ver.Verified != 3 || ver.Failed != 0 || len(ver.Results) != 3 {
		t.Fatalf("verify = %+v", ver)
	}
	e.mustCall("verify_receipts", map[string]any{"ids": []string{done.Receipt.ID}}, &ver)
	if ver.Verified != 1 || ver.Results[0].KeySource != "jwks_uri" {
		t.Fatalf("verify one = %+v", ver)
	}

	// The receipt as a resource: JWS, key, claims.
	rr, err := e.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "pact://receipts/" + done.Receipt.ID})
	if err != nil {
		t.Fatal(err)
	}
	var entry struct {
		ID     string          `json:"id"`
		JWS    string          `json:"jws"`
		JWK    jose.JSONWebKey `json:"jwk"`
		Claims struct {
			Actions []struct{ Tool string } `json:"actions"`
		} `json:"claims"`
		Verified bool `json:"verified"`
	}
	if err := json.Unmarshal([]byte(rr.Contents[0].Text), &entry); err != nil {
		t.Fatal(err)
	}
	sig, err := jose.ParseSignedCompact(entry.JWS, []jose.SignatureAlgorithm{jose.ES256, jose.RS256})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sig.Verify(&entry.JWK); err != nil || !entry.Verified || entry.Claims.Actions[0].Tool != "cancel_order" {
		t.Fatalf("resource: verify %v, entry %+v", err, entry)
	}
	if _, err := e.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "pact://receipts/ffffffffffff"}); err == nil {
		t.Fatal("an unknown receipt was read")
	}
}

func TestRFC8628_MCP_DeniedLoginIsReported(t *testing.T) {
	e := newEnv(t, true)
	b := e.brands[0].SiteURL
	var started LoginStarted
	e.mustCall("start_login", map[string]any{"brand": b, "scopes": []string{"orders:read"}}, &started)
	if started.BrowserOpened {
		t.Fatal("--no-browser: the browser was opened")
	}
	select {
	case link := <-e.opened:
		t.Fatalf("--no-browser: opened %s", link)
	default:
	}
	e.approve(started.VerificationURIComplete, demoprovider.ScriptedUser{Deny: true})
	if st := e.waitLogin(b); st.Status != StatusDenied || len(st.ScopesGranted) != 0 {
		t.Fatalf("after denial: %+v", st)
	}
}

func TestMCP_FailuresAreToolErrorsInTheCLIsWords(t *testing.T) {
	e := newEnv(t, true)
	b := e.brands[0].SiteURL
	e.toolError("start_login", map[string]any{"brand": b, "scopes": []string{"orders:delete"}}, "scope not on the Brand's card")
	e.toolError("start_login", map[string]any{"brand": b, "scopes": []string{}}, "name the permissions")
	e.toolError("send_message", map[string]any{"brand": b, "text": "  "}, "the message is empty")
	e.toolError("send_message", map[string]any{"brand": "http://127.0.0.1:1", "text": "hi"}, "")
	e.toolError("send_message", map[string]any{"brand": b, "text": "hi", "new": true, "context": "x"}, "cannot be used together")
	e.toolError("get_agent_card", map[string]any{"brand": "not a brand"}, "")
	e.toolError("get_conversation", map[string]any{}, "give brand")
	e.toolError("get_conversation", map[string]any{"brand": b}, "no stored conversation")
	e.toolError("login_status", map[string]any{"brand": b}, "call start_login")
	e.toolError("verify_receipts", map[string]any{"ids": []string{"abcdef"}}, "no receipt")
	e.toolError("list_receipts", map[string]any{"since": "yesterday"}, "not a time")
	// A missing required argument is a tool error too, not a protocol error.
	e.toolError("send_message", map[string]any{"brand": b}, "text")
	// A Brand whose card offers no delegation.
	for _, br := range e.brands {
		if !br.Delegation {
			e.toolError("start_login", map[string]any{"brand": br.SiteURL, "scopes": []string{"x"}}, "does not offer delegation")
		}
	}
}

func TestRFC8628_MCP_ExpiredLoginIsReported(t *testing.T) {
	e := newEnv(t, true, demoprovider.Config{PollInterval: time.Second, DeviceCodeTTL: 2 * time.Second})
	b := e.brands[0].SiteURL
	var started LoginStarted
	e.mustCall("start_login", map[string]any{"brand": b, "scopes": []string{"orders:read"}}, &started)
	// The User never answers.
	if st := e.waitLogin(b); st.Status != StatusExpired || st.Message == "" {
		t.Fatalf("after expiry: %+v", st)
	}
}
