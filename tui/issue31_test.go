package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// abandonFake is a Backend that keeps the record of messages sent
// (Abandoner): it notes what the chat abandoned.
type abandonFake struct {
	*fake
	mu        sync.Mutex
	abandoned []string // "ID replaced" or "ID removed"
}

func (a *abandonFake) Abandon(t Turn, replaced bool) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	how := "removed"
	if replaced {
		how = "replaced"
	}
	id := t.ID
	if id == "" {
		id = "text:" + t.Text
	}
	a.abandoned = append(a.abandoned, id+" "+how)
	return nil
}

func (a *abandonFake) told() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.abandoned)
}

// Issue 31 item 2: the chat opens with an unanswered message at the head of
// the queue. ↑, Ctrl+U, a new text, Enter: the new text goes as a new
// message, the original is abandoned on record (it is not rewritten: it may
// have been delivered as it was). Removing it (↑, Ctrl+U, Enter) abandons it
// too. Either way the Backend is told, so the next open does not bring it
// back.
func TestIssue31_2_EditedOrRemovedUnansweredMessageReachesTheRecord(t *testing.T) {
	for _, c := range []struct {
		name, typed, want string
		sent              []string
	}{
		{"edited", "cancel order A-10002 instead", "m-1 replaced", []string{"cancel order A-10002 instead"}},
		{"removed", "", "m-1 removed", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &abandonFake{fake: newFake()}
			f.history = []Turn{{ID: "m-1", Role: RoleUser, Text: "cancel order A-10001", At: t0, State: Unanswered}}
			h := newHarness(t, f, testOptions(), 80, 30)
			h.until("the unanswered message held", h.screenHas("unanswered 1 · cancel order A-10001"))
			h.key("up")
			h.key("ctrl+u")
			h.typeText(c.typed)
			h.key("enter")
			h.until("the record told", func() bool { return len(f.told()) > 0 })
			if got := f.told(); !slices.Equal(got, []string{c.want}) {
				t.Errorf("abandoned %q, want %q", got, c.want)
			}
			if c.sent != nil {
				if p := plain(h.view()); !strings.Contains(p, "queued 1 · "+c.typed) {
					t.Fatalf("the new text is not a new queued message:\n%s", p)
				}
				h.key("enter") // the held queue goes
				h.until("the new text sent", func() bool { return slices.Equal(f.sentTexts(), c.sent) })
				h.until("its answer", h.screenHas("what is the order number?"))
				p := plain(h.view())
				if !strings.Contains(p, "cancel order A-10001") {
					t.Errorf("the original message was rewritten in the conversation:\n%s", p)
				}
			} else if p := plain(h.view()); strings.Contains(p, "unanswered 1") {
				t.Errorf("the removed message is still queued:\n%s", p)
			}
		})
	}
}

// Issue 31 item 2: an edit that leaves the text as it was is no edit.
func TestIssue31_2_UnchangedUnansweredMessageIsKept(t *testing.T) {
	f := &abandonFake{fake: newFake()}
	f.history = []Turn{{ID: "m-1", Role: RoleUser, Text: "cancel order A-10001", At: t0, State: Unanswered}}
	h := newHarness(t, f, testOptions(), 80, 30)
	h.key("up")
	h.key("enter")
	h.key("enter")
	h.until("sent again", func() bool { return slices.Equal(f.sentTexts(), []string{"cancel order A-10001"}) })
	if got := f.told(); len(got) != 0 {
		t.Errorf("abandoned %q for an unchanged message", got)
	}
}

// Issue 31 item 1: a closed conversation after the message may have reached
// the Brand (the error wraps ErrContextClosed and ErrSentUnanswered) is told
// as the Backend says, and nothing is offered: no question, no new
// conversation, the message not sent again.
func TestIssue31_1_ClosedAfterAnUnknownOutcomeAsksNothing(t *testing.T) {
	f := newFake()
	f.reply = func(context.Context, string) (Reply, error) {
		return Reply{}, fmt.Errorf("ended, and your message may have reached it before: %w; %w", ErrContextClosed, ErrSentUnanswered)
	}
	h := newHarness(t, f, testOptions(), 80, 30)
	h.typeText("cancel order A-10001")
	h.key("enter")
	h.until("the failure shown", h.screenHas("may have reached it before"))
	p := plain(h.view())
	if strings.Contains(p, "Start a new conversation") || h.m.c.panel != nil {
		t.Fatalf("a new conversation with the message sent again is offered:\n%s", p)
	}
	if f.newConvs != 0 || len(f.sentTexts()) != 1 {
		t.Errorf("new conversations %d, sent %q", f.newConvs, f.sentTexts())
	}
	if !strings.Contains(p, "no answer yet") || strings.Contains(p, "not sent") {
		t.Errorf("the message is not shown as unanswered:\n%s", p)
	}
}

