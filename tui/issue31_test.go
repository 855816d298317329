package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// Issue 31 (4): a bracketed paste with escape sequences in it is kept as pasted: the input
// shows each ESC as ␛, the status line says so, and Enter sends the text exactly.
func TestIssue31_4_PasteWithEscapesIsShownAndSentAsPasted(t *testing.T) {
	f := newFake()
	h := newHarness(t, f, testOptions(), 80, 24)
	h.send(tea.PasteMsg{Content: "a " + pastedEsc + "[31mred" + pastedEsc + "[0m"})
	if v := h.view(); !strings.Contains(v, "a ␛[31mred␛[0m") || !strings.Contains(v, "control characters") {
		t.Fatalf("the paste is not shown visibly:\n%s", v)
	}
	h.key("enter")
	h.until("the send", func() bool { f.mu.Lock(); defer f.mu.Unlock(); return len(f.sent) == 1 })
	if f.sent[0] != "a \x1b[31mred\x1b[0m" {
		t.Fatalf("sent %q", f.sent[0])
	}
}
