package agent

import (
	"slices"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/discovery"
	"github.com/pact-cli/pact/receipts"
)

// stepUpOn is a TASK_STATE_AUTH_REQUIRED reply naming missing, on a card
// whose delegation scheme declares orders:read and orders:cancel.
func stepUpOn(missing ...any) (*conversation.Session, *conversation.Result) {
	card := &discovery.Card{URL: "https://shop.example/.well-known/agent-card.json",
		Delegation: &discovery.Delegation{Scopes: map[string]string{"orders:read": "See your orders", "orders:cancel": "Cancel an order"}}}
	task := &a2a.Task{ID: "t-1", ContextID: "ctx-1", Metadata: map[string]any{"pact.missingScopes": missing},
		Status: a2a.TaskStatus{State: a2a.TaskStateAuthRequired, Message: a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("I need more permission"))}}
	return &conversation.Session{Card: card}, &conversation.Result{Task: task}
}

// PACT §5.2, §5.5: a step-up's ids are split by the card; only declared
// ones are ever asked for or put into a command, with their descriptions;
// an undeclared id is flagged, quoted, and makes the step-up not askable.
func TestSection5_5_StepUpSplitsTheScopesByTheCard(t *testing.T) {
	evil := "orders:read$(id>/tmp/PWNED)"
	s, res := stepUpOn("orders:cancel", evil)
	su := NewStepUp(s, res)
	if su == nil || su.Text != "I need more permission" || su.Result != res {
		t.Fatalf("NewStepUp = %+v", su)
	}
	if !slices.Equal(su.Scopes, []Scope{{"orders:cancel", "Cancel an order"}}) || !slices.Equal(su.Unknown, []string{evil}) {
		t.Fatalf("scopes %v, unknown %v", su.Scopes, su.Unknown)
	}
	if su.Askable() {
		t.Fatal("a step-up naming an undeclared id is askable")
	}
	words := (&StepUpPending{StepUp: su}).Error()
	if !strings.Contains(words, "run `pact login https://shop.example --scope orders:cancel` and send again") || // the origin (issue 31 item 17)
		!strings.Contains(words, `does not list ("orders:read$(id>/tmp/PWNED)")`) || strings.Contains(words, "--scope "+evil) {
		t.Fatalf("words = %s", words)
	}

	s, res = stepUpOn("orders:cancel")
	if su := NewStepUp(s, res); !su.Askable() || su.Undeclared() != "" {
		t.Fatalf("a declared scope alone: askable %v, undeclared %q", su.Askable(), su.Undeclared())
	}
	s, res = stepUpOn()
	if su := NewStepUp(s, res); su.Askable() || !strings.Contains(su.Words(LoginCommand(s.Card.URL), "say so"), "did not say which; say so") {
		t.Fatalf("no scope named: askable %v, words %q", su.Askable(), su.Words(LoginCommand(s.Card.URL), "say so"))
	}
	if NewStepUp(s, &conversation.Result{Message: a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("hi"))}) != nil {
		t.Fatal("a message is a step-up")
	}
}

// PACT §5.6: one tally of receipts checked again, in one set of words.
func TestSection5_6_TallyCountsEachOutcomeOnce(t *testing.T) {
	tl := Count([]receipts.Check{{Verified: true}, {Unchecked: true}, {}, {Verified: true}})
	if tl != (Tally{Verified: 2, Failed: 1, Unchecked: 1}) || tl.Total() != 4 || tl.OK() {
		t.Fatalf("tally = %+v", tl)
	}
	if tl.String() != "2 verified, 1 failed, 1 not checked" {
		t.Fatalf("words = %q", tl)
	}
	if !Count([]receipts.Check{{Verified: true}}).OK() || Count([]receipts.Check{{Unchecked: true}}).OK() {
		t.Fatal("OK: only every receipt verified")
	}
}

// The CLI contract's naming rule: name and domain of the card URL; a
// receipt with neither name nor card URL says whose host it is.
func TestLabelsNameTheBrandByItsDomain(t *testing.T) {
	for _, c := range []struct{ name, card, u, want string }{
		{"Shop", "https://shop.example/.well-known/agent-card.json", "https://prov.example/a2a/1", "Shop (shop.example)"},
		{"", "", "https://prov.example/a2a/1", "prov.example"},
		{"", "", "not a url", "not a url"},
	} {
		if got := Label(c.name, c.card, c.u); got != c.want {
			t.Errorf("Label(%q, %q, %q) = %q, want %q", c.name, c.card, c.u, got, c.want)
		}
	}
	if got := ReceiptLabel(conversation.BrandRef{}, "https://prov.example/a2a/1"); got != "unknown Brand (at provider prov.example)" {
		t.Errorf("ReceiptLabel = %q", got)
	}
}

// §5.3: the User may grant fewer scopes than asked; the grant may hold more.
func TestSection5_3_CompareGrant(t *testing.T) {
	g := CompareGrant([]string{"orders:cancel", "refunds:issue"}, []string{"orders:read", "orders:cancel"})
	if !slices.Equal(g.Missing, []string{"refunds:issue"}) || !slices.Equal(g.Also, []string{"orders:read"}) {
		t.Fatalf("CompareGrant = %+v", g)
	}
	if g := CompareGrant([]string{"a"}, []string{"a"}); g.Missing != nil || g.Also != nil {
		t.Fatalf("all granted: %+v", g)
	}
}
