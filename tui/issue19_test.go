package tui

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// Issue 19: a command is a single line whose first word is a known command; anything else
// is text, sent as typed; a single-line unknown /word is neither.
func TestParseInput(t *testing.T) {
	for _, c := range []struct {
		in   string
		kind InputKind
		text string
		name string
		args []string
	}{
		{"hello", InputText, "hello", "", nil},
		{"/new", InputCommand, "", "/new", []string{}},
		{"/login orders:read refunds:issue", InputCommand, "", "/login", []string{"orders:read", "refunds:issue"}},
		{"/new\nhello", InputText, "/new\nhello", "", nil},
		{"/login orders:read\nI want my order", InputText, "/login orders:read\nI want my order", "", nil},
		{"/home/jane/invoice.pdf says order A-88213 was charged twice.\nPlease refund", InputText,
			"/home/jane/invoice.pdf says order A-88213 was charged twice.\nPlease refund", "", nil},
		{"/home/jane/invoice.pdf says so", InputText, "/home/jane/invoice.pdf says so", "", nil},
		{"/bogus", InputUnknown, "", "/bogus", []string{}},
		{"/bogus with words", InputUnknown, "", "/bogus", []string{"with", "words"}},
		{"//bogus", InputText, "/bogus", "", nil},
		{"//new\nhello", InputText, "/new\nhello", "", nil},
		{"\n\n    indented code\n  more\n\n", InputText, "    indented code\n  more", "", nil},
		{"  \n \n", InputText, "", "", nil},
	} {
		got := ParseInput(c.in, isCommand)
		if got.Kind != c.kind || got.Text != c.text || got.Name != c.name || !slices.Equal(got.Args, c.args) {
			t.Errorf("ParseInput(%q) = %+v, want kind %d text %q name %q args %q", c.in, got, c.kind, c.text, c.name, c.args)
		}
	}
}

// Issue 19: the texts of the report, typed in the chat: nothing lost, nothing run.
func TestIssue19_TextStartingWithSlashIsSentWhole(t *testing.T) {
	for _, text := range []string{
		"/home/jane/invoice.pdf says order A-88213 was charged twice.\nPlease refund the second charge.",
		"/new\nhello",
		"/login orders:read\nI want to know where my order is",
	} {
		f := newFake()
		h := newHarness(t, f, testOptions(), 80, 30)
		h.send(pasteMsg(text))
		h.key("enter")
		h.until("sent", func() bool { return len(f.sentTexts()) == 1 })
		if got := f.sentTexts()[0]; got != text {
			t.Errorf("sent %q, want %q", got, text)
		}
		if f.newConvs != 0 || len(f.loginAsks) != 0 {
			t.Errorf("%q ran a command", text)
		}
	}
}

// Issue 19: an error never empties the input: an unknown /word, a bad scope, a command
// that must wait stay as typed.
func TestIssue19_ErrorsKeepTheInput(t *testing.T) {
	f, h, _ := waitingForReply(t, 80, 30)
	for _, typed := range []string{"/bogus", "/login nope:nope", "/login orders:read", "/new", "/logout"} {
		h.m.c.in.reset()
		h.typeText(typed)
		h.key("enter")
		if got := h.m.c.in.value(); got != typed {
			t.Errorf("%s: input %q after Enter, want it kept", typed, got)
		}
	}
	if len(f.sentTexts()) != 1 || f.newConvs != 0 || len(f.loginAsks) != 0 {
		t.Errorf("sent %q, newConvs %d, logins %q", f.sentTexts(), f.newConvs, f.loginAsks)
	}
	h.m.c.in.reset()
	h.typeText("//bogus")
	h.key("enter")
	if got := queueTexts(h.m.c); !slices.Equal(got, []string{"/bogus"}) {
		t.Errorf("//bogus queued %q, want /bogus", got)
	}
}

