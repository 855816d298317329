package tui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

func manyTurns(n int) []Turn {
	ts := make([]Turn, n)
	for i := range ts {
		r := RoleUser
		text := fmt.Sprintf("message %d: where is my order A-%05d? It was due yesterday.", i, i)
		if i%2 == 1 {
			r = RoleAgent
			text = fmt.Sprintf("reply %d: order A-%05d left the warehouse this morning and should arrive tomorrow before noon. 📦", i, i)
		}
		ts[i] = Turn{ID: fmt.Sprint(i), Role: r, Text: text, At: t0}
	}
	return ts
}

// §4.1: Enter sends the whole multi-line input; Alt+Enter and Ctrl+J add lines.
func TestEnterSendsAltEnterAndCtrlJAddLines(t *testing.T) {
	f := newFake()
	h := newHarness(t, f, testOptions(), 80, 24)
	h.typeText("one")
	h.key("alt+enter")
	h.typeText("two")
	h.key("ctrl+j")
	h.typeText("three")
	if got := h.m.c.in.value(); got != "one\ntwo\nthree" {
		t.Fatalf("input = %q, want three lines", got)
	}
	if h.m.c.in.height() != 3 {
		t.Errorf("input height = %d, want 3 (grows with its lines)", h.m.c.in.height())
	}
	if len(f.sentTexts()) != 0 {
		t.Fatal("a newline key sent the message")
	}
	h.key("enter")
	h.until("reply", h.screenHas("order number?"))
	if got := f.sentTexts(); !slices.Equal(got, []string{"one\ntwo\nthree"}) {
		t.Fatalf("sent %q", got)
	}
	if h.m.c.in.value() != "" || h.m.c.in.height() != 1 {
		t.Errorf("input not reset after send: %q height %d", h.m.c.in.value(), h.m.c.in.height())
	}
}

// A bracketed paste of many lines lands in the input as is, without sending.
func TestBracketedPasteManyLines(t *testing.T) {
	f := newFake()
	h := newHarness(t, f, testOptions(), 80, 24)
	text := "line 1\nline 2\r\nline 3\nline 4"
	h.send(tea.PasteMsg{Content: text})
	if got := h.m.c.in.value(); got != "line 1\nline 2\nline 3\nline 4" {
		t.Fatalf("input = %q", got)
	}
	if len(f.sentTexts()) != 0 {
		t.Fatal("paste sent the message")
	}
	if !strings.Contains(plain(h.view()), "> line 1") {
		t.Errorf("first pasted line not visible:\n%s", plain(h.view()))
	}
}

// Issue 10 (5): after a 20-line paste the box is as tall as it gets and shows the lines
// around the cursor (the last), not the first five.
func TestIssue10_5_PasteFollowsCursor(t *testing.T) {
	h := newHarness(t, newFake(), testOptions(), 80, 24)
	var lines []string
	for i := 1; i <= 20; i++ {
		lines = append(lines, fmt.Sprintf("pasted %02d", i))
	}
	h.send(tea.PasteMsg{Content: strings.Join(lines, "\n")})
	in := plain(h.m.c.in.view())
	if !strings.Contains(in, "pasted 20") || strings.Contains(in, "pasted 01") {
		t.Fatalf("the input shows:\n%s\nwant the last lines, where the cursor is", in)
	}
	if got, want := h.m.c.in.height(), maxInput(24); got != want {
		t.Errorf("input height %d, want %d", got, want)
	}
}

// Issue 10 (5): the box grows for a long line that wraps, not only for newlines.
func TestIssue10_5_InputGrowsForWrappedLines(t *testing.T) {
	h := newHarness(t, newFake(), testOptions(), 40, 24)
	h.typeText(strings.Repeat("word ", 20)) // 100 cells in a 38-cell box: 3 rows
	if got := h.m.c.in.height(); got != 3 {
		t.Fatalf("input height %d for 100 cells at width 40, want 3:\n%s", got, plain(h.view()))
	}
	if h.m.c.in.value() != strings.Repeat("word ", 20) {
		t.Fatalf("input = %q", h.m.c.in.value())
	}
}