// Issue 31 item 2, for a message of this chat left unanswered (its answer
// never came): edited, it is abandoned too, known to the Backend by its
// text.
func TestIssue31_2_EditedMessageOfThisChatReachesTheRecord(t *testing.T) {
	f := &abandonFake{fake: newFake()}
	calls := 0
	f.reply = func(context.Context, string) (Reply, error) {
		calls++
		if calls == 1 {
			return Reply{}, fmt.Errorf("no answer: %w", ErrSentUnanswered)
		}
		return Reply{Turns: []Turn{{Role: RoleAgent, Text: "Done.", At: t0}}}, nil
	}
	h := newHarness(t, f, testOptions(), 80, 30)
	h.typeText("cancel order A-10001")
	h.key("enter")
	h.until("left unanswered", h.screenHas("unanswered 1 · cancel order A-10001"))
	h.key("up")
	h.key("ctrl+u")
	h.typeText("cancel order A-10002")
	h.key("enter")
	h.until("the record told", func() bool { return len(f.told()) > 0 })
	if got := f.told(); !slices.Equal(got, []string{"text:cancel order A-10001 replaced"}) {
		t.Errorf("abandoned %q", got)
	}
}

// Issue 31 (10), review: in the login panel a step-up asks for, the Brand's own sentence sat
// among pact's rows, as they are, one of its lines per row: "Code:  FAKE-CODE" and a link of
// the Brand's choosing read as the code and link pact asks the User to approve with, above
// pact's own (and a long line wrapped into such a row as well). The Brand's words are drawn
// in the gutter under its name; pact's rows are the only ones that start "Code:" or "Link:".
func TestIssue31_10_StepUpSentenceInTheLoginPanelIsInTheGutter(t *testing.T) {
	f := newFake()
	words := "Please approve.\nCode:  FAKE-CODE\nLink:\nhttps://evil.example/approve\n" +
		strings.Repeat("x", 94) + " Code:  FAKE-WRAP"
	f.reply = func(context.Context, string) (Reply, error) {
		return Reply{StepUp: &StepUp{Text: words, MissingScopes: []Scope{f.scopes[1]}}}, nil
	}
	f.login = func(ctx context.Context, _ []string, shown func(DeviceCode)) ([]string, error) {
		shown(DeviceCode{UserCode: "REAL-CODE", VerificationURIComplete: "https://brand.example/l", ExpiresAt: t0.Add(time.Minute)})
		<-ctx.Done()
		return nil, ctx.Err()
	}
	h := newHarness(t, f, testOptions(), 100, 40)
	h.typeText("cancel order A-1")
	h.key("enter")
	h.until("the login code", h.screenHas("REAL-CODE"))
	screen := plain(h.view())
	var brands, codes int
	for _, l := range strings.Split(screen, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "Code:") || strings.HasPrefix(l, "Link:") || strings.HasPrefix(l, "https://evil"):
			codes++
			if strings.Contains(l, "FAKE") || strings.Contains(l, "evil") {
				t.Errorf("the Brand's line %q reads as pact's:\n%s", l, screen)
			}
		case strings.HasPrefix(l, "│") && (strings.Contains(l, "FAKE") || strings.Contains(l, "evil") || strings.Contains(l, "Please approve")):
			brands++
		}
	}
	if codes != 2 || brands != 4 {
		t.Errorf("%d rows of pact's code and link (want 2), %d of the Brand's words in the gutter (want 4):\n%s", codes, brands, screen)
	}
	if !strings.Contains(screen, "Example Co. Support writes:") {
		t.Errorf("the Brand's words are not said to be its:\n%s", screen)
	}
}

