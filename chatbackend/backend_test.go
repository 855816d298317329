package chatbackend

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/pact-cli/pact/agent"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/demoprovider"
	"github.com/pact-cli/pact/httpx"
	"github.com/pact-cli/pact/internal/testrun"
	"github.com/pact-cli/pact/iostreams"
	"github.com/pact-cli/pact/jwks"
	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/secrets"
	"github.com/pact-cli/pact/store"
	"github.com/pact-cli/pact/tui"
)

// sent is one message:send request as it left pact.
type sent struct{ messageID, contextID, text string }

// recorder is an http.RoundTripper that notes every message:send.
type recorder struct {
	next http.RoundTripper
	mu   sync.Mutex
	reqs []sent
	seen chan struct{} // one value per message:send, when it is sent
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if strings.HasSuffix(req.URL.Path, "/message:send") && req.Body != nil {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		var m struct {
			Message struct {
				MessageID string `json:"messageId"`
				ContextID string `json:"contextId"`
				Parts     []struct {
					Text string `json:"text"`
				} `json:"parts"`
			} `json:"message"`
		}
		json.Unmarshal(body, &m)
		s := sent{messageID: m.Message.MessageID, contextID: m.Message.ContextID}
		if len(m.Message.Parts) > 0 {
			s.text = m.Message.Parts[0].Text
		}
		r.mu.Lock()
		r.reqs = append(r.reqs, s)
		r.mu.Unlock()
		select {
		case r.seen <- struct{}{}:
		default:
		}
	}
	return r.next.RoundTrip(req)
}

func (r *recorder) all() []sent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.reqs)
}

func (r *recorder) last() sent {
	all := r.all()
	if len(all) == 0 {
		return sent{}
	}
	return all[len(all)-1]
}

type rig struct {
	b      *Backend
	s      *conversation.Session // under b
	reopen func() *Backend       // a new Session and Backend on the same profile (the chat opened again)
	srv    *demoprovider.Server
	rec    *recorder
	opened chan string // links the "browser" was asked to open
	db     *store.DB   // the profile's database
}

