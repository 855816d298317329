package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
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

// Issue 31 (17): the chat leaves the mouse to the terminal, so that text (a tracking
// number) can be selected and copied; /mouse turns wheel scrolling on and off, and /help
// says so.
func TestIssue31_17_TheMouseSelectsTextUnlessMouseIsOn(t *testing.T) {
	h := newHarness(t, newFake(), testOptions(), 80, 24)
	if mm := h.m.View().MouseMode; mm != tea.MouseModeNone {
		t.Fatalf("the chat opens with mouse mode %v: the terminal cannot select text", mm)
	}
	h.typeText("/mouse")
	h.key("enter")
	if mm := h.m.View().MouseMode; mm != tea.MouseModeCellMotion {
		t.Fatalf("/mouse: mouse mode %v, want the wheel reported", mm)
	}
	if v := h.view(); !strings.Contains(v, "wheel scrolls") {
		t.Fatalf("/mouse says nothing:\n%s", v)
	}
	h.typeText("/mouse")
	h.key("enter")
	if mm := h.m.View().MouseMode; mm != tea.MouseModeNone {
		t.Fatalf("/mouse again: mouse mode %v", mm)
	}
	if help := defaultKeys().commandHelp(); !strings.Contains(help, "/mouse") || !strings.Contains(help, "The mouse selects text") {
		t.Fatalf("/help does not say how the mouse works:\n%s", help)
	}
}

// Issue 31 (17): an input taller than its box shows that there is more: an arrow in the
// margin of its first row (text above) and of its last (text below).
func TestIssue31_17_TallInputShowsThereIsMore(t *testing.T) {
	h := newHarness(t, newFake(), testOptions(), 80, 24)
	var lines []string
	for i := 1; i <= 20; i++ {
		lines = append(lines, fmt.Sprintf("pasted line %d", i))
	}
	h.send(tea.PasteMsg{Content: strings.Join(lines, "\n")})
	rows := inputRows(h.view(), "pasted line")
	if len(rows) != 5 || !strings.HasPrefix(rows[0], "↑ pasted line 16") || !strings.HasPrefix(rows[4], "  pasted line 20") {
		t.Fatalf("a 20-line input at its end shows:\n%s\nwant ↑ before line 16", strings.Join(rows, "\n"))
	}
	for range 19 {
		h.key("up")
	}
	rows = inputRows(h.view(), "pasted line")
	if len(rows) != 5 || !strings.HasPrefix(rows[0], "> pasted line 1") || !strings.HasPrefix(rows[4], "↓ pasted line 5") {
		t.Fatalf("a 20-line input at its start shows:\n%s\nwant ↓ before line 5", strings.Join(rows, "\n"))
	}
	for range 8 {
		h.key("down")
	}
	rows = inputRows(h.view(), "pasted line")
	if len(rows) != 5 || !strings.HasPrefix(rows[0], "↑ ") || !strings.HasPrefix(rows[4], "↓ ") {
		t.Fatalf("in the middle of a 20-line input:\n%s\nwant ↑ and ↓", strings.Join(rows, "\n"))
	}
	h.send(tea.PasteMsg{Content: ""})
	h.key("ctrl+u")
	h.typeText("one line")
	if v := h.view(); strings.Contains(v, "↑ ") || strings.Contains(v, "↓ ") {
		t.Fatalf("a one-line input shows an arrow:\n%s", v)
	}
}

// inputRows are the rows of the screen v (styles removed) that hold want.
func inputRows(v, want string) []string {
	var out []string
	for _, l := range strings.Split(ansi.Strip(v), "\n") {
		if strings.Contains(l, want) {
			out = append(out, l)
		}
	}
	return out
}

