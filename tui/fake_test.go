package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"
)

// t0 is the fixed clock of every test, so goldens do not move.
var t0 = time.Date(2026, 9, 30, 12, 0, 0, 0, time.UTC)

func fixedNow() time.Time { return t0 }

// fake is a scriptable Backend that records what the chat asked of it.
type fake struct {
	mu      sync.Mutex
	header  Header
	history []Turn
	scopes  []Scope
	card    string

	// reply decides what Send answers; nil echoes a canned agent turn.
	reply func(ctx context.Context, text string) (Reply, error)
	// resend decides what Resend answers.
	resend func(ctx context.Context) (Reply, error)
	// login decides what Login does.
	login func(ctx context.Context, scopes []string, shown func(DeviceCode)) ([]string, error)

	sent      []string
	resends   int
	newConvs  int
	logouts   int
	loginAsks [][]string
}

func newFake() *fake {
	return &fake{
		header: Header{
			BrandName: "Example Co. Support", BrandDomain: "brand.example.com",
			Provider: "Example Provider", KID: "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs",
			Sub: "ps_4f9a1c2e7b3d8e6f0a", Scopes: nil,
		},
		scopes: []Scope{
			{ID: "orders:read", Description: "Look up your orders and their status"},
			{ID: "orders:cancel", Description: "Cancel an order that has not shipped"},
			{ID: "refunds:issue", Description: "Issue a refund to your payment method"},
		},
		card: "Example Co. Support (brand.example.com)\nProvider: Example Provider\nDelegation: orders:read orders:cancel refunds:issue",
	}
}

func (f *fake) Header() Header {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.header
}

func (f *fake) History() []Turn {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.history)
}

func (f *fake) Send(ctx context.Context, text string) (Reply, error) {
	f.mu.Lock()
	f.sent = append(f.sent, text)
	fn := f.reply
	f.mu.Unlock()
	var r Reply
	var err error
	if fn != nil {
		r, err = fn(ctx, text)
	} else {
		r = Reply{Turns: []Turn{{ID: "r-1", Role: RoleAgent, Text: "Sure, what is the order number?", At: t0}}}
	}
	if err == nil {
		f.mu.Lock()
		f.history = append(f.history, Turn{ID: "m", Role: RoleUser, Text: text, At: t0})
		f.history = append(f.history, r.Turns...)
		f.mu.Unlock()
	}
	return r, err
}

func (f *fake) Resend(ctx context.Context) (Reply, error) {
	f.mu.Lock()
	f.resends++
	fn := f.resend
	f.mu.Unlock()
	if fn == nil {
		return Reply{}, fmt.Errorf("no resend scripted")
	}
	return fn(ctx)
}

func (f *fake) NewConversation() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.newConvs++
	f.history = nil
	return nil
}

func (f *fake) Login(ctx context.Context, scopes []string, shown func(DeviceCode)) ([]string, error) {
	f.mu.Lock()
	f.loginAsks = append(f.loginAsks, scopes)
	fn := f.login
	f.mu.Unlock()
	if fn == nil {
		return nil, fmt.Errorf("no login scripted")
	}
	return fn(ctx, scopes, shown)
}

func (f *fake) Logout() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.logouts++
	f.header.Scopes, f.header.ExpiresAt = nil, time.Time{}
	return nil
}

func (f *fake) Card() string    { return f.card }
func (f *fake) Scopes() []Scope { return f.scopes }

func (f *fake) sentTexts() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.sent)
}

// testOptions are the options of every test: fixed clock.
func testOptions() Options { return Options{Now: fixedNow} }

// harness drives a Model without a tea.Program: it runs commands on goroutines and feeds
// their messages back, dropping timers (ticks) so nothing waits on the wall clock.
type harness struct {
	t    *testing.T
	m    Model
	msgs chan tea.Msg
}

func newHarness(t *testing.T, b Backend, opts Options, w, h int) *harness {
	t.Helper()
	m := New(b, opts)
	m.c.tick = func(time.Duration, func(time.Time) tea.Msg) tea.Cmd { return nil }
	hs := &harness{t: t, m: m, msgs: make(chan tea.Msg, 64)}
	hs.send(tea.WindowSizeMsg{Width: w, Height: h})
	return hs
}

