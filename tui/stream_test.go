package tui

import (
	"context"
	"strings"
	"testing"
)

// streamFake is a fake whose Send streams: it hands the chat each text of
// steps, waiting for the test between them, then answers with the reply.
type streamFake struct {
	*fake
	steps chan string
}

func (f *streamFake) SendStreaming(ctx context.Context, text string, partial func(string)) (Reply, error) {
	f.mu.Lock()
	f.sent = append(f.sent, text)
	f.mu.Unlock()
	var last string
	for s := range f.steps {
		last = s
		partial(s)
	}
	return Reply{Turns: []Turn{{ID: "r-1", Role: RoleAgent, Text: last, At: t0}}}, nil
}

func (f *streamFake) ResendStreaming(ctx context.Context, partial func(string)) (Reply, error) {
	return f.SendStreaming(ctx, "", partial)
}

// A streamed reply grows on screen as it arrives; the finished paragraphs
// are rendered once and kept while the unfinished tail is drawn again;
// when the reply is complete it takes the growing turn's place.
func TestStreamedReplyGrowsAndKeepsItsFinishedHead(t *testing.T) {
	f := &streamFake{fake: newFake(), steps: make(chan string)}
	h := newHarness(t, f, testOptions(), 80, 24)
	h.typeText("hello")
	h.key("enter")
	h.until("Send called", func() bool { return len(f.sentTexts()) == 1 })
	step := func(s, want string) {
		t.Helper()
		f.steps <- s
		h.until("the screen shows "+want, func() bool { return strings.Contains(plain(h.view()), want) })
	}
	step("First para", "First para")
	if !strings.Contains(plain(h.view()), "Example Co. Support …") {
		t.Errorf("the growing reply is not marked:\n%s", plain(h.view()))
	}
	step("First paragraph done.\n\nSecond", "Second")
	heads := h.m.c.live.renders
	step("First paragraph done.\n\nSecond one grows", "Second one grows")
	step("First paragraph done.\n\nSecond one grows more", "grows more")
	if got := h.m.c.live.renders; got != heads {
		t.Errorf("the finished head was rendered %d more times while only the tail changed", got-heads)
	}
	step("First paragraph done.\n\nSecond one grows more.\n\nThird", "Third")
	if h.m.c.live.renders != heads+1 {
		t.Errorf("a new finished paragraph should render the head once more: %d → %d", heads, h.m.c.live.renders)
	}
	close(f.steps)
	h.until("the complete reply", func() bool { return h.m.c.pending == nil })
	p := plain(h.view())
	if h.m.c.live != nil || strings.Contains(p, "Support …") || strings.Count(p, "Third") != 1 {
		t.Fatalf("the growing turn was not replaced by the reply:\n%s", p)
	}
}

func TestSplitFinished(t *testing.T) {
	for _, c := range []struct{ in, head, tail string }{
		{"one", "", "one"},
		{"one\n\ntwo", "one", "two"},
		{"one\n\ntwo\n\n", "one\n\ntwo", ""},
		{"a\n\n```\ncode\n\nmore", "a", "```\ncode\n\nmore"},
		{"a\n\n```\ncode\n\nmore\n```\n\nb", "a\n\n```\ncode\n\nmore\n```", "b"},
	} {
		h, tl := splitFinished(c.in)
		if h != c.head || tl != c.tail {
			t.Errorf("splitFinished(%q) = %q, %q; want %q, %q", c.in, h, tl, c.head, c.tail)
		}
	}
}
