package agent

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/delegation"
	"github.com/pact-cli/pact/demoprovider"
	"github.com/pact-cli/pact/deviceflow"
	"github.com/pact-cli/pact/httpx"
	"github.com/pact-cli/pact/internal/testrun"
	"github.com/pact-cli/pact/jwks"
	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/secrets"
	"github.com/pact-cli/pact/store"
)

// demo is a profile registered with a running demo Provider on 127.0.0.1
// (its own JWKS served by an httptest server) and the Options of its
// sessions.
func demo(t *testing.T) (conversation.Options, demoprovider.Brand) {
	t.Helper()
	testrun.Parallel(t)
	dir := t.TempDir()
	dirs := store.Dirs{Config: filepath.Join(dir, "config"), Data: filepath.Join(dir, "data")}
	sec, err := secrets.Open("file", dirs.Data, 0)
	if err != nil {
		t.Fatal(err)
	}
	p := &profile.Profile{Name: "t", Dirs: dirs, Secrets: sec}
	var issuer string
	pa := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _ := p.Load()
		jwks.Handler(issuer, issuer+"/.well-known/jwks.json", func() (jose.JSONWebKeySet, error) { return c.JWKS(), nil }).ServeHTTP(w, r)
	}))
	t.Cleanup(pa.Close)
	issuer = pa.URL
	if _, err := p.Init(issuer, "", "ES256", false); err != nil {
		t.Fatal(err)
	}
	srv, err := demoprovider.Start(context.Background(), demoprovider.Config{PollInterval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	if _, err := p.AddProvider(srv.URL(), srv.Audience()); err != nil {
		t.Fatal(err)
	}
	return conversation.NewOptions(p, httpx.NewClient(httpx.Options{Timeout: 5 * time.Second})), srv.Brands()[0]
}

// login approves scopes on s as the demo's scripted User.
func login(ctx context.Context, t *testing.T, s *conversation.Session, scopes ...string) *delegation.Grant {
	t.Helper()
	g, err := s.Login(ctx, scopes, func(a *deviceflow.Authorization) {
		go demoprovider.ScriptedUser{Username: "jane", Password: "jane-demo-pass"}.Visit(ctx, a.VerificationURIComplete)
	})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// PACT §5.5, §5.6: one turn through the core. The step-up is the
// NeedsScopes event, with the card's description of the missing scope;
// once granted, Resending is told and the message goes again in the same
// conversation under a new messageId, and the reply's receipt is verified.
// Waiting brackets each of the two requests.
func TestSection5_5_ATurnAsksForTheScopesThenSendsAgain(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	opts, brand := demo(t)
	s, err := Open(ctx, opts, brand.SiteURL, Start{})
	if err != nil {
		t.Fatal(err)
	}
	login(ctx, t, s, "orders:read")

	var events []string
	var asked *StepUp
	res, err := Send(ctx, InProcess(s), "please cancel order A-10001", Front{
		Waiting: func(Conversation) func() {
			events = append(events, "wait")
			return func() { events = append(events, "done") }
		},
		NeedsScopes: func(ctx context.Context, su *StepUp) (*delegation.Grant, error) {
			events = append(events, "needs "+strings.Join(su.IDs(), " "))
			asked = su
			return login(ctx, t, s, su.IDs()...), nil
		},
		Resending: func() { events = append(events, "again") },
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"wait", "done", "needs orders:cancel", "again", "wait", "done"}; !slices.Equal(events, want) {
		t.Fatalf("events %v, want %v", events, want)
	}
	if asked.Scopes[0].Description != "Cancel an order that has not shipped" || asked.Result.ContextID != res.ContextID || asked.Result.MessageID == res.MessageID {
		t.Fatalf("step-up %+v then %+v: want the card's description, the same context, a new messageId", asked, res)
	}
	if res.Receipt == nil || !res.Receipt.Verified || !strings.Contains(res.Text(), "cancelled") {
		t.Fatalf("reply %q, receipt %+v", res.Text(), res.Receipt)
	}
}

// §5.5: a step-up nobody answers ends the turn pending, with its reply; a
// login that grants less than asked ends it with NotGrantedError (a
// consent outcome), and the message is not sent again.
func TestSection5_5_AStepUpLeftOrRefusedIsNotSentAgain(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	opts, brand := demo(t)
	s, err := Open(ctx, opts, brand.SiteURL, Start{})
	if err != nil {
		t.Fatal(err)
	}
	login(ctx, t, s, "orders:read")

	res, err := Send(ctx, InProcess(s), "please cancel order A-10001", Front{})
	var pending *StepUpPending
	if !errors.As(err, &pending) || pending.StepUp.Result != res || !slices.Equal(pending.StepUp.IDs(), []string{"orders:cancel"}) {
		t.Fatalf("no answer: %v (%+v)", err, res)
	}
	resent := false
	_, err = Send(ctx, InProcess(s), "please cancel order A-10001", Front{
		NeedsScopes: func(context.Context, *StepUp) (*delegation.Grant, error) {
			return &delegation.Grant{Scopes: []string{"orders:read"}}, nil
		},
		Resending: func() { resent = true },
	})
	var ng *NotGrantedError
	if !errors.As(err, &ng) || !errors.Is(err, deviceflow.ErrAccessDenied) || resent {
		t.Fatalf("less granted: %v, sent again %v", err, resent)
	}
}

// §4.2: a conversation the Provider closed is the Restart event; true sends
// the message again in a new conversation under a new messageId, false ends
// the turn with the *conversation.ClosedError.
func TestSection4_2_AClosedConversationIsTheRestartEvent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	opts, brand := demo(t)
	s, err := Open(ctx, opts, brand.SiteURL, Start{})
	if err != nil {
		t.Fatal(err)
	}
	bye, err := Send(ctx, InProcess(s), "bye", Front{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Send(ctx, InProcess(s), "hello again", Front{Restart: func(*conversation.ClosedError) bool { return false }})
	var closed *conversation.ClosedError
	if !errors.As(err, &closed) || closed.ContextID != bye.ContextID {
		t.Fatalf("declined restart: %v, want the ClosedError of %s", err, bye.ContextID)
	}
	if _, err := Send(ctx, InProcess(s), "bye", Front{}); err != nil { // a new conversation, closed again
		t.Fatal(err)
	}
	var told *conversation.ClosedError
	res, err := SendID(ctx, InProcess(s), "hello again", "m-first", Front{Restart: func(c *conversation.ClosedError) bool { told = c; return true }})
	if err != nil || told == nil {
		t.Fatalf("restart: %v (told %v)", err, told)
	}
	if res.ContextID == "" || res.ContextID == told.ContextID || res.MessageID == "m-first" {
		t.Fatalf("sent again in context %q as %q after %s closed: want a new conversation and messageId", res.ContextID, res.MessageID, told.ContextID)
	}
}