// Issue 19: queued messages are shown above the input; ↑ on an empty input edits the last,
// Alt+↑ the one before; Enter puts the edit back in place, an emptied one is removed.
func TestIssue19_QueueIsShownEditableRemovable(t *testing.T) {
	f, h, release := waitingForReply(t, 80, 30)
	for _, m := range []string{"one", "two", "three"} {
		h.typeText(m)
		h.key("enter")
	}
	p := plain(h.view())
	for _, row := range []string{"queued 1 · one", "queued 2 · two", "queued 3 · three"} {
		if !strings.Contains(p, row) {
			t.Fatalf("no %q above the input:\n%s", row, p)
		}
	}
	h.key("up")
	if got := h.m.c.in.value(); got != "three" {
		t.Fatalf("↑ gave %q, want the last queued message", got)
	}
	h.key("alt+up")
	if got := h.m.c.in.value(); got != "two" {
		t.Fatalf("Alt+↑ gave %q, want the one before", got)
	}
	h.typeText(" and a half")
	h.key("enter")
	h.key("up")
	h.key("ctrl+u")
	h.key("enter") // emptied: removed
	if got := queueTexts(h.m.c); !slices.Equal(got, []string{"one", "two and a half"}) {
		t.Fatalf("queue = %q", got)
	}
	for range 3 {
		release <- struct{}{}
	}
	h.until("the queue sent", func() bool { return len(f.sentTexts()) == 3 })
	if got := f.sentTexts(); !slices.Equal(got, []string{"hello", "one", "two and a half"}) {
		t.Fatalf("sent %q", got)
	}
}

// Issue 19: Ctrl+U clears the whole input (every line), Ctrl+Y brings it back.
func TestIssue19_ClearAndUndo(t *testing.T) {
	h := newHarness(t, newFake(), testOptions(), 80, 30)
	text := strings.Repeat("a line of text\n", 40) + "last"
	h.send(pasteMsg(text))
	h.key("ctrl+u")
	if got := h.m.c.in.value(); got != "" {
		t.Fatalf("Ctrl+U left %q", got)
	}
	if !strings.Contains(plain(h.view()), "Ctrl+Y brings it back") {
		t.Errorf("nothing says how to undo:\n%s", plain(h.view()))
	}
	h.key("ctrl+y")
	if got := h.m.c.in.value(); got != text {
		t.Fatalf("Ctrl+Y gave %d bytes, want the %d cleared", len(got), len(text))
	}
}

func pasteMsg(s string) tea.PasteMsg { return tea.PasteMsg{Content: s} }

// draftFake keeps drafts like the chat backend does.
type draftFake struct {
	*fake
	input string
	queue []string
	saves int
}

func (d *draftFake) LoadDraft() (string, []string) { return d.input, d.queue }
func (d *draftFake) SaveDraft(input string, queue []string) error {
	d.input, d.queue = input, queue
	d.saves++
	return nil
}

// Issue 19: the draft and the queue survive a quit: kept when the chat ends, given back
// (the queue held until Enter) when it opens again.
func TestIssue19_DraftAndQueueSurviveAQuit(t *testing.T) {
	f, release := blockingFake()
	d := &draftFake{fake: f}
	h := newHarness(t, d, testOptions(), 80, 30)
	h.typeText("hello")
	h.key("enter")
	h.until("send", func() bool { return len(f.sentTexts()) == 1 })
	h.typeText("second")
	h.key("enter")
	h.typeText("half a thought")
	h.key("ctrl+c")
	if err := h.m.c.keepDraft(); err != nil {
		t.Fatal(err)
	}
	if d.input != "half a thought" || !slices.Equal(d.queue, []string{"second"}) {
		t.Fatalf("kept input %q queue %q", d.input, d.queue)
	}

	f2, release2 := blockingFake()
	d2 := &draftFake{fake: f2, input: d.input, queue: d.queue}
	h2 := newHarness(t, d2, testOptions(), 80, 30)
	if got := h2.m.c.in.value(); got != "half a thought" {
		t.Fatalf("input on reopen %q", got)
	}
	if !strings.Contains(plain(h2.view()), "queued 1 · second") || len(f2.sentTexts()) != 0 {
		t.Fatalf("the kept queue is not shown, or was sent without Enter:\n%s", plain(h2.view()))
	}
	h2.key("ctrl+u")
	h2.key("enter") // an empty input: the held queue goes
	release2 <- struct{}{}
	h2.until("sent", func() bool { return slices.Equal(f2.sentTexts(), []string{"second"}) })
	close(release)
}

