package agent

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pact-cli/pact/a2aclient"
	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/delegation"
	"github.com/pact-cli/pact/demoprovider"
)

// overWire is a Conversation whose answers cross the wire as a server
// profile's do (what agentclient will rebuild): facts, every stream event,
// each SendStream's Result and error, the login's start and polls go
// through their JSON forms. The turn (SendID) runs over it unchanged.
type overWire struct {
	Conversation
	t      *testing.T
	events int // stream events relayed
}

func roundTrip[T any](t *testing.T, v T) T {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return out
}

func (w *overWire) Facts() Facts { return roundTrip(w.t, w.Conversation.Facts()) }

func (w *overWire) SendStream(ctx context.Context, text, messageID string, on a2aclient.StreamFunc) (*conversation.Result, error) {
	var relay a2aclient.StreamFunc
	if on != nil {
		relay = func(ev a2aclient.StreamEvent) {
			b, err := EncodeStreamEvent(ev)
			if err != nil {
				w.t.Fatal(err)
			}
			back, err := DecodeStreamEvent(b)
			if err != nil {
				w.t.Fatal(err)
			}
			w.events++
			on(back)
		}
	}
	res, err := w.Conversation.SendStream(ctx, text, messageID, relay)
	return roundTrip(w.t, Answer(res, err)).Returned()
}

func (w *overWire) StartLogin(ctx context.Context, scopes []string) (*LoginStart, error) {
	s, err := w.Conversation.StartLogin(ctx, scopes)
	if err != nil {
		return nil, roundTrip(w.t, Answer(nil, err)).Error.Err()
	}
	return roundTrip(w.t, s), nil
}

func (w *overWire) PollLogin(ctx context.Context, id string) (*LoginPoll, error) {
	p, err := w.Conversation.PollLogin(ctx, id)
	if err != nil {
		return nil, roundTrip(w.t, Answer(nil, err)).Error.Err()
	}
	return roundTrip(w.t, p), nil
}

// Issue 29 (one core), PACT §5.5: the turn of a server profile is the same
// SendID over a Conversation whose answers crossed the wire: the step-up
// comes back as *StepUpPending's reply, the User is asked (NeedsScopes) and
// logs in by StartLogin and PollLogin, the message goes again under a new
// messageId, and the reply's receipt is verified; the reply streams event
// by event.
func TestIssue29_ATurnOverTheWireAsksLogsInAndSendsAgain(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	opts, brand := demo(t)
	s, err := Open(ctx, opts, brand.SiteURL, Start{})
	if err != nil {
		t.Fatal(err)
	}
	c := &overWire{Conversation: InProcess(s), t: t}
	approve := func(ctx context.Context, scopes ...string) *delegation.Grant {
		g, err := Login(ctx, c, scopes, func(l *LoginStart) {
			if l.UserCode == "" || l.VerificationURIComplete == "" || !slices.Equal(l.Scopes, scopes) {
				t.Errorf("login start %+v", l)
			}
			go demoprovider.ScriptedUser{Username: "jane", Password: "jane-demo-pass"}.Visit(ctx, l.VerificationURIComplete)
		})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	approve(ctx, "orders:read")

	var events []string
	res, err := Send(ctx, c, "please cancel order A-10001", Front{
		NeedsScopes: func(ctx context.Context, su *StepUp) (*delegation.Grant, error) {
			events = append(events, "needs "+strings.Join(su.IDs(), " "))
			if su.Result == nil || su.Result.Task == nil || su.Scopes[0].Description == "" {
				t.Errorf("step-up over the wire: %+v", su)
			}
			return approve(ctx, su.IDs()...), nil
		},
		Resending: func() { events = append(events, "again") },
		Stream:    func(a2aclient.StreamEvent) {},
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"needs orders:cancel", "again"}; !slices.Equal(events, want) {
		t.Fatalf("events %v, want %v", events, want)
	}
	if res.Receipt == nil || !res.Receipt.Verified || !strings.Contains(res.Text(), "cancelled") {
		t.Fatalf("reply %q, receipt %+v", res.Text(), res.Receipt)
	}
	if s.Card.Streams() && c.events == 0 {
		t.Error("the Brand streams, and no event crossed")
	}
}

// Issue 29, PACT §4.2, §4.3: over the wire too, a closed conversation is
// the Restart event (a new conversation, a new messageId), and one found
// closed after an unknown outcome is never restarted: the
// *conversation.OutcomeUnknownError comes back with its members.
func TestIssue29_AClosedConversationOverTheWire(t *testing.T) {
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
	c := &overWire{Conversation: InProcess(s), t: t}
	bye, err := Send(ctx, c, "bye", Front{})
	if err != nil {
		t.Fatal(err)
	}
	var told *conversation.ClosedError
	res, err := SendID(ctx, c, "hello again", "m-first", Front{Restart: func(cl *conversation.ClosedError) bool { told = cl; return true }})
	if err != nil || told == nil || told.ContextID != bye.ContextID {
		t.Fatalf("restart: %v (told %+v)", err, told)
	}
	if res.ContextID == bye.ContextID || res.MessageID == "m-first" {
		t.Fatalf("sent again in %q as %q: want a new conversation and messageId", res.ContextID, res.MessageID)
	}
	lossy.mu.Lock()
	lossy.armed, lossy.sends = true, lossy.sends[:1]
	lossy.mu.Unlock()
	asked := false
	_, err = Send(ctx, c, "please cancel order A-10001", Front{Restart: func(*conversation.ClosedError) bool { asked = true; return true }})
	var unknown *conversation.OutcomeUnknownError
	if !errors.As(err, &unknown) || !unknown.Closed || unknown.MessageID == "" || asked {
		t.Fatalf("err = %v (asked %v), want the *conversation.OutcomeUnknownError of a closed conversation", err, asked)
	}
}
