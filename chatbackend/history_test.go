package chatbackend

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/pact-cli/pact/demoprovider"
	"github.com/pact-cli/pact/tui"
)

// Issue 19, §4.3: a message whose chat was left while waiting is on record: the next chat's
// History shows it unanswered, and sending the same text again reuses its messageId, so the
// Brand's agent answers it once; then it is answered and no longer offered.
func TestIssue19_UnansweredAfterAQuitIsFetchedUnderItsMessageID(t *testing.T) {
	r := newRig(t, demoprovider.Config{AgentDelay: 400 * time.Millisecond})
	ctx := testCtx(t)
	wait, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { _, err := r.b.Send(wait, "hello"); errc <- err }()
	select {
	case <-r.rec.seen:
	case <-ctx.Done():
		t.Fatal("the message was never sent")
	}
	cancel() // the chat is left while waiting
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Send = %v", err)
	}
	first := r.rec.last()

	b := r.reopen()
	h := b.History()
	if len(h) != 1 || h[0].Role != tui.RoleUser || h[0].Text != "hello" || h[0].State != tui.Unanswered || h[0].ID != first.messageID {
		t.Fatalf("History after the quit = %+v, want hello unanswered with messageId %s", h, first.messageID)
	}
	if _, err := b.Send(ctx, "hello"); err != nil {
		t.Fatal(err)
	}
	if again := r.rec.last(); again.messageID != first.messageID {
		t.Fatalf("fetched with messageId %q, want %q", again.messageID, first.messageID)
	}
	h = r.reopen().History()
	if len(h) != 2 || h[0].State != tui.Delivered || h[1].Role != tui.RoleAgent {
		t.Fatalf("History once answered = %+v", h)
	}
}

// Issue 19: the draft and the queue kept by one chat are given to the next.
func TestIssue19_DraftKeptForTheNextChat(t *testing.T) {
	r := newRig(t, demoprovider.Config{})
	if err := r.b.SaveDraft("half a thought", []string{"one", "two"}); err != nil {
		t.Fatal(err)
	}
	in, q := r.reopen().LoadDraft()
	if in != "half a thought" || len(q) != 2 || q[0] != "one" || q[1] != "two" {
		t.Fatalf("LoadDraft = %q %q", in, q)
	}
}