// Issue 19: a message sent but never answered by an earlier chat (History marks it
// Unanswered) is offered again: held at the head of the queue, in its own turn, sent
// again on Enter (the Backend reuses its messageId), drawn once.
func TestIssue19_UnansweredMessageIsOfferedAgain(t *testing.T) {
	f := newFake()
	f.history = []Turn{
		{ID: "m-0", Role: RoleUser, Text: "hi", At: t0},
		{ID: "r-0", Role: RoleAgent, Text: "Hello!", At: t0},
		{ID: "m-1", Role: RoleUser, Text: "refund A-88213", At: t0, State: Unanswered},
	}
	h := newHarness(t, f, testOptions(), 80, 30)
	p := plain(h.view())
	if !strings.Contains(p, "no answer yet") || !strings.Contains(p, "same message id") {
		t.Fatalf("the unanswered message is not offered:\n%s", p)
	}
	if len(f.sentTexts()) != 0 {
		t.Fatal("sent again without Enter")
	}
	h.key("enter")
	h.until("the answer", h.screenHas("order number?"))
	if got := f.sentTexts(); !slices.Equal(got, []string{"refund A-88213"}) {
		t.Fatalf("sent %q", got)
	}
	if n := strings.Count(plain(h.view()), "You 12:00"); n != 2 {
		t.Errorf("the message is drawn %d times:\n%s", n, plain(h.view()))
	}
}

// Issue 19: Backspace, Delete and the arrows work on characters as people see them
// (grapheme clusters), not code points.
func TestIssue19_EditingByGraphemeCluster(t *testing.T) {
	h := newHarness(t, newFake(), testOptions(), 80, 30)
	for _, c := range []struct{ typed, after string }{
		{"a🇯🇵", "a"},
		{"x👩🏽‍💻", "x"},
		{"e\u0301", ""}, // e + combining acute
		{"ä͖̭̈̇lͮ̒ͫǫ̗", "ä͖̭̈̇lͮ̒ͫ"},
	} {
		h.m.c.in.reset()
		h.send(pasteMsg(c.typed))
		h.key("backspace")
		if got := h.m.c.in.value(); got != c.after {
			t.Errorf("%q then Backspace = %q, want %q", c.typed, got, c.after)
		}
	}
	h.m.c.in.reset()
	h.send(pasteMsg("🇯🇵👩🏽‍💻z"))
	h.key("left")
	h.key("left")
	h.key("backspace") // removes 🇯🇵, whole
	if got := h.m.c.in.value(); got != "👩🏽‍💻z" {
		t.Errorf("← ← Backspace = %q", got)
	}
	h.key("delete") // removes 👩🏽‍💻, whole
	if got := h.m.c.in.value(); got != "z" {
		t.Errorf("Delete = %q", got)
	}
}

// Issue 19: widths follow the terminal: per code point (as tmux and the renderer count
// without mode 2027) unless the terminal reported grapheme clustering. A row never holds
// more cells than the window has, so nothing at the row's end is lost from view.
func TestIssue19_InputWidthsFollowTheTerminal(t *testing.T) {
	h := newHarness(t, newFake(), testOptions(), 20, 30)
	text := strings.Repeat("👩🏽‍💻", 3) + " end"
	h.send(pasteMsg(text))
	for _, row := range strings.Split(h.m.c.in.view(), "\n") {
		if w := ansi.StringWidthWc(row); w > 20 {
			t.Errorf("row %q is %d cells (per code point) in a 20-column window", plain(row), w)
		}
	}
	if !strings.Contains(plain(h.m.c.in.view()), "end") {
		t.Errorf("the end of the text is not drawn:\n%s", h.m.c.in.view())
	}
	rowsWc := h.m.c.in.total
	h.send(tea.ModeReportMsg{Mode: ansi.ModeUnicodeCore, Value: ansi.ModeReset})
	if h.m.c.in.total >= rowsWc {
		t.Errorf("with grapheme widths the text takes %d rows, per code point %d: want fewer", h.m.c.in.total, rowsWc)
	}
	for _, row := range strings.Split(h.m.c.in.view(), "\n") {
		if w := ansi.StringWidth(row); w > 20 {
			t.Errorf("row %q is %d cells (graphemes) in a 20-column window", plain(row), w)
		}
	}
}