// send delivers msg and starts the commands it returns.
func (h *harness) send(msg tea.Msg) {
	_, cmd := h.m.Update(msg)
	h.run(cmd)
}

func (h *harness) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	go func() { h.msgs <- cmd() }()
}

// until feeds command results back until cond holds; it fails after 15 s.
func (h *harness) until(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.After(15 * time.Second)
	poll := time.NewTicker(5 * time.Millisecond) // conditions may change on other goroutines
	defer poll.Stop()
	for !cond() {
		select {
		case <-poll.C:
		case msg := <-h.msgs:
			switch msg := msg.(type) {
			case nil, spinner.TickMsg, tea.BackgroundColorMsg:
			case tea.BatchMsg:
				for _, c := range msg {
					h.run(c)
				}
			default:
				h.send(msg)
			}
		case <-deadline:
			h.t.Fatalf("timed out waiting for %s; screen:\n%s", what, h.view())
		}
	}
}

// typeText types s one key press per character, as a terminal delivers it.
func (h *harness) typeText(s string) {
	for _, r := range s {
		h.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

// key presses a named key ("enter", "esc", "ctrl+r", "alt+enter", …).
func (h *harness) key(name string) { h.send(press(name)) }

// press is the key press of a key name as bubbletea v2 spells it.
func press(name string) tea.KeyPressMsg {
	var k tea.KeyPressMsg
	for {
		i := strings.IndexByte(name, '+')
		if i < 0 || len(name) == 1 {
			break
		}
		switch name[:i] {
		case "ctrl":
			k.Mod |= tea.ModCtrl
		case "alt":
			k.Mod |= tea.ModAlt
		case "shift":
			k.Mod |= tea.ModShift
		}
		name = name[i+1:]
	}
	codes := map[string]rune{"enter": tea.KeyEnter, "esc": tea.KeyEscape, "tab": tea.KeyTab,
		"pgup": tea.KeyPgUp, "pgdown": tea.KeyPgDown, "home": tea.KeyHome, "end": tea.KeyEnd,
		"backspace": tea.KeyBackspace, "up": tea.KeyUp, "down": tea.KeyDown}
	if c, ok := codes[name]; ok {
		k.Code = c
	} else {
		k.Code = []rune(name)[0]
		if k.Mod == 0 {
			k.Text = name
		}
	}
	return k
}

func (h *harness) view() string { return h.m.c.render() }

func (h *harness) screenHas(s string) func() bool {
	return func() bool { return strings.Contains(plain(h.view()), s) }
}

// questionAsked is a chat of width×24 that has sent text and got err back, so that it asks
// whether to start a new conversation (the screen shows asked). The Brand answers later
// messages with then(text) as an agent turn or, when then is nil, with err again.
func questionAsked(t *testing.T, err error, then func(text string) string, width int, text, asked string) (*fake, *harness) {
	t.Helper()
	f := newFake()
	calls := 0
	f.reply = func(ctx context.Context, text string) (Reply, error) {
		calls++
		if calls == 1 || then == nil {
			return Reply{}, err
		}
		return Reply{Turns: []Turn{{Role: RoleAgent, Text: then(text), At: t0}}}, nil
	}
	h := newHarness(t, f, testOptions(), width, 24)
	h.typeText(text)
	h.key("enter")
	h.until("question", h.screenHas(asked))
	return f, h
}

// loginAsked is a chat of width×height (stepUpFake) where "refund please" needed more
// permission and the login panel shows its code; the login ends with what is sent on release.
func loginAsked(t *testing.T, width, height int) (f *fake, h *harness, release chan []string) {
	t.Helper()
	release = make(chan []string, 1)
	f = stepUpFake(release)
	h = newHarness(t, f, testOptions(), width, height)
	h.typeText("refund please")
	h.key("enter")
	h.until("code", h.screenHas("WDJB-MJHT"))
	return f, h, release
}

// queueTexts is the text of every queued message, in order.
func queueTexts(c *chat) []string {
	out := make([]string, len(c.queue))
	for i, q := range c.queue {
		out[i] = q.text
	}
	return out
}