// newRig is a profile registered with a demo Provider on 127.0.0.1 (its JWKS
// served by an httptest server), a Session with Example Co. and its Backend,
// whose "browser" is a scripted person approving every scope.
func newRig(t *testing.T, cfg demoprovider.Config) *rig {
	t.Helper()
	testrun.Parallel(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cfg.PollInterval = time.Second
	srv, err := demoprovider.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })

	dir := t.TempDir()
	sec, err := secrets.Open("file", dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	p := &profile.Profile{Name: "default", Dirs: store.Dirs{Config: filepath.Join(dir, "config"), Data: filepath.Join(dir, "data")}, Secrets: sec}
	var h http.Handler = http.NotFoundHandler()
	var hmu sync.Mutex
	pa := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hmu.Lock()
		hh := h
		hmu.Unlock()
		hh.ServeHTTP(w, r)
	}))
	t.Cleanup(pa.Close)
	if _, err := p.Init(pa.URL, "", "ES256", false); err != nil {
		t.Fatal(err)
	}
	hmu.Lock()
	h = jwks.Handler(pa.URL, profile.DefaultJWKSURI(pa.URL), func() (jose.JSONWebKeySet, error) {
		c, err := p.Load()
		if err != nil {
			return jose.JSONWebKeySet{}, err
		}
		return c.JWKS(), nil
	})
	hmu.Unlock()
	if _, err := p.AddProvider(srv.URL(), srv.Audience()); err != nil {
		t.Fatal(err)
	}

	hc := httpx.NewClient(httpx.Options{})
	rec := &recorder{next: hc.Transport, seen: make(chan struct{}, 16)}
	hc.Transport = rec
	opts := conversation.NewOptions(p, hc)
	s, err := conversation.Open(ctx, opts, srv.Brands()[0].SiteURL)
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{srv: srv, rec: rec, opened: make(chan string, 4), db: opts.Backend.(*store.DB)}
	r.reopen = func() *Backend {
		s, err := conversation.Open(context.Background(), opts, srv.Brands()[0].SiteURL)
		if err != nil {
			t.Fatal(err)
		}
		return New(agent.InProcess(s), Options{Receipts: agent.NewLocal(opts)})
	}
	r.s = s
	r.b = New(agent.InProcess(s), Options{Receipts: agent.NewLocal(opts), Open: func(link string) (<-chan error, error) {
		r.opened <- link
		go demoprovider.ScriptedUser{Username: "jane", Password: "jane-demo-pass"}.Visit(context.Background(), link)
		return nil, nil
	}})
	return r
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// §4.3: a message whose wait was abandoned (Esc) and is sent again keeps its
// messageId, so the Provider runs the agent once; a new message, or the same
// text once answered, gets a new one.
func TestSection4_3_ResendAfterEscReusesMessageID(t *testing.T) {
	r := newRig(t, demoprovider.Config{AgentDelay: 400 * time.Millisecond})
	ctx := testCtx(t)

	wait, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { _, err := r.b.Send(wait, "where is my order A-10001?"); errc <- err }()
	select {
	case <-r.rec.seen:
	case <-ctx.Done():
		t.Fatal("the message was never sent")
	}
	cancel() // Esc
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Send = %v, want context.Canceled", err)
	}
	first := r.rec.last()

	rep, err := r.b.Send(ctx, "where is my order A-10001?")
	if err != nil {
		t.Fatal(err)
	}
	again := r.rec.last()
	if again.messageID != first.messageID || first.messageID == "" {
		t.Fatalf("the retry used messageId %q, the abandoned send %q; want the same (§4.3)", again.messageID, first.messageID)
	}
	if len(rep.Turns) != 1 || rep.Turns[0].Role != tui.RoleAgent || !strings.Contains(rep.Turns[0].Text, "A-10001") {
		t.Fatalf("reply turns = %+v, want the agent's answer only", rep.Turns)
	}
	if n := r.srv.AgentRuns(); n != 1 {
		t.Errorf("the agent ran %d times, want 1", n)
	}

	if _, err := r.b.Send(ctx, "where is my order A-10001?"); err != nil {
		t.Fatal(err)
	}
	if id := r.rec.last().messageID; id == first.messageID {
		t.Error("a message sent again after its reply arrived reused the answered messageId")
	}
}

// §4.3: the retry rule is keyed on the text: after an abandoned send, a
// different message gets a fresh messageId.
func TestSection4_3_OtherTextAfterEscGetsNewMessageID(t *testing.T) {
	r := newRig(t, demoprovider.Config{AgentDelay: 400 * time.Millisecond})
	ctx := testCtx(t)
	wait, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := r.b.Send(wait, "first"); err == nil {
		t.Fatal("Send with a cancelled context succeeded")
	}
	if _, err := r.b.Send(ctx, "where is my order A-10002?"); err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, s := range r.rec.all() {
		ids[s.messageID] = true
	}
	if len(ids) != len(r.rec.all()) {
		t.Errorf("messageIds reused across different texts: %+v", r.rec.all())
	}
}