// Issue 19: the box scrolls with the cursor in a long text; Up and Down move by rows.
func TestIssue19_LongInputScrollsWithTheCursor(t *testing.T) {
	h := newHarness(t, newFake(), testOptions(), 40, 30)
	var lines []string
	for i := range 50 {
		lines = append(lines, fmt.Sprintf("line %02d", i))
	}
	h.send(pasteMsg(strings.Join(lines, "\n")))
	if v := plain(h.m.c.in.view()); !strings.Contains(v, "line 49") || strings.Contains(v, "line 40") {
		t.Fatalf("after the paste the box shows:\n%s", v)
	}
	for range 10 {
		h.key("up")
	}
	if v := plain(h.m.c.in.view()); !strings.Contains(v, "line 39") {
		t.Fatalf("after 10 × ↑ the box shows:\n%s", v)
	}
	h.typeText("X")
	if !strings.Contains(h.m.c.in.value(), "line 39X") {
		t.Errorf("typed at the wrong place: %q", h.m.c.in.value()[len(h.m.c.in.value())-100:])
	}
}

// Issue 19: given the window's size (Run reads it from the terminal), the first frame is
// drawn at that size, before any resize message.
func TestIssue19_FirstFrameAtTheGivenSize(t *testing.T) {
	opts := testOptions()
	opts.Width, opts.Height = 100, 30
	m := New(newFake(), opts)
	rows := strings.Split(m.c.render(), "\n")
	if len(rows) != 30 || !strings.Contains(rows[3], strings.Repeat("─", 100)) {
		t.Fatalf("the first frame is %d rows, rule %q", len(rows), plain(rows[min(3, len(rows)-1)]))
	}
}

// Issue 19: the scrollback counts widths as the renderer does: a row of the User's turn
// holds no more cells, per code point, than the window has (👩🏽‍💻 is 6 cells there, not
// 2), so " end" stays in view.
func TestIssue19_ScrollbackWidthsFollowTheTerminal(t *testing.T) {
	f := newFake()
	f.history = []Turn{{Role: RoleUser, Text: strings.Repeat("👩🏽‍💻 ", 5) + "ä͖̭̈̇lͮ̒ͫǫ̗ end", At: t0}}
	h := newHarness(t, f, testOptions(), 30, 20)
	for _, row := range strings.Split(h.view(), "\n") {
		if w := ansi.StringWidthWc(row); w > 30 {
			t.Errorf("row %q is %d cells per code point in a 30-column window", plain(row), w)
		}
	}
	if !strings.Contains(plain(h.view()), "end") {
		t.Errorf("the end of the turn is lost:\n%s", plain(h.view()))
	}
}

// The cursor after a full row's last character stays in the window.
func TestIssue19_CursorAtTheEndOfAFullRowFits(t *testing.T) {
	for _, w := range []int{20, 40, 80} {
		h := newHarness(t, newFake(), testOptions(), w, 30)
		for n := w - 5; n <= w+2; n++ {
			h.m.c.in.reset()
			h.send(pasteMsg(strings.Repeat("x", n)))
			for _, row := range strings.Split(h.m.c.in.view(), "\n") {
				if cw := ansi.StringWidth(row); cw > w {
					t.Errorf("%d columns, %d x: a row of %d cells", w, n, cw)
				}
			}
		}
	}
}

// Issue 19: a second Esc gives up on an answer that does not come: the request is
// abandoned, the message waits, unanswered, at the head of the queue, and Enter sends it
// again (the Backend reuses its messageId); the queue goes after it.
func TestIssue19_SecondEscGivesUpTheAnswer(t *testing.T) {
	f, h, release := waitingForReply(t, 80, 30)
	h.typeText("second")
	h.key("enter")
	h.key("esc")
	h.key("esc")
	if h.m.c.pending != nil || !h.m.c.paused {
		t.Fatal("still waiting after the second Esc")
	}
	if got := queueTexts(h.m.c); !slices.Equal(got, []string{"hello", "second"}) {
		t.Fatalf("queue = %q", got)
	}
	if p := plain(h.view()); !strings.Contains(p, "no answer yet") || !strings.Contains(p, "Gave up waiting") {
		t.Fatalf("screen:\n%s", p)
	}
	h.key("enter")
	release <- struct{}{}
	release <- struct{}{}
	h.until("both answers", h.screenHas("got second"))
	if got := f.sentTexts(); !slices.Equal(got, []string{"hello", "hello", "second"}) {
		t.Fatalf("sent %q", got)
	}
	if n := strings.Count(plain(h.view()), "You 12:00"); n != 2 {
		t.Errorf("%d You turns, want 2 (the message drawn once):\n%s", n, plain(h.view()))
	}
}
