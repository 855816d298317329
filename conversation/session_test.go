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
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/pact-cli/pact/a2aclient"
	"github.com/pact-cli/pact/demoprovider"
	"github.com/pact-cli/pact/deviceflow"
	"github.com/pact-cli/pact/discovery"
	"github.com/pact-cli/pact/httpx"
	"github.com/pact-cli/pact/internal/testrun"
	"github.com/pact-cli/pact/jwks"
	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/secrets"
	"github.com/pact-cli/pact/store"
)

// env is a personal agent (profile + JWKS served over HTTP) registered with
// a running demo Provider.
type env struct {
	t      *testing.T
	srv    *demoprovider.Server
	p      *profile.Profile
	hc     *http.Client
	opts   Options
	brands []demoprovider.Brand
}

func newEnv(t *testing.T, cfg demoprovider.Config) *env {
	t.Helper()
	return newEnvIn(t, cfg, t.TempDir())
}

func newEnvIn(t *testing.T, cfg demoprovider.Config, dir string) *env {
	t.Helper()
	testrun.Parallel(t)
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
	hc := httpx.NewClient(httpx.Options{Timeout: 5 * time.Second})
	if cfg.PollInterval == 0 {
		cfg.PollInterval = time.Second
	}
	srv, err := demoprovider.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	if _, err := p.AddProvider(srv.URL(), srv.Audience()); err != nil {
		t.Fatal(err)
	}
	opts := NewOptions(p, hc)
	opts.Client.Sleep = func(context.Context, time.Duration) error { return nil }
	return &env{t: t, srv: srv, p: p, hc: hc, opts: opts, brands: srv.Brands()}
}