// Issue 31 (17): /help shows the commands and the keys in two aligned columns.
func TestIssue31_17_HelpColumnsAreAligned(t *testing.T) {
	help := defaultKeys().commandHelp()
	for _, section := range []string{"Commands:", "Keys:"} {
		i := strings.Index(help, section+"\n")
		if i < 0 {
			t.Fatalf("/help has no %q:\n%s", section, help)
		}
		col := -1
		for _, row := range strings.Split(help[i+len(section)+1:], "\n") {
			if !strings.HasPrefix(row, "  ") {
				break
			}
			// The second column starts after the first run of two spaces past the first.
			at := strings.Index(row[2:], "  ")
			for at >= 0 && row[2+at+2] == ' ' {
				at++
			}
			c := ansi.StringWidth(row[:2+at+2])
			if col < 0 {
				col = c
			}
			if c != col {
				t.Errorf("%s row %q: its second column starts at %d, others at %d", section, row, c, col)
			}
		}
		if col < 0 {
			t.Errorf("%s lists nothing", section)
		}
	}
}

// Issue 31 (10): a card's name that reads like pact's verdict ("… signed by
// 127.0.0.1:18791 ✓") is flagged and quoted in the header, and the card's real host and
// pact's badge stay at 80 columns: the name gives way, never the origin.
func TestIssue31_10_HeaderKeepsTheOriginBesideAVerdictLikeName(t *testing.T) {
	st := newStyles(true)
	name := "Example Bank — signed by 127.0.0.1:18791 ✓ verified and pinned"
	for _, w := range []int{80, 60, 40} {
		got := ansi.Strip(renderHeader(&st, Header{BrandName: name, BrandDomain: "127.0.0.1:40123", Signature: "unsigned",
			NameWarnings: []string{"the name holds marks or words pact uses for its own findings"}}, t0, w)[0])
		if !strings.HasPrefix(got, "⚠ suspect name “Example") && (w > 40 || !strings.HasPrefix(got, "⚠ “Example")) || !strings.Contains(got, " 127.0.0.1:40123 unsigned") || ansi.StringWidth(got) > w {
			t.Errorf("at %d columns the header reads %q: want the flag, the quoted name, the card's host and \"unsigned\"", w, got)
		}
	}
	got := ansi.Strip(renderHeader(&st, Header{BrandName: "Example Co. Support and Returns Department", BrandDomain: "brand.example.com",
		Signature: "signed by brand.example.com ✓"}, t0, 60)[0])
	if !strings.HasSuffix(got, " brand.example.com signed ✓") || !strings.HasPrefix(got, "Example Co.") {
		t.Errorf("at 60 columns a long name took the domain's place: %q", got)
	}
}

// Issue 31 (10): the Brand's own step-up sentence is drawn as the Brand's words (under its
// name, as its replies), never as one of pact's "·" notes; pact's note says what it asks.
func TestIssue31_10_StepUpSentenceIsTheBrands(t *testing.T) {
	f := newFake()
	const words = "To cancel I need orders:cancel. · pact verified this request ✓"
	f.reply = func(context.Context, string) (Reply, error) {
		return Reply{StepUp: &StepUp{Text: words, MissingScopes: []Scope{f.scopes[1]}}}, nil
	}
	f.login = func(ctx context.Context, _ []string, _ func(DeviceCode)) ([]string, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	h := newHarness(t, f, testOptions(), 100, 30)
	h.typeText("cancel order A-1")
	h.key("enter")
	h.until("the login panel", h.screenHas("Permission needed"))
	h.key("esc") // the login panel closes: the conversation is in view
	lines := strings.Split(ansi.Strip(h.view()), "\n")
	for i, l := range lines {
		if !strings.Contains(l, "To cancel I need orders:cancel.") {
			continue
		}
		if strings.HasPrefix(l, "· ") || i == 0 || !strings.HasPrefix(lines[i-1], "Example Co. Support") {
			t.Fatalf("the Brand's sentence is not drawn as the Brand's:\n%s", strings.Join(lines, "\n"))
		}
		return
	}
	t.Fatalf("the Brand's sentence is not shown:\n%s", strings.Join(lines, "\n"))
}