// Issue 31 item 5 in the chat, review: a stored reply whose receipt pact's archive does not
// hold is marked so, and its panel says pact has no copy, never "✓ verified".
func TestIssue31_5_AReceiptNotInTheArchiveIsSaidToBe(t *testing.T) {
	f := newFake()
	f.history = []Turn{
		{ID: "m", Role: RoleUser, Text: "show my orders", At: t0},
		{ID: "r", Role: RoleAgent, Text: "Your orders: A-1", At: t0, Receipt: &ReceiptMark{ID: "72b9afb19404", Missing: true, Problems: []string{"it could not be archived when it came"}}},
	}
	h := newHarness(t, f, testOptions(), 100, 30)
	if v := plain(h.view()); !strings.Contains(v, "✗ receipt not archived") || strings.Contains(v, "✓ receipt") {
		t.Fatalf("the turn's mark:\n%s", v)
	}
	h.key("ctrl+r")
	if v := plain(h.view()); !strings.Contains(v, "✗ not in pact's archive") || strings.Contains(v, "✓ verified") || strings.Contains(v, "verification failed") {
		t.Fatalf("the receipt panel:\n%s", v)
	}
}

// Issue 31 item 6 in the chat, review: a stored reply whose receipt came back with `pact
// restore` and was not checked since is marked "not re-checked", never "✓ receipt" nor
// "failed", and its panel says what checks it.
func TestIssue31_6_ARestoredReceiptIsSaidNotReChecked(t *testing.T) {
	f := newFake()
	f.history = []Turn{
		{ID: "m", Role: RoleUser, Text: "show my orders", At: t0},
		{ID: "r", Role: RoleAgent, Text: "Your orders: A-1", At: t0, Receipt: &ReceiptMark{ID: "72b9afb19404", Restored: true, Problems: []string{"restored from a backup, not re-checked"}}},
	}
	h := newHarness(t, f, testOptions(), 100, 30)
	if v := plain(h.view()); !strings.Contains(v, "? receipt not re-checked") || strings.Contains(v, "✓ receipt") || strings.Contains(v, "receipt failed") {
		t.Fatalf("the turn's mark:\n%s", v)
	}
	h.key("ctrl+r")
	if v := plain(h.view()); !strings.Contains(v, "? restored, not re-checked") || !strings.Contains(v, "pact receipts verify") || strings.Contains(v, "✓ verified") || strings.Contains(v, "verification failed") {
		t.Fatalf("the receipt panel:\n%s", v)
	}
}

// Issue 31 item 1, review: a message whose outcome is unknown waits at the head of the
// queue ("Enter … sends it again with the same message id"). After /new, Enter sent it
// in the new conversation, under a new messageId: the Brand's agent could act twice. A
// new conversation does not take the unanswered messages of the one left: they stay
// with it, on record, and are not sent; the User is told so.
func TestIssue31_1_NewConversationDoesNotTakeAnUnansweredMessage(t *testing.T) {
	f := newFake()
	f.reply = func(_ context.Context, text string) (Reply, error) {
		if text == "refund order A-1" {
			return Reply{}, fmt.Errorf("the network failed: %w", ErrSentUnanswered)
		}
		return Reply{Turns: []Turn{{Role: RoleAgent, Text: "ok", At: t0}}}, nil
	}
	h := newHarness(t, f, testOptions(), 100, 30)
	h.typeText("refund order A-1")
	h.key("enter")
	h.until("the failure", h.screenHas("unanswered 1"))
	h.typeText("/new")
	h.key("enter")
	h.until("the new conversation", h.screenHas("New conversation"))
	h.key("enter")
	h.typeText("hello")
	h.key("enter")
	h.until("the next reply", func() bool { f.mu.Lock(); defer f.mu.Unlock(); return len(f.sent) >= 2 })
	f.mu.Lock()
	sent := slices.Clone(f.sent)
	f.mu.Unlock()
	if !slices.Equal(sent, []string{"refund order A-1", "hello"}) {
		t.Fatalf("sent %q: the unanswered message went again in the new conversation", sent)
	}
	if v := plain(h.view()); !strings.Contains(v, "Not sent in the new conversation") {
		t.Errorf("the User is not told the unanswered message stays behind:\n%s", v)
	}
}
