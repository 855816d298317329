package tui

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"
)

// Golden tests run the chat in a real tea.Program (teatest) with a fake Backend, a fixed
// clock and the ANSI colour profile forced, then compare the final screen with
// testdata/<TestName>.golden. Regenerate with `go test ./tui -run Golden -update`.

func plain(s string) string { return ansi.Strip(s) }

// startProgram runs New(b, opts) in teatest at w×h and waits for the first frame.
func startProgram(t *testing.T, b Backend, opts Options, w, h int) *teatest.TestModel {
	t.Helper()
	tm := teatest.NewTestModel(t, New(b, opts), teatest.WithInitialTermSize(w, h))
	t.Cleanup(func() { _ = tm.Quit() })
	return tm
}

// waitFor waits (at most 5 s) until the program's output contains s.
func waitFor(t *testing.T, tm *teatest.TestModel, s string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		return bytes.Contains([]byte(plain(string(b))), []byte(s))
	}, teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
}

// finalScreen quits with Ctrl+C and returns the final View.
func finalScreen(t *testing.T, tm *teatest.TestModel) string {
	t.Helper()
	tm.Send(press("ctrl+c"))
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second))
	return fm.(Model).c.render()
}

func requireGolden(t *testing.T, screen string) {
	t.Helper()
	teatest.RequireEqualOutput(t, []byte(screen+"\n"))
}

func TestGoldenFirstOpen(t *testing.T) {
	f := newFake()
	tm := startProgram(t, f, testOptions(), 80, 24)
	waitFor(t, tm, "identity only")
	screen := finalScreen(t, tm)
	p := plain(screen)
	for _, want := range []string{"Example Co. Support", "brand.example.com", "via Example Provider", "key NzbLsXh8", "sub ps_4f9…6f0a", "identity only", "Message Example Co. Support"} {
		if !strings.Contains(p, want) {
			t.Errorf("first screen lacks %q:\n%s", want, p)
		}
	}
	if n := strings.Count(screen, "\n") + 1; n != 24 {
		t.Errorf("screen has %d lines, want 24", n)
	}
	requireGolden(t, screen)
}

func TestGoldenSendAndReply(t *testing.T) {
	f := newFake()
	f.reply = func(ctx context.Context, text string) (Reply, error) {
		return Reply{Turns: []Turn{{ID: "r-1", Role: RoleAgent, Text: "Order #A-88213 ships tomorrow. You will get a tracking link by email.", At: t0.Add(time.Minute)}}}, nil
	}
	tm := startProgram(t, f, testOptions(), 80, 24)
	waitFor(t, tm, "identity only")
	tm.Type("Where is my order A-88213?")
	tm.Send(press("enter"))
	waitFor(t, tm, "tracking link")
	screen := finalScreen(t, tm)
	if got := f.sentTexts(); len(got) != 1 || got[0] != "Where is my order A-88213?" {
		t.Fatalf("Send got %q", got)
	}
	p := plain(screen)
	if strings.Index(p, "Where is my order") > strings.Index(p, "ships tomorrow") {
		t.Errorf("reply is above the message:\n%s", p)
	}
	requireGolden(t, screen)
}

// TestGoldenHistoryReload sends a message, quits, and opens the chat again on the same
// Backend: the earlier turns come back from History().
func TestGoldenHistoryReload(t *testing.T) {
	f := newFake()
	tm := startProgram(t, f, testOptions(), 80, 24)
	waitFor(t, tm, "identity only")
	tm.Type("Hello")
	tm.Send(press("enter"))
	waitFor(t, tm, "order number?")
	finalScreen(t, tm)

	tm2 := startProgram(t, f, testOptions(), 80, 24)
	waitFor(t, tm2, "order number?")
	screen := finalScreen(t, tm2)
	p := plain(screen)
	if !strings.Contains(p, "Hello") || !strings.Contains(p, "order number?") {
		t.Fatalf("history not shown on reopen:\n%s", p)
	}
	requireGolden(t, screen)
}