// While a reply is pending the input stays editable; Esc stops waiting without
// abandoning the request (its answer is still shown); quitting abandons it.
func TestEscStopsWaitingQuitCancels(t *testing.T) {
	f := newFake()
	cancelled := make(chan struct{})
	f.reply = func(ctx context.Context, text string) (Reply, error) {
		<-ctx.Done()
		close(cancelled)
		return Reply{}, ctx.Err()
	}
	h := newHarness(t, f, testOptions(), 80, 24)
	h.typeText("hello")
	h.key("enter")
	h.until("Send called", func() bool { return len(f.sentTexts()) == 1 })
	if !strings.Contains(plain(h.view()), "waiting for Example Co. Support 0s") {
		t.Fatalf("no pending status:\n%s", plain(h.view()))
	}
	h.typeText("draft")
	if h.m.c.in.value() != "draft" {
		t.Fatalf("input not editable while pending: %q", h.m.c.in.value())
	}
	h.key("esc")
	p := plain(h.view())
	if !strings.Contains(p, "Stopped waiting") || !strings.Contains(p, "answer is shown when it comes") {
		t.Fatalf("no notice:\n%s", p)
	}
	if h.m.c.in.value() != "draft" {
		t.Errorf("Esc changed the input: %q", h.m.c.in.value())
	}
	select {
	case <-cancelled:
		t.Fatal("Esc abandoned the request")
	default:
	}
	h.key("ctrl+c")
	select {
	case <-cancelled:
	case <-time.After(15 * time.Second):
		t.Fatal("quitting did not cancel the Send context")
	}
}

// §4.2: a closed context asks before starting a new conversation and sending again.
func TestContextClosedAsksThenResends(t *testing.T) {
	f, h := questionAsked(t, fmt.Errorf("message:send: %w", ErrContextClosed), func(string) string { return "Fresh start, how can I help?" },
		80, "still there?", "Start a new conversation")
	if f.newConvs != 0 {
		t.Fatal("NewConversation called before the User answered")
	}
	h.typeText("y")
	h.until("reply in the new context", h.screenHas("Fresh start"))
	if f.newConvs != 1 {
		t.Fatalf("NewConversation called %d times, want 1", f.newConvs)
	}
	if got := f.sentTexts(); !slices.Equal(got, []string{"still there?", "still there?"}) {
		t.Fatalf("sent %q", got)
	}
}

func TestContextClosedNoKeepsConversation(t *testing.T) {
	f, h := questionAsked(t, fmt.Errorf("x: %w", ErrContextClosed), nil, 80, "hi", "(y/n)")
	h.typeText("n")
	h.until("the answer", func() bool { return h.m.c.panel == nil })
	if f.newConvs != 0 || len(f.sentTexts()) != 1 {
		t.Fatalf("newConvs=%d sent=%q after n", f.newConvs, f.sentTexts())
	}
	if h.m.c.panel != nil {
		t.Fatal("still asking after n")
	}
}

// §5.5: after the step-up is approved the chat resends by itself, in the same context.
func TestStepUpApprovedResends(t *testing.T) {
	f, h, release := loginAsked(t, 80, 24)
	if got := f.loginAsks; len(got) != 1 || !slices.Equal(got[0], []string{"refunds:issue"}) {
		t.Fatalf("Login asked for %q", got)
	}
	release <- []string{"refunds:issue"}
	h.until("reply after resend", h.screenHas("Refund issued"))
	if f.resends != 1 || len(f.sentTexts()) != 1 || f.newConvs != 0 {
		t.Fatalf("resends=%d sends=%d newConvs=%d; want 1, 1, 0", f.resends, len(f.sentTexts()), f.newConvs)
	}
	p := plain(h.view())
	if !strings.Contains(p, "Granted: refunds:issue.") || !strings.Contains(p, "✓ receipt") {
		t.Errorf("missing grant notice or receipt mark:\n%s", p)
	}
}

func TestStepUpPartialGrantDoesNotResend(t *testing.T) {
	f, h, release := loginAsked(t, 80, 24)
	release <- nil
	h.until("notice", h.screenHas("Not granted: refunds:issue"))
	if f.resends != 0 {
		t.Fatal("resent although the scope was not granted")
	}
}

