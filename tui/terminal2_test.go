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
)

// A message submitted while "start a new conversation? (y/n)" is open is sent after the
// one that failed, in the new conversation: "y" does not throw it away.
func TestQuestionYesKeepsWhatWasSubmittedMeanwhile(t *testing.T) {
	f, h := questionAsked(t, fmt.Errorf("wrapped: %w", ErrContextUnknown), func(text string) string { return "got " + text }, 80, "where is my order?", "(y/n)")
	h.typeText("hello sunny")
	h.key("enter")
	h.typeText("y")
	h.until("both replies", h.screenHas("got hello sunny"))
	if got := f.sentTexts(); !slices.Equal(got, []string{"where is my order?", "where is my order?", "hello sunny"}) {
		t.Fatalf("sent %q", got)
	}
}

// "n" also keeps it: the failed message and what was submitted meanwhile stay queued, in
// order, held until Enter.
func TestQuestionNoKeepsWhatWasSubmittedMeanwhile(t *testing.T) {
	_, h := questionAsked(t, fmt.Errorf("x: %w", ErrContextClosed), nil, 80, "hi", "(y/n)")
	h.typeText("hello sunny")
	h.key("enter")
	h.typeText("n")
	h.until("the answer", func() bool { return h.m.c.panel == nil })
	if got := queueTexts(h.m.c); !slices.Equal(got, []string{"hi", "hello sunny"}) || !h.m.c.in.empty() {
		t.Fatalf("queue after n = %q, input %q", got, h.m.c.in.value())
	}
}