// §4.2: a closed context reads as the CLI says it, matches
// tui.ErrContextClosed, and NewConversation starts a new context.
func TestSection4_2_ClosedContextWrapsErrContextClosed(t *testing.T) {
	r := newRig(t, demoprovider.Config{})
	ctx := testCtx(t)
	if _, err := r.b.Send(ctx, "bye"); err != nil {
		t.Fatal(err)
	}
	closedCtx := r.rec.last()
	_, err := r.b.Send(ctx, "hello again")
	if !errors.Is(err, tui.ErrContextClosed) {
		t.Fatalf("Send to a closed context = %v, want tui.ErrContextClosed", err)
	}
	var ce *conversation.ClosedError
	if !errors.As(err, &ce) || err.Error() != ce.Error() {
		t.Fatalf("error %q does not read as the CLI's %v", err, ce)
	}
	ctxID := r.rec.last().contextID
	// The closed context is named in the error's detail, not in its
	// plain-words text (issue 10, item 10).
	if ctxID == "" || ce.ContextID != ctxID || !strings.Contains(ce.Detail(), ctxID) {
		t.Errorf("error %q (detail %q) does not name the closed context %q", err, ce.Detail(), ctxID)
	}
	if err := r.b.NewConversation(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.b.Send(ctx, "hello again"); err != nil {
		t.Fatal(err)
	}
	if got := r.rec.last(); got.contextID != "" || got.messageID == closedCtx.messageID {
		t.Errorf("after NewConversation the message went out as %+v, want no contextId", got)
	}
	if h := r.b.History(); len(h) != 2 || h[0].Role != tui.RoleUser || h[0].Text != "hello again" || h[1].Role != tui.RoleAgent {
		t.Errorf("history of the new conversation = %+v", h)
	}
}

// §5.3, §5.5, §5.6: a step-up is reported with the card's descriptions and no
// turns; after Login, Resend goes out in the same context with a new
// messageId, and the reply carries a verified receipt whose claims the panel
// shows, also when the conversation is read back from the store.
func TestSection5_5_StepUpLoginResendReceipt(t *testing.T) {
	r := newRig(t, demoprovider.Config{})
	ctx := testCtx(t)
	if h := r.b.Header(); h.BrandName != "Example Co. Support" || h.KID == "" || h.Sub == "" || !h.ExpiresAt.IsZero() || h.Scopes != nil {
		t.Fatalf("header before login = %+v", h)
	}
	var shown []tui.DeviceCode
	granted, err := r.b.Login(ctx, []string{"orders:read"}, func(dc tui.DeviceCode) { shown = append(shown, dc) })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(granted, []string{"orders:read"}) {
		t.Fatalf("granted = %q", granted)
	}
	if len(shown) != 1 || shown[0].UserCode == "" || !shown[0].BrowserOpened || shown[0].ExpiresAt.Before(time.Now()) ||
		!strings.Contains(shown[0].VerificationURIComplete, shown[0].UserCode) {
		t.Fatalf("shown = %+v", shown)
	}
	if link := <-r.opened; link != shown[0].VerificationURIComplete {
		t.Errorf("opened %q, showed %q", link, shown[0].VerificationURIComplete)
	}

	if _, err := r.b.Send(ctx, "where is my order A-10001?"); err != nil {
		t.Fatal(err)
	}
	rep, err := r.b.Send(ctx, "please cancel order A-10001")
	if err != nil {
		t.Fatal(err)
	}
	if rep.StepUp == nil || len(rep.Turns) != 0 {
		t.Fatalf("reply = %+v, want a step-up and no turns", rep)
	}
	want := []tui.Scope{{ID: "orders:cancel", Description: "Cancel an order that has not shipped"}}
	if !slices.Equal(rep.StepUp.MissingScopes, want) || rep.StepUp.Text == "" {
		t.Fatalf("step-up = %+v, want %+v", rep.StepUp, want)
	}
	stepped := r.rec.last()

	if _, err := r.b.Login(ctx, []string{"orders:cancel"}, nil); err != nil {
		t.Fatal(err)
	}
	rep, err = r.b.Resend(ctx)
	if err != nil {
		t.Fatal(err)
	}
	re := r.rec.last()
	if re.contextID != stepped.contextID || re.contextID == "" {
		t.Errorf("Resend went to context %q, the step-up was in %q (§5.5: same context)", re.contextID, stepped.contextID)
	}
	if re.messageID == stepped.messageID || re.text != "please cancel order A-10001" {
		t.Errorf("Resend sent %+v after %+v; want the same text with a new messageId", re, stepped)
	}
	if len(rep.Turns) != 1 || !strings.Contains(rep.Turns[0].Text, "is cancelled") {
		t.Fatalf("reply after resend = %+v", rep.Turns)
	}
	checkMark := func(where string, m *tui.ReceiptMark) {
		t.Helper()
		if m == nil || !m.Verified || m.ID == "" {
			t.Fatalf("%s: receipt mark = %+v, want a verified receipt", where, m)
		}
		if !slices.Equal(m.ScopesUsed, []string{"orders:cancel"}) || len(m.Actions) != 1 ||
			!strings.HasPrefix(m.Actions[0], "cancel_order (argsHash ") || m.TS.IsZero() {
			t.Errorf("%s: receipt claims = %+v", where, m)
		}
	}
	checkMark("reply", rep.Turns[0].Receipt)

	h := r.b.Header()
	if !slices.Contains(h.Scopes, "orders:cancel") || !slices.Contains(h.Scopes, "orders:read") || !h.ExpiresAt.After(time.Now()) {
		t.Errorf("header after login = %+v", h)
	}
	hist := r.b.History()
	var roles []tui.Role
	for _, t := range hist {
		roles = append(roles, t.Role)
	}
	// question, answer, message, step-up task, message again, reply
	if !slices.Equal(roles, []tui.Role{tui.RoleUser, tui.RoleAgent, tui.RoleUser, tui.RoleAgent, tui.RoleUser, tui.RoleAgent}) {
		t.Fatalf("history roles = %v: %+v", roles, hist)
	}
	checkMark("history", hist[5].Receipt)

	if err := r.b.Logout(); err != nil {
		t.Fatal(err)
	}
	if h := r.b.Header(); !h.ExpiresAt.IsZero() || h.Scopes != nil {
		t.Errorf("header after logout = %+v", h)
	}
	err = r.b.Logout()
	if err == nil || err.Error() != "no delegation is stored for Example Co. Support (see `pact grants`)" {
		t.Errorf("second logout = %v", err)
	}
}

// §5.1: Scopes and Card come from the Agent Card.
func TestSection5_1_ScopesAndCardFromTheCard(t *testing.T) {
	r := newRig(t, demoprovider.Config{})
	sc := r.b.Scopes()
	ids := make([]string, len(sc))
	for i, s := range sc {
		ids[i] = s.ID
		if s.Description == "" {
			t.Errorf("scope %s has no description", s.ID)
		}
	}
	if !slices.Equal(ids, []string{"orders:cancel", "orders:read", "refunds:issue"}) {
		t.Errorf("scopes = %q", ids)
	}
	card := r.b.Card()
	for _, want := range []string{"Example Co. Support", "interface: " + r.srv.Brands()[0].InterfaceURL, "audience " + r.srv.Audience(), "orders:cancel — Cancel an order"} {
		if !strings.Contains(card, want) {
			t.Errorf("card summary lacks %q:\n%s", want, card)
		}
	}
	// Issue 31 (10): the card's description is the Brand's text, in the gutter.
	if d := strings.TrimSpace(r.s.Card.Card.Description); d == "" || !strings.Contains(card, "\n"+iostreams.Gutter(d, iostreams.GutterMark)+"\n") {
		t.Errorf("the description %q is not in the gutter:\n%s", d, card)
	}
}

// §5.3: when the browser cannot be opened the code is still shown, with the
// reason; cancelling the context (Esc) abandons the login.
func TestSection5_3_BrowserFailureStillShowsTheCode(t *testing.T) {
	r := newRig(t, demoprovider.Config{})
	r.b.opts.Open = func(string) (<-chan error, error) { return nil, errors.New("opener: xdg-open exited with status 3") }
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	var got tui.DeviceCode
	_, err := r.b.Login(ctx, []string{"orders:read"}, func(dc tui.DeviceCode) { got = dc; cancel() })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Login after cancel = %v, want context.Canceled", err)
	}
	if got.UserCode == "" || got.BrowserOpened || got.BrowserErr == nil || !strings.Contains(got.BrowserErr.Error(), "status 3") {
		t.Errorf("shown = %+v, want the code with the browser error", got)
	}
	if h := r.b.Header(); !h.ExpiresAt.IsZero() {
		t.Errorf("an abandoned login left a grant: %+v", h)
	}
}