func TestStepUpEscCancelsLogin(t *testing.T) {
	f := stepUpFake(make(chan []string))
	opened := make(chan string, 1)
	opts := testOptions()
	opts.OpenURL = func(u string) (<-chan error, error) { opened <- u; return nil, nil }
	h := newHarness(t, f, opts, 80, 24)
	h.typeText("refund please")
	h.key("enter")
	h.until("code", h.screenHas("WDJB-MJHT"))
	h.typeText("o") // the browser is started by a command, off the UI goroutine
	select {
	case u := <-opened:
		if !strings.HasPrefix(u, "https://brand.example/login") {
			t.Fatalf("o opened %q", u)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("o did not open the link")
	}
	_, cmd := h.m.Update(press("c"))
	if cmd == nil || fmt.Sprint(cmd()) != fmt.Sprint(tea.SetClipboard("WDJB-MJHT")()) {
		t.Fatal("c did not ask the terminal to copy the code (OSC 52)")
	}
	if p := plain(h.view()); strings.Contains(p, "Copied") || !strings.Contains(p, "WDJB-MJHT: asked your terminal to copy it") {
		t.Errorf("c claims more than a request to the terminal:\n%s", p)
	}
	h.key("esc")
	if h.m.c.panel != nil {
		t.Fatal("Esc did not close the panel")
	}
	if !strings.Contains(plain(h.view()), "Login cancelled") {
		t.Fatalf("no cancel notice:\n%s", plain(h.view()))
	}
	if f.resends != 0 {
		t.Fatal("resent after cancel")
	}
}

func TestSlashLoginChecksScopes(t *testing.T) {
	f := newFake()
	f.login = func(ctx context.Context, scopes []string, shown func(DeviceCode)) ([]string, error) {
		shown(DeviceCode{UserCode: "ABCD-EFGH", VerificationURIComplete: "https://brand.example/l", ExpiresAt: t0.Add(time.Minute), BrowserErr: errors.New("no display")})
		return scopes, nil
	}
	h := newHarness(t, f, testOptions(), 80, 24)
	h.typeText("/login nope:nope")
	h.key("enter")
	if len(f.loginAsks) != 0 || !strings.Contains(plain(h.view()), `unknown scope "nope:nope"`) {
		t.Fatalf("unknown scope not refused (§5.2):\n%s", plain(h.view()))
	}
	h.m.c.in.reset()
	h.typeText("/login orders:read orders:cancel")
	h.key("enter")
	h.until("granted", h.screenHas("Granted: orders:read, orders:cancel."))
	if !slices.Equal(f.loginAsks[0], []string{"orders:read", "orders:cancel"}) {
		t.Fatalf("Login asked %q", f.loginAsks[0])
	}
}

func TestTabCompletion(t *testing.T) {
	h := newHarness(t, newFake(), testOptions(), 80, 24)
	h.typeText("/lo")
	h.key("tab")
	if v := h.m.c.in.value(); v != "/log" {
		t.Fatalf("/lo⇥ = %q, want /log", v)
	}
	if !strings.Contains(plain(h.view()), "/login  /logout") {
		t.Errorf("candidates not listed:\n%s", plain(h.view()))
	}
	h.typeText("i")
	h.key("tab")
	if v := h.m.c.in.value(); v != "/login " {
		t.Fatalf("/logi⇥ = %q", v)
	}
	h.typeText("or")
	h.key("tab")
	if v := h.m.c.in.value(); v != "/login orders:" {
		t.Fatalf("/login or⇥ = %q", v)
	}
	h.typeText("c")
	h.key("tab")
	if v := h.m.c.in.value(); v != "/login orders:cancel " {
		t.Fatalf("/login orders:c⇥ = %q", v)
	}
	h.typeText("o")
	h.key("tab")
	if v := h.m.c.in.value(); v != "/login orders:cancel orders:read " {
		t.Fatalf("already chosen scope offered again: %q", v)
	}
}

func TestSlashCommands(t *testing.T) {
	f := newFake()
	h := newHarness(t, f, testOptions(), 80, 40)
	for _, c := range []struct{ cmd, want string }{
		{"/help", "/login SCOPE…"},
		{"/card", "Provider: Example Provider"},
		{"/new", "New conversation"},
		{"/receipts", "No receipt"},
	} {
		h.m.c.in.reset()
		h.typeText(c.cmd)
		h.key("enter")
		h.until(c.cmd, h.screenHas(c.want)) // /new runs as a command
		if v := h.m.c.in.value(); v != "" {
			t.Errorf("%s left %q in the input", c.cmd, v)
		}
	}
	if f.newConvs != 1 {
		t.Errorf("/new: NewConversation called %d times", f.newConvs)
	}
	h.m.c.in.reset()
	h.typeText("/bogus")
	h.key("enter")
	h.until("/bogus", h.screenHas("/bogus is not a command"))
	if v := h.m.c.in.value(); v != "/bogus" {
		t.Errorf("/bogus: input %q, want it kept", v)
	}
	h.m.c.in.reset()
	h.typeText("/logout")
	h.key("enter")
	h.until("logout", func() bool {
		f.mu.Lock()
		n := f.logouts
		f.mu.Unlock()
		return n == 1 && strings.Contains(plain(h.view()), "Logged out")
	})
	if len(f.sentTexts()) != 0 {
		t.Fatalf("a command was sent as a message: %q", f.sentTexts())
	}
	h.m.c.in.reset()
	h.typeText("//etc is a path")
	h.key("enter")
	h.until("reply", h.screenHas("order number?"))
	if got := f.sentTexts(); !slices.Equal(got, []string{"/etc is a path"}) {
		t.Fatalf("// escape sent %q", got)
	}
	_, cmd := h.m.Update(press("ctrl+c"))
	if cmd == nil || cmd() != tea.Quit() {
		t.Fatal("Ctrl+C does not quit")
	}
}

// An agent's text cannot drive the terminal: escape sequences are shown
// visibly (iostreams.Sanitize), never executed.
func TestAgentTextControlSequencesShownNotRun(t *testing.T) {
	f := newFake()
	f.history = []Turn{{Role: RoleAgent, Text: "hi\x1b]52;c;ZXZpbA==\x07 there\x1b[2J\x1b[31mred\u202e!", At: t0}}
	h := newHarness(t, f, testOptions(), 80, 24)
	v := h.view()
	for _, bad := range []string{"\x1b]52", "\x1b[2J", "\u202e", "\a"} {
		if strings.Contains(v, bad) {
			t.Errorf("view contains %q", bad)
		}
	}
	if !strings.Contains(plain(v), `hi\x1b]52;c;ZXZpbA==\x07 there\x1b[2J\x1b[31mred\u202e!`) {
		t.Errorf("text lost or not shown visibly:\n%s", plain(v))
	}
}

// Follow the bottom only when the User is already there (field notes, charm's apps).
func TestScrollFollowsBottomOnlyWhenThere(t *testing.T) {
	f := newFake()
	f.history = manyTurns(200)
	h := newHarness(t, f, testOptions(), 80, 24)
	if !strings.Contains(plain(h.view()), "reply 199:") {
		t.Fatal("not at the bottom on open")
	}
	h.key("pgup")
	before := plain(h.view())
	if strings.Contains(before, "reply 199:") {
		t.Fatal("PgUp did not scroll")
	}
	h.m.c.addTurns(Turn{Role: RoleAgent, Text: "late arrival", At: t0})
	after := plain(h.view())
	if strings.Contains(after, "late arrival") || !strings.Contains(after, "new messages below") {
		t.Fatalf("a new turn moved the view while scrolled up:\n%s", after)
	}
	h.key("end") // input empty: End goes to the bottom
	if !strings.Contains(plain(h.view()), "late arrival") {
		t.Fatal("End did not return to the bottom")
	}
	h.m.c.addTurns(Turn{Role: RoleAgent, Text: "second arrival", At: t0})
	if !strings.Contains(plain(h.view()), "second arrival") {
		t.Fatal("at the bottom, a new turn is not shown")
	}
	h.key("home")
	if !strings.Contains(plain(h.view()), "message 0:") {
		t.Fatal("Home did not go to the first turn")
	}
	for range 3 {
		h.send(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	}
	if strings.Contains(plain(h.view()), "message 0:") {
		t.Fatal("wheel did not scroll down")
	}
	h.send(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	h.send(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	h.send(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	if !strings.Contains(plain(h.view()), "message 0:") {
		t.Fatal("wheel did not scroll back up")
	}
	for range 400 {
		h.key("pgdown")
	}
	if !h.m.c.sb.follow {
		t.Fatal("PgDn to the end does not resume following")
	}
}

// The cost of a keystroke must not depend on the conversation: no turn is rendered again.
func TestKeystrokeRendersNoTurn(t *testing.T) {
	f := newFake()
	f.history = manyTurns(1000)
	h := newHarness(t, f, testOptions(), 100, 40)
	h.view()
	before := h.m.c.sb.renders
	if before > 40 {
		t.Fatalf("first frame rendered %d turns; only visible ones should be", before)
	}
	h.typeText("abc")
	h.view()
	if n := h.m.c.sb.renders - before; n != 0 {
		t.Fatalf("typing re-rendered %d turns", n)
	}
}

// A resize renders only what is visible and never yields a line wider than the window.
func TestResizeRendersVisibleOnly(t *testing.T) {
	f := newFake()
	f.history = manyTurns(1000)
	h := newHarness(t, f, testOptions(), 100, 40)
	h.view()
	for _, w := range []int{40, 57, 133, 20} {
		before := h.m.c.sb.renders
		h.send(tea.WindowSizeMsg{Width: w, Height: 30})
		v := h.view()
		if n := h.m.c.sb.renders - before; n > 30 {
			t.Errorf("resize to %d rendered %d turns", w, n)
		}
		lines := strings.Split(v, "\n")
		if len(lines) != 30 {
			t.Errorf("width %d: %d lines, want 30", w, len(lines))
		}
		for i, l := range lines {
			if ansi.StringWidth(l) > w {
				t.Errorf("width %d: line %d is %d wide: %q", w, i, ansi.StringWidth(l), plain(l))
			}
		}
	}
}