func (e *env) open(brand string) *Session {
	e.t.Helper()
	s, err := Open(context.Background(), e.opts, brand)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

func (e *env) send(s *Session, text string) *Result {
	e.t.Helper()
	r, err := s.Send(context.Background(), text)
	if err != nil {
		e.t.Fatalf("send %q: %v", text, err)
	}
	return r
}

func TestSection4_2_ContextContinuesAcrossSessions(t *testing.T) {
	e := newEnv(t, demoprovider.Config{})
	s := e.open(e.brands[0].SiteURL)
	r1 := e.send(s, "hello")
	if r1.ContextID == "" || !strings.Contains(r1.Text(), "order number") {
		t.Fatalf("first reply: %+v %q", r1, r1.Text())
	}
	// A new process: the stored context is continued.
	s2 := e.open(e.brands[0].SiteURL)
	if s2.ContextID() != r1.ContextID {
		t.Fatalf("context not continued: %q vs %q", s2.ContextID(), r1.ContextID)
	}
	r2 := e.send(s2, "A-88213")
	if r2.ContextID != r1.ContextID {
		t.Fatal("the Provider started a new context")
	}
	turns, err := s2.History()
	if err != nil || len(turns) != 4 || turns[0].Text != "hello" || turns[3].Role != "agent" {
		t.Fatalf("history = %+v, %v", turns, err)
	}
	// The other Brand has its own conversation.
	o := e.open(e.brands[1].SiteURL)
	if o.ContextID() != "" {
		t.Fatal("a Brand inherited another Brand's context")
	}
}

func TestSection4_2_ClosedContextIsForgotten(t *testing.T) {
	e := newEnv(t, demoprovider.Config{})
	s := e.open(e.brands[0].SiteURL)
	first := e.send(s, "bye")
	_, err := s.Send(context.Background(), "hello?")
	var closed *ClosedError
	if !errors.As(err, &closed) || closed.ContextID != first.ContextID || !a2aclient.IsReason(err, a2aclient.ReasonUnsupportedOperation) {
		t.Fatalf("want ClosedError for %s, got %v", first.ContextID, err)
	}
	if s.ContextID() != "" {
		t.Fatal("the closed context is still current")
	}
	list, _ := e.opts.Store.List()
	if len(list) != 1 || list[0].State != StateClosed {
		t.Fatalf("store = %+v", list)
	}
	r := e.send(s, "hello again")
	if r.ContextID == first.ContextID {
		t.Fatal("the new message went to the closed context")
	}
}

func TestSection4_3_RetryAfter500GetsStoredReplyAgentRunsOnce(t *testing.T) {
	e := newEnv(t, demoprovider.Config{FailReplies: 1})
	s := e.open(e.brands[0].SiteURL)
	e.send(s, "hello")
	runs := e.srv.AgentRuns()
	r := e.send(s, "A-88213")
	if r.Attempts != 2 {
		t.Fatalf("attempts = %d, want 2 (a 500, then the stored reply)", r.Attempts)
	}
	if got := e.srv.AgentRuns() - runs; got != 1 {
		t.Fatalf("the agent ran %d times for one message", got)
	}
}

func TestNotRegistered_ShowsProviderAdd(t *testing.T) {
	e := newEnv(t, demoprovider.Config{})
	if err := e.p.RemoveProvider(e.srv.URL()); err != nil {
		t.Fatal(err)
	}
	_, err := Open(context.Background(), e.opts, e.brands[0].SiteURL)
	if !errors.Is(err, ErrNotRegistered) || !strings.Contains(err.Error(), "pact --profile t provider add "+e.srv.URL()+" --audience") {
		t.Fatalf("got %v", err)
	}
}

func TestStore_ConcurrentSessionsLoseNoTurn(t *testing.T) {
	e := newEnv(t, demoprovider.Config{})
	s := e.open(e.brands[0].SiteURL)
	ctxID := e.send(s, "hello").ContextID
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := e.open(e.brands[0].SiteURL)
			s.UseContext(ctxID)
			if _, err := s.Send(context.Background(), "A-10001"); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	turns, err := e.opts.Store.Turns(e.brands[0].InterfaceURL, ctxID)
	if err != nil || len(turns) != 2+16 {
		t.Fatalf("%d turns stored, want 18: %v", len(turns), err)
	}
}

// login runs the device flow with the scripted person approving.
func (e *env) login(s *Session, jar http.CookieJar, scopes ...string) {
	e.t.Helper()
	_, err := s.Login(context.Background(), scopes, func(a *deviceflow.Authorization) {
		u := demoprovider.ScriptedUser{Username: "jane", Password: "jane-demo-pass", HTTPClient: &http.Client{Jar: jar, Timeout: 10 * time.Second}}
		go u.Visit(context.Background(), a.VerificationURIComplete)
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

func TestSection5_6_ReceiptVerifiedAndArchived(t *testing.T) {
	e := newEnv(t, demoprovider.Config{})
	s := e.open(e.brands[0].SiteURL)
	jar, _ := cookiejar.New(nil)
	e.login(s, jar, "orders:read")
	r := e.send(s, "show my orders")
	if r.Receipt == nil || !r.Receipt.Verified {
		t.Fatalf("receipt = %+v", r.Receipt)
	}
	items, _ := e.opts.Receipts.List("")
	if len(items) != 1 || !items[0].Verified {
		t.Fatalf("archive = %+v", items)
	}
}

// TestSection5_6_TamperedReceiptKeptApart puts a proxy between pact and the
// Provider that edits the receipt's claims: the message is delivered, the
// receipt is reported as failed and archived apart, never as verified.
func TestSection5_6_TamperedReceiptKeptApart(t *testing.T) {
	e := newEnv(t, demoprovider.Config{})
	target, _ := url.Parse(e.srv.URL())
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
			body = []byte(strings.Replace(string(body), `"lookup_orders"`, `"refund_everything"`, 1))
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
	// Route the session's requests through the proxy; URLs, and so the
	// token's aud, stay those of the Provider: the tamper is on the wire.
	s.opts.Client.HTTP = &http.Client{Transport: rewrite{from: e.srv.URL(), to: proxy.URL}, Timeout: 5 * time.Second}
	r := e.send(s, "show my orders")
	if r.Receipt == nil || r.Receipt.Verified || len(r.Receipt.Problems) == 0 {
		t.Fatalf("tampered receipt accepted: %+v", r.Receipt)
	}
	items, _ := e.opts.Receipts.List("")
	for _, it := range items {
		if it.Verified {
			t.Fatalf("a tampered receipt was archived as verified: %+v", it)
		}
	}
	if len(items) != 1 || len(items[0].Problems) == 0 {
		t.Fatalf("want the tampered receipt kept apart with its problems, got %+v", items)
	}
}

type rewrite struct{ from, to string }

func (rw rewrite) RoundTrip(r *http.Request) (*http.Response, error) {
	u := r.URL.String()
	if strings.HasPrefix(u, rw.from) {
		nu, _ := url.Parse(rw.to + strings.TrimPrefix(u, rw.from))
		r = r.Clone(r.Context())
		r.URL = nu
		r.Host = nu.Host
	}
	return http.DefaultTransport.RoundTrip(r)
}

func TestSuggestProviderURL(t *testing.T) {
	var c discovery.Card
	json.Unmarshal([]byte(`{}`), &c)
	c.InterfaceURL = "https://p.example.com/a2a/x"
	if got := SuggestProviderURL(&c); got != "https://p.example.com" {
		t.Fatal(got)
	}
}

// countingTransport counts message:send requests.
type countingTransport struct {
	mu    sync.Mutex
	n     int
	inner http.RoundTripper
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasSuffix(r.URL.Path, "/message:send") {
		c.mu.Lock()
		c.n++
		c.mu.Unlock()
	}
	return c.inner.RoundTrip(r)
}

func (c *countingTransport) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// §4.2, §4.3, §6: an error answer is final. A context the Provider does not
// know (after a restart) gets INVALID_PARAMS once, reported at once as a
// stale conversation, also when the same message is sent again under its
// messageId: no wait-and-retry as if it were still being processed.
func TestSection4_3_ErrorAnswerIsFinal_UnknownContextNotRetried(t *testing.T) {
	e := newEnv(t, demoprovider.Config{})
	ct := &countingTransport{inner: e.hc.Transport}
	hc := *e.hc
	hc.Transport = ct
	e.opts.Client = &a2aclient.Client{HTTP: &hc}
	s := e.open(e.brands[0].SiteURL)
	s.UseContext("ctx-the-provider-forgot")

	id := NewMessageID()
	_, err := s.SendID(context.Background(), "where is my order?", id)
	var stale *StaleContextError
	if !errors.As(err, &stale) || stale.Resent {
		t.Fatalf("err = %v, want a *StaleContextError (first send)", err)
	}
	if n := ct.count(); n != 1 {
		t.Fatalf("%d requests for one INVALID_PARAMS answer, want 1", n)
	}
	if msg := err.Error(); strings.Contains(msg, "INVALID_PARAMS") || strings.Contains(msg, "HTTP 400") || strings.Contains(msg, "Unknown contextId") || !strings.Contains(msg, "--new") {
		t.Errorf("human message = %q", msg)
	}
	if d := stale.Detail(); !strings.Contains(d, "INVALID_PARAMS") || !strings.Contains(d, "ctx-the-provider-forgot") {
		t.Errorf("detail = %q", d)
	}

	// The same message again (the User pressed Enter to send it again).
	_, err = s.SendID(context.Background(), "where is my order?", id)
	if !errors.As(err, &stale) || !stale.Resent {
		t.Fatalf("err = %v, want a *StaleContextError for a resent message", err)
	}
	if n := ct.count(); n != 2 {
		t.Fatalf("%d requests after sending again, want 2: the error answer was retried", n)
	}

	// A new conversation works.
	if err := s.StartNew(); err != nil {
		t.Fatal(err)
	}
	if r := e.send(s, "where is my order?"); r.ContextID == "" || r.ContextID == "ctx-the-provider-forgot" {
		t.Fatalf("new conversation contextId = %q", r.ContextID)
	}
}

// A stored conversation the Provider answers it does not know is recorded
// as unknown (pact conversations shows it so, not as open) and is not
// continued by the next run.
func TestStaleContextIsRecordedUnknown(t *testing.T) {
	e := newEnv(t, demoprovider.Config{})
	s := e.open(e.brands[0].SiteURL)
	sum := Summary{Brand: s.Card.URL, BrandName: s.Card.Name(), InterfaceURL: s.Card.InterfaceURL,
		ContextID: "ctx-the-provider-forgot", LastMessageAt: time.Now(), State: StateOpen}
	if err := e.opts.Store.Append(sum, Turn{MessageID: NewMessageID(), Role: "user", Text: "hi", At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	s = e.open(e.brands[0].SiteURL)
	if s.ContextID() != "ctx-the-provider-forgot" {
		t.Fatalf("stored conversation not continued: %q", s.ContextID())
	}
	_, err := s.Send(context.Background(), "where is my order?")
	var stale *StaleContextError
	if !errors.As(err, &stale) {
		t.Fatalf("err = %v, want a *StaleContextError", err)
	}
	list, err := e.opts.Store.List()
	if err != nil || len(list) != 1 || list[0].State != StateUnknown {
		t.Fatalf("List = %+v, %v; want one conversation in state %q", list, err, StateUnknown)
	}
	if s := e.open(e.brands[0].SiteURL); s.ContextID() != "" {
		t.Fatalf("a conversation unknown to the Provider is continued: %q", s.ContextID())
	}
}