func stepUpFake(release chan []string) *fake {
	f := newFake()
	f.header.Scopes = []string{"orders:read"}
	f.header.ExpiresAt = t0.Add(42 * time.Minute)
	f.reply = func(ctx context.Context, text string) (Reply, error) {
		return Reply{StepUp: &StepUp{
			Text:          "I need permission to issue refunds.",
			MissingScopes: []Scope{{ID: "refunds:issue", Description: "Issue a refund to your payment method"}},
		}}, nil
	}
	f.login = func(ctx context.Context, scopes []string, shown func(DeviceCode)) ([]string, error) {
		shown(DeviceCode{UserCode: "WDJB-MJHT", VerificationURIComplete: "https://brand.example/login?return_to=%2Fconsent%3Fuser_code%3DWDJB-MJHT",
			ExpiresAt: t0.Add(10 * time.Minute), BrowserOpened: true})
		select {
		case g := <-release:
			return g, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f.resend = func(ctx context.Context) (Reply, error) {
		return Reply{Turns: []Turn{{ID: "r-2", Role: RoleAgent, Text: "Refund issued: 42.00 EUR, posts in 3–5 days.", At: t0,
			Receipt: &ReceiptMark{ID: "rcpt-1", Verified: true, ScopesUsed: []string{"refunds:issue"}, Actions: []string{"issue_refund"}, TS: t0}}}}, nil
	}
	return f
}

func TestGoldenStepUpPanel(t *testing.T) {
	f := stepUpFake(make(chan []string))
	tm := startProgram(t, f, testOptions(), 80, 24)
	waitFor(t, tm, "42m left")
	tm.Type("Please refund order A-88213")
	tm.Send(press("enter"))
	waitFor(t, tm, "WDJB-MJHT")
	screen := finalScreen(t, tm)
	p := plain(screen)
	for _, want := range []string{"Permission needed", "refunds:issue — Issue a refund", "WDJB-MJHT", "Asked your browser to open it", "expires in 10:00", "o open link · c copy code · Esc cancel"} {
		if !strings.Contains(p, want) {
			t.Errorf("step-up panel lacks %q:\n%s", want, p)
		}
	}
	requireGolden(t, screen)
}

func receiptHistory() *fake {
	f := newFake()
	f.header.Scopes = []string{"orders:read", "orders:cancel"}
	f.header.ExpiresAt = t0.Add(59*time.Minute + 30*time.Second)
	f.history = []Turn{
		{Role: RoleUser, Text: "Cancel order A-88213 please.", At: t0.Add(-3 * time.Minute)},
		{Role: RoleAgent, Text: "Order A-88213 is cancelled. Refund posts in 3–5 days.", At: t0.Add(-3 * time.Minute),
			Receipt: &ReceiptMark{ID: "rcpt-7", Verified: true, ScopesUsed: []string{"orders:read", "orders:cancel"}, Actions: []string{"lookup_orders", "cancel_order"}, TS: t0.Add(-3 * time.Minute)}},
		{Role: RoleUser, Text: "And my other order?", At: t0.Add(-time.Minute)},
		{Role: RoleAgent, Text: "Order B-100 is on its way.", At: t0.Add(-time.Minute),
			Receipt: &ReceiptMark{ID: "rcpt-8", Verified: false, Problems: []string{"signature: no key matches kid \"k9\"", "expired by 3m2s (exp)"}, ScopesUsed: []string{"orders:read"}, Actions: []string{"lookup_orders"}, TS: t0.Add(-time.Minute)}},
	}
	return f
}

func TestGoldenReceiptMark(t *testing.T) {
	tm := startProgram(t, receiptHistory(), testOptions(), 80, 24)
	waitFor(t, tm, "on its way")
	screen := finalScreen(t, tm)
	p := plain(screen)
	if !strings.Contains(p, "✓ receipt") || !strings.Contains(p, "✗ receipt failed") {
		t.Fatalf("receipt marks missing:\n%s", p)
	}
	requireGolden(t, screen)
}

func TestGoldenReceiptPanel(t *testing.T) {
	// The panel writes local time, as every table does; the golden is UTC.
	defer func(l *time.Location) { time.Local = l }(time.Local)
	time.Local = time.UTC
	tm := startProgram(t, receiptHistory(), testOptions(), 80, 24)
	waitFor(t, tm, "on its way")
	tm.Send(press("ctrl+r"))
	waitFor(t, tm, "Receipt rcpt-8")
	screen := finalScreen(t, tm)
	p := plain(screen)
	for _, want := range []string{"✗ verification failed", "expired by 3m2s (exp)", "Scopes used: orders:read", "• lookup_orders", "Time: 2026-09-30 11:59 UTC"} {
		if !strings.Contains(p, want) {
			t.Errorf("receipt panel lacks %q:\n%s", want, p)
		}
	}
	requireGolden(t, screen)
}

func narrowFake() *fake {
	f := newFake()
	f.history = []Turn{
		{Role: RoleUser, Text: "Is there a store near 東京駅? 🙏🏽 I'd like to pick up order A-88213 there on Saturday morning.", At: t0},
		{Role: RoleAgent, Text: "Yes: 東京駅八重洲口店 (Yaesu exit) opens at 10:00 👍. Bring the code https://brand.example.com/pickup/A-88213/verylongpathsegmentwithoutbreaks with you.", At: t0},
		{Role: RoleError, Text: "message:send: 429 Too Many Requests, retried after 2s", At: t0},
	}
	return f
}

func TestGoldenNarrow40(t *testing.T) {
	tm := startProgram(t, narrowFake(), testOptions(), 40, 20)
	waitFor(t, tm, "429")
	tm.Send(tea.PasteMsg{Content: "😀 wide 漢字"})
	waitFor(t, tm, "漢字")
	screen := finalScreen(t, tm)
	for i, l := range strings.Split(screen, "\n") {
		if w := ansi.StringWidth(l); w > 40 {
			t.Errorf("line %d is %d cells wide (> 40): %q", i, w, plain(l))
		}
	}
	requireGolden(t, screen)
}

func TestGoldenNoColor(t *testing.T) {
	opts := testOptions()
	opts.NoColor = true
	tm := startProgram(t, receiptHistory(), opts, 80, 24)
	waitFor(t, tm, "on its way")
	screen := finalScreen(t, tm)
	if bad := colourSGR(screen); bad != "" {
		t.Fatalf("NO_COLOR screen has colour sequence %q", bad)
	}
	requireGolden(t, screen)
}

// A reply with Markdown, data and files, as the chat draws it.
func TestGoldenMarkdownAndParts(t *testing.T) {
	f := newFake()
	f.history = []Turn{
		{Role: RoleUser, Text: "Where are my orders?", At: t0},
		{Role: RoleAgent, Text: "You have **two** orders:\n\n1. `A-88213` running shoes, *shipped*\n2. `B-100` socks\n\nSee [tracking](https://brand.example.com/t/A-88213).", At: t0, Parts: []Part{
			{Kind: PartData, JSON: []byte(`{"orders":[{"id":"A-88213","status":"shipped"},{"id":"B-100","status":"processing"}]}`)},
			{Kind: PartFile, Name: "invoice-A-88213.pdf", MediaType: "application/pdf", Data: make([]byte, 48213)},
		}},
	}
	tm := startProgram(t, f, testOptions(), 80, 30)
	waitFor(t, tm, "invoice")
	screen := finalScreen(t, tm)
	p := plain(screen)
	for _, want := range []string{"You have two orders:", "A-88213", "running shoes, shipped", `"status": "shipped"`, "invoice-A-88213.pdf (application/pdf, 48.2 kB) · /save saves it"} {
		if !strings.Contains(p, want) {
			t.Errorf("screen lacks %q:\n%s", want, p)
		}
	}
	requireGolden(t, screen)
}