// Only a discrete key press answers the question: "yes please" arriving in one burst with
// an empty input is text, and the question stays open; a y alone then answers.
func TestQuestionBurstIsText(t *testing.T) {
	f, h := questionAsked(t, fmt.Errorf("x: %w", ErrContextClosed), func(text string) string { return "got " + text }, 80, "hi", "(y/n)")
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

// A send that fails on the network holds the message at the head of the queue, drawn once,
// marked "not sent"; Enter on the empty input sends it again, in the same turn.
func TestNetworkFailureHoldsTheMessage(t *testing.T) {
	f := newFake()
	f.reply = func(ctx context.Context, text string) (Reply, error) {
		return Reply{}, errors.New("could not reach the Provider (connection refused)")
	}
	h := newHarness(t, f, testOptions(), 80, 24)
	h.typeText("where is A-1?")
	h.key("enter")
	h.until("failure", h.screenHas("could not reach the Provider"))
	if got := queueTexts(h.m.c); !slices.Equal(got, []string{"where is A-1?"}) {
		t.Fatalf("queue after the failure = %q, want the message", got)
	}
	p := plain(h.view())
	if !strings.Contains(p, "not sent") || !strings.Contains(p, "Enter with an empty input sends it again") {
		t.Errorf("nothing says the message waits:\n%s", p)
	}
	h.key("enter")
	h.until("second failure", func() bool { return len(f.sentTexts()) == 2 && len(h.m.c.queue) == 1 && h.m.c.pending == nil })
	if n := strings.Count(plain(h.view()), "You 12:00"); n != 1 {
		t.Errorf("the message is drawn %d times, want once:\n%s", n, plain(h.view()))
	}
}

// Status text is wrapped, never cut before what matters: at 80 columns the whole unknown
// command notice shows; at 40 columns the copy notice shows the code.
func TestStatusLineWrapsInsteadOfCutting(t *testing.T) {
	h := newHarness(t, newFake(), testOptions(), 80, 24)
	h.typeText("/bogus")
	h.key("enter")
	if p := strings.Join(strings.Fields(plain(h.view())), " "); !strings.Contains(p, "to send it as a message, start it with //.") {
		t.Errorf("the notice is cut:\n%s", plain(h.view()))
	}

	var release chan []string
	_, h, release = loginAsked(t, 40, 20)
	h.key("c")
	rows := strings.Split(plain(h.view()), "\n")
	status := strings.Join(rows[len(rows)-5:], " ")
	if !strings.Contains(status, "WDJB-MJHT") || !strings.Contains(status, "copy") {
		t.Errorf("the copy notice does not show the code at 40 columns:\n%s", plain(h.view()))
	}
	// The notice belongs to the panel: it goes when the login ends.
	release <- []string{"refunds:issue"}
	h.until("panel closed", func() bool { return h.m.c.panel == nil })
	if strings.Contains(plain(h.view()), "asked your terminal to copy") {
		t.Errorf("the copy notice outlived the login panel:\n%s", plain(h.view()))
	}
}

// A late copy result of a closed panel says nothing.
func TestPanelFlashAfterCloseIsDropped(t *testing.T) {
	h := newHarness(t, newFake(), testOptions(), 80, 24)
	q := &question{text: "?", yes: func(*chat) tea.Cmd { return nil }, no: func(*chat) tea.Cmd { return nil }}
	h.m.c.openPanel(q)
	h.m.c.closePanel()
	h.send(panelFlashMsg{p: q, text: "Copied the code X."})
	if strings.Contains(plain(h.view()), "Copied") {
		t.Error("a closed panel's notice was shown")
	}
}

// At 20×6 the input row (and the status line) are still drawn; the header gives way.
func TestTinyWindowKeepsTheInput(t *testing.T) {
	for _, size := range [][2]int{{20, 6}, {20, 4}, {40, 8}} {
		h := newHarness(t, newFake(), testOptions(), size[0], size[1])
		h.typeText("hi")
		rows := strings.Split(plain(h.view()), "\n")
		if len(rows) > size[1] {
			t.Errorf("%dx%d: %d rows drawn", size[0], size[1], len(rows))
		}
		found := false
		for _, r := range rows {
			if strings.HasPrefix(r, "> hi") {
				found = true
			}
		}
		if !found {
			t.Errorf("%dx%d: no input row:\n%s", size[0], size[1], strings.Join(rows, "\n"))
		}
	}
}

// "/new" during a send says to wait for as long as the wait lasts, not until the next key.
func TestNewDuringSendNoticeStaysUntilTheReply(t *testing.T) {
	_, h, release := waitingForReply(t, 100, 24)
	h.typeText("/new")
	h.key("enter")
	if v := h.m.c.in.value(); v != "/new" {
		t.Errorf("the command that must wait left the input: %q", v)
	}
	h.key("left")
	if !strings.Contains(strings.Join(strings.Fields(plain(h.view())), " "), "wait for the reply before starting a new conversation") {
		t.Errorf("the notice went at the next key:\n%s", plain(h.view()))
	}
	release <- struct{}{}
	h.until("reply", h.screenHas("got hello"))
	if strings.Contains(strings.Join(strings.Fields(plain(h.view())), " "), "before starting a new conversation") {
		t.Errorf("the notice outlived the wait:\n%s", plain(h.view()))
	}
}

// Ctrl+Z suspends the chat when a shell can resume it, and otherwise says why not.
func TestCtrlZSuspends(t *testing.T) {
	h := newHarness(t, newFake(), testOptions(), 80, 24)
	h.m.c.canSuspend = func() bool { return true }
	_, cmd := h.m.Update(press("ctrl+z"))
	if cmd == nil {
		t.Fatal("Ctrl+Z did nothing")
	}
	if _, ok := cmd().(tea.SuspendMsg); !ok {
		t.Fatal("Ctrl+Z did not suspend")
	}
	h.m.c.canSuspend = func() bool { return false }
	h.key("ctrl+z")
	if !strings.Contains(plain(h.view()), "Ctrl+Z does nothing here") {
		t.Errorf("no word on Ctrl+Z:\n%s", plain(h.view()))
	}
}

// A browser that fails after it started is reported in the login panel, which stops
// saying it has the link; 'o' reports a browser failing soon after starting too.
func TestLoginPanelReportsBrowserFailingLater(t *testing.T) {
	exited := make(chan error, 1)
	f := newFake()
	f.login = func(ctx context.Context, scopes []string, shown func(DeviceCode)) ([]string, error) {
		shown(DeviceCode{UserCode: "WDJB-MJHT", VerificationURIComplete: "https://brand.example/l",
			ExpiresAt: t0.Add(10 * time.Minute), BrowserOpened: true, BrowserExit: exited})
		<-ctx.Done()
		return nil, ctx.Err()
	}
	opts := testOptions()
	opts.OpenURL = func(string) (<-chan error, error) {
		ch := make(chan error, 1)
		ch <- errors.New("my-browser exited with status 3")
		return ch, nil
	}
	h := newHarness(t, f, opts, 80, 24)
	h.typeText("/login orders:read")
	h.key("enter")
	h.until("code", h.screenHas("Asked your browser to open it"))
	exited <- errors.New("xdg-open exited with status 3")
	h.until("failure", h.screenHas("Could not open the browser: xdg-open exited with status 3"))
	if strings.Contains(plain(h.view()), "Asked your browser to open it") {
		t.Errorf("the panel still claims the browser has the link:\n%s", plain(h.view()))
	}
	h.key("o")
	h.until("o failure", func() bool {
		return strings.Contains(strings.Join(strings.Fields(plain(h.view())), " "), "my-browser exited with status 3. Open the link yourself.")
	})
}
