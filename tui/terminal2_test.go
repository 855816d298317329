package tui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// A message submitted while "start a new conversation? (y/n)" is open is sent after the
// one that failed, in the new conversation: "y" does not throw it away.
func TestQuestionYesKeepsWhatWasSubmittedMeanwhile(t *testing.T) {
	f := newFake()
	calls := 0
	f.reply = func(ctx context.Context, text string) (Reply, error) {
		calls++
		if calls == 1 {
			return Reply{}, fmt.Errorf("wrapped: %w", ErrContextUnknown)
		}
		return Reply{Turns: []Turn{{Role: RoleAgent, Text: "got " + text, At: t0}}}, nil
	}
	h := newHarness(t, f, testOptions(), 80, 24)
	h.typeText("where is my order?")
	h.key("enter")
	h.until("question", h.screenHas("(y/n)"))
	h.typeText("hello sunny")
	h.key("enter")
	h.typeText("y")
	h.until("both replies", h.screenHas("got hello sunny"))
	if got := f.sentTexts(); !slices.Equal(got, []string{"where is my order?", "where is my order?", "hello sunny"}) {
		t.Fatalf("sent %q", got)
	}
}

// "n" also keeps it: the failed message and what was submitted meanwhile are back in the
// input, in order.
func TestQuestionNoKeepsWhatWasSubmittedMeanwhile(t *testing.T) {
	f := newFake()
	f.reply = func(ctx context.Context, text string) (Reply, error) {
		return Reply{}, fmt.Errorf("x: %w", ErrContextClosed)
	}
	h := newHarness(t, f, testOptions(), 80, 24)
	h.typeText("hi")
	h.key("enter")
	h.until("question", h.screenHas("(y/n)"))
	h.typeText("hello sunny")
	h.key("enter")
	h.typeText("n")
	h.until("the answer", func() bool { return h.m.c.panel == nil })
	if got := h.m.c.in.value(); got != "hi\nhello sunny" {
		t.Fatalf("input after n = %q", got)
	}
}

// Only a discrete key press answers the question: "yes please" arriving in one burst with
// an empty input is text, and the question stays open; a y alone then answers.
func TestQuestionBurstIsText(t *testing.T) {
	f := newFake()
	calls := 0
	f.reply = func(ctx context.Context, text string) (Reply, error) {
		calls++
		if calls == 1 {
			return Reply{}, fmt.Errorf("x: %w", ErrContextClosed)
		}
		return Reply{Turns: []Turn{{Role: RoleAgent, Text: "got " + text, At: t0}}}, nil
	}
	h := newHarness(t, f, testOptions(), 80, 24)
	h.typeText("hi")
	h.key("enter")
	h.until("question", h.screenHas("(y/n)"))
	h.typeText("yes please") // one burst: every key before the y's settle time ends
	if got := h.m.c.in.value(); got != "yes please" {
		t.Fatalf("input after the burst = %q, want \"yes please\"", got)
	}
	settled := time.Now().Add(4 * answerSettle)
	h.until("the settle time", func() bool { return time.Now().After(settled) })
	if h.m.c.panel == nil || f.newConvs != 0 {
		t.Fatal("the burst answered the question")
	}
	h.key("enter") // queued while the question is open
	h.typeText("y")
	h.until("reply", h.screenHas("got yes please"))
	if got := f.sentTexts(); !slices.Equal(got, []string{"hi", "hi", "yes please"}) || f.newConvs != 1 {
		t.Fatalf("sent %q, newConvs %d", got, f.newConvs)
	}
}

// A send that fails on the network puts the message back in the input, like Esc and a
// dead delegation do.
func TestNetworkFailurePutsMessageBack(t *testing.T) {
	f := newFake()
	f.reply = func(ctx context.Context, text string) (Reply, error) {
		return Reply{}, errors.New("could not reach the Provider (connection refused)")
	}
	h := newHarness(t, f, testOptions(), 80, 24)
	h.typeText("where is A-1?")
	h.key("enter")
	h.until("failure", h.screenHas("could not reach the Provider"))
	if got := h.m.c.in.value(); got != "where is A-1?" {
		t.Fatalf("input after the failure = %q, want the message", got)
	}
	if !strings.Contains(plain(h.view()), "back in the input") {
		t.Errorf("nothing says the message is back:\n%s", plain(h.view()))
	}
}
