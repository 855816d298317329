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

// The growing reply is drawn as the whole text would be: kept blocks and
// the re-rendered last one give the lines of one rendering.
func TestLiveRenderMatchesAWholeRendering(t *testing.T) {
	f := &streamFake{fake: newFake(), steps: make(chan string)}
	h := newHarness(t, f, testOptions(), 80, 24)
	h.typeText("hello")
	h.key("enter")
	h.until("Send called", func() bool { return len(f.sentTexts()) == 1 })
	text := "# Title\n\nSome *text* here.\n\n- one\n- two\n\n```\ncode\n```\n\nlast words"
	for _, n := range []int{10, 30, 50, len(text)} {
		f.steps <- text[:n]
		want := text[:n]
		h.until("step", func() bool { return h.m.c.live != nil && h.m.c.live.e.turn.Text == want })
		c := h.m.c
		got := c.renderLive(c.live.e.turn, 80)
		body := c.md.render(clean(want), 78)
		if len(got) != len(body)+2 {
			t.Fatalf("at %d: %d lines, want %d:\n%s", n, len(got), len(body)+2, strings.Join(got, "\n"))
		}
		for i, l := range body {
			if l != "" && got[i+1] != "  "+l {
				t.Fatalf("at %d, line %d: %q, want %q", n, i, got[i+1], "  "+l)
			}
		}
	}
	close(f.steps)
	h.until("the complete reply", func() bool { return h.m.c.pending == nil })
}
