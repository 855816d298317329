package tui

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// Review of issue 19: a message that fails again and again says how to go on once, not
// after every other failure ("said once, not after every failure in a row").
func TestReview2_QueueWaitsHintSaidOnceForFailuresInARow(t *testing.T) {
	f := newFake()
	f.reply = func(context.Context, string) (Reply, error) {
		return Reply{}, errors.New("the connection was refused")
	}
	h := newHarness(t, f, testOptions(), 80, 30)
	h.typeText("hello")
	h.key("enter")
	for i := 1; i <= 4; i++ {
		h.until("the failure", func() bool { return h.m.c.pending == nil && h.m.c.paused && len(f.sentTexts()) == i })
		if i < 4 {
			h.key("enter") // empty input: the held message again
		}
	}
	const how = "The queue waits"
	n := 0
	for _, e := range h.m.c.sb.entries {
		if strings.HasPrefix(e.turn.Text, how) {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%q said %d times for 4 failures in a row, want once", how, n)
	}
}
