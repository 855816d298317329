package tui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

// blockingFake answers each Send only when the test releases it, in order.
func blockingFake() (*fake, chan struct{}) {
	f := newFake()
	release := make(chan struct{}, 16)
	f.reply = func(ctx context.Context, text string) (Reply, error) {
		select {
		case <-release:
		case <-ctx.Done():
			return Reply{}, ctx.Err()
		}
		return Reply{Turns: []Turn{{Role: RoleAgent, Text: "got " + text, At: t0}}}, nil
	}
	return f, release
}

// waitingForReply is a chat of width×height (blockingFake) that has sent "hello" and waits
// for the reply; a send on release lets one reply come.
func waitingForReply(t *testing.T, width, height int) (f *fake, h *harness, release chan struct{}) {
	t.Helper()
	f, release = blockingFake()
	h = newHarness(t, f, testOptions(), width, height)
	h.typeText("hello")
	h.key("enter")
	h.until("send", func() bool { return len(f.sentTexts()) == 1 })
	return f, h, release
}

// Issue 10 (4): Enter while a reply is pending queues the message (nothing is thrown
// away); queued messages are sent one after the other, in order, each after the previous
// reply.
func TestIssue10_4_QueueWhilePending(t *testing.T) {
	f, release := blockingFake()
	h := newHarness(t, f, testOptions(), 80, 24)
	for _, m := range []string{"one", "two", "three"} {
		h.typeText(m)
		h.key("enter")
	}
	h.until("first send", func() bool { return len(f.sentTexts()) == 1 })
	if !h.m.c.in.empty() {
		t.Fatalf("input kept %q after Enter", h.m.c.in.value())
	}
	if !strings.Contains(plain(h.view()), "2 queued") {
		t.Errorf("status does not say what is queued:\n%s", plain(h.view()))
	}
	for i := range 3 {
		release <- struct{}{}
		want := []string{"one", "two", "three"}[i]
		h.until("reply "+want, h.screenHas("got "+want))
	}
	if got := f.sentTexts(); !slices.Equal(got, []string{"one", "two", "three"}) {
		t.Fatalf("sent %q", got)
	}
	p := plain(h.view())
	if strings.Index(p, "got one") > strings.Index(p, "got two") || strings.Index(p, "got two") > strings.Index(p, "got three") {
		t.Errorf("replies out of order:\n%s", p)
	}
}

// Issue 19: Esc stops waiting, nothing more: the draft stays in the input, the queue stays
// queued (shown above the input), the sent message stays on screen, and its late answer is
// shown, then the queue goes on.
func TestIssue19_EscStopsWaitingNothingMore(t *testing.T) {
	f, h, release := waitingForReply(t, 80, 30)
	h.typeText("queued")
	h.key("enter")
	h.typeText("draft")
	h.key("esc")
	if got := h.m.c.in.value(); got != "draft" {
		t.Fatalf("input after Esc = %q, want the draft alone", got)
	}
	if got := queueTexts(h.m.c); !slices.Equal(got, []string{"queued"}) {
		t.Fatalf("queue after Esc = %q", got)
	}
	p := plain(h.view())
	if !strings.Contains(p, "queued 1 · queued") || !strings.Contains(p, "hello") || !strings.Contains(p, "no answer yet") {
		t.Fatalf("the screen does not show the sent message and the queue:\n%s", p)
	}
	if strings.Contains(p, "waiting for") {
		t.Errorf("still says it waits:\n%s", p)
	}
	release <- struct{}{}
	h.until("the late answer", h.screenHas("got hello"))
	h.until("the queued message sent", func() bool { return len(f.sentTexts()) == 2 })
	release <- struct{}{}
	h.until("its answer", h.screenHas("got queued"))
	if got := f.sentTexts(); !slices.Equal(got, []string{"hello", "queued"}) {
		t.Fatalf("sent %q", got)
	}
	if strings.Count(plain(h.view()), "You 12:00") != 2 {
		t.Errorf("want two You turns:\n%s", plain(h.view()))
	}
}

// Issue 10 (9): typing while "start a new conversation? (y/n)" is asked is kept in the
// input; y and n answer only while the input is empty.
func TestIssue10_9_TypingDuringQuestionIsKept(t *testing.T) {
	f, h := questionAsked(t, fmt.Errorf("x: %w", ErrContextClosed), nil, 80, "hi", "(y/n)")
	h.typeText("hey you")
	if got := h.m.c.in.value(); got != "hey you" {
		t.Fatalf("typing during the question gave input %q", got)
	}
	if f.newConvs != 0 || h.m.c.panel == nil {
		t.Fatal("the y of the typed text answered the question")
	}
	h.key("esc")
	if h.m.c.panel != nil {
		t.Fatal("Esc did not answer no")
	}
	if got := h.m.c.in.value(); got != "hey you" {
		t.Errorf("input after no = %q, want the draft", got)
	}
	if got := queueTexts(h.m.c); !slices.Equal(got, []string{"hi"}) || !h.m.c.paused {
		t.Errorf("queue after no = %q (held %v), want the unsent message held", got, h.m.c.paused)
	}
}

// Issue 10 (8): an unknown context asks before a new conversation, like a closed one; the
// new conversation is started by a command and the message sent again in it.
func TestIssue10_8_UnknownContextOffersNew(t *testing.T) {
	f, h := questionAsked(t, fmt.Errorf("wrapped: %w", ErrContextUnknown), func(string) string { return "Hello again" }, 80, "where is my order?", "no longer knows this conversation")
	h.typeText("y")
	h.until("reply", h.screenHas("Hello again"))
	if f.newConvs != 1 || !slices.Equal(f.sentTexts(), []string{"where is my order?", "where is my order?"}) {
		t.Fatalf("newConvs=%d sent=%q", f.newConvs, f.sentTexts())
	}
}

// Issue 10 (8): a dead delegation: one line says so, the header says identity only and
// the delegation stopped working, and the message is back in the input.
func TestIssue10_8_DeadGrantDropsToIdentityOnly(t *testing.T) {
	f := newFake()
	f.header.Scopes, f.header.ExpiresAt = []string{"orders:read"}, t0.Add(56*time.Minute)
	f.reply = func(ctx context.Context, text string) (Reply, error) {
		f.mu.Lock()
		f.header.Scopes, f.header.ExpiresAt, f.header.DelegationLost = nil, time.Time{}, true
		f.mu.Unlock()
		return Reply{}, fmt.Errorf("refused: %w", ErrDelegationLost)
	}
	h := newHarness(t, f, testOptions(), 80, 24)
	if !strings.Contains(plain(h.view()), "56m left") {
		t.Fatalf("header:\n%s", plain(h.view()))
	}
	h.typeText("where is A-1?")
	h.key("enter")
	h.until("notice", h.screenHas("Example Co. Support stopped working"))
	p := plain(h.view())
	if strings.Contains(p, "56m left") || !strings.Contains(p, "identity only · the delegation stopped working") {
		t.Errorf("header still claims the delegation:\n%s", p)
	}
	if got := queueTexts(h.m.c); !slices.Equal(got, []string{"where is A-1?"}) {
		t.Errorf("queue = %q, want the unsent message", got)
	}
	if n := strings.Count(plain(h.view()), "where is A-1?"); n != 2 { // its turn and its queue row
		t.Errorf("the message is drawn %d times, want its turn and its queue row:\n%s", n, plain(h.view()))
	}
}

// Issue 10 (9): Ctrl+R never opens a receipt of an earlier conversation.
func TestIssue10_9_ReceiptBelongsToThisConversation(t *testing.T) {
	f := receiptHistory()
	h := newHarness(t, f, testOptions(), 80, 24)
	h.typeText("/new")
	h.key("enter")
	h.until("new", h.screenHas("New conversation"))
	h.key("ctrl+r")
	if h.m.c.panel != nil || !strings.Contains(plain(h.view()), "No receipt in this conversation yet") {
		t.Fatalf("Ctrl+R after /new:\n%s", plain(h.view()))
	}
}

// Issue 10 (9): at 40 columns the login link is never indented nor broken over rows (a
// selection across rows copies a line break): it is one row, a hyperlink (OSC 8) to the
// whole link, cut short with "…"; the panel says how to get the whole link, l copies it,
// and the countdown stays in view.
func TestIssue10_9_LoginPanelNarrow(t *testing.T) {
	_, h, _ := loginAsked(t, 40, 20)
	v := h.view()
	const link = "https://brand.example/login?return_to=%2Fconsent%3Fuser_code%3DWDJB-MJHT"
	var rows []string
	for _, l := range strings.Split(plain(v), "\n") {
		if strings.Contains(l, "https://") || strings.Contains(l, "user_code") {
			rows = append(rows, l)
		}
	}
	if len(rows) != 1 || !strings.HasPrefix(rows[0], "https://brand.example/") || !strings.HasSuffix(strings.TrimSpace(rows[0]), "…") {
		t.Errorf("link rows %q, want one row cut short with …:\n%s", rows, plain(v))
	}
	if !strings.Contains(v, "\x1b]8;;"+link) {
		t.Error("the link row is not a hyperlink to the whole link")
	}
	if !strings.Contains(strings.Join(strings.Fields(plain(v)), " "), "Cut to fit: widen the window, or press l to copy the link") {
		t.Errorf("nothing says how to get the whole link:\n%s", plain(v))
	}
	if !strings.Contains(plain(v), "Code expires in 10:00") {
		t.Errorf("countdown hidden at 40 columns:\n%s", plain(v))
	}
	_, cmd := h.m.Update(press("l"))
	if cmd == nil || fmt.Sprint(cmd()) != fmt.Sprint(tea.SetClipboard(link)()) {
		t.Fatal("l did not ask the terminal to copy the whole link")
	}
}

// Agent replies are drawn as Markdown; with NoColor they carry no colour.
func TestAgentRepliesAreMarkdown(t *testing.T) {
	f := newFake()
	f.history = []Turn{{Role: RoleAgent, Text: "Your **order** ships:\n\n- shoes\n- socks\n\n`A-1`", At: t0}}
	for _, noColor := range []bool{false, true} {
		opts := testOptions()
		opts.NoColor = noColor
		h := newHarness(t, f, opts, 80, 24)
		v := h.view()
		p := plain(v)
		if strings.Contains(p, "**order**") || !strings.Contains(p, "order ships") || !strings.Contains(p, "• shoes") && !strings.Contains(p, "* shoes") {
			t.Errorf("noColor=%v: not rendered as Markdown:\n%s", noColor, p)
		}
		if noColor && colourSGR(v) != "" {
			t.Errorf("NO_COLOR reply has colour %q", colourSGR(v))
		}
	}
}

// Non-text parts are shown, not dropped: data as indented JSON, files with name, type and
// size; /save writes inline files without overwriting.
func TestNonTextPartsShownAndSaved(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "label.pdf"), []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := newFake()
	f.history = []Turn{{Role: RoleAgent, Text: "Here you go.", At: t0, Parts: []Part{
		{Kind: PartData, JSON: []byte(`{"order":"A-1","items":[1,2]}`)},
		{Kind: PartFile, Name: "../label.pdf", MediaType: "application/pdf", Data: []byte("%PDF-1.7 hello")},
		{Kind: PartFile, Name: "photo.png", MediaType: "image/png", URL: "https://brand.example/p.png"},
	}}}
	opts := testOptions()
	opts.SaveDir = dir
	h := newHarness(t, f, opts, 80, 30)
	p := plain(h.view())
	for _, want := range []string{`"order": "A-1"`, "label.pdf (application/pdf, 14 B)", "/save", "photo.png (image/png, link): https://brand.example/p.png"} {
		if !strings.Contains(p, want) {
			t.Errorf("screen lacks %q:\n%s", want, p)
		}
	}
	h.typeText("/save")
	h.key("enter")
	h.until("saved", h.screenHas("Saved"))
	data, err := os.ReadFile(filepath.Join(dir, "label (1).pdf"))
	if err != nil || string(data) != "%PDF-1.7 hello" {
		t.Fatalf("saved file: %q, %v", data, err)
	}
	if old, _ := os.ReadFile(filepath.Join(dir, "label.pdf")); string(old) != "old" {
		t.Error("an existing file was overwritten")
	}
}

// Every string from the other side goes through clean before it reaches the screen: the
// header, the card, scopes, receipts, step-up text, parts and errors.
func TestRemoteTextIsSanitisedEverywhere(t *testing.T) {
	const evil = "\x1b]52;c;ZXZpbA==\x07\x1b[2J\u202e\u2066\x9b31m\x07"
	f := newFake()
	f.header = Header{BrandName: "Brand" + evil, BrandDomain: "d" + evil, Provider: "p" + evil, KID: "k" + evil, Sub: "s" + evil,
		Scopes: []string{"orders:read" + evil}, ExpiresAt: t0.Add(time.Hour)}
	f.card = "card" + evil
	f.scopes = []Scope{{ID: "orders:read" + evil, Description: "desc" + evil}}
	f.history = []Turn{
		{Role: RoleAgent, Text: "reply" + evil, At: t0, Receipt: &ReceiptMark{ID: "r" + evil, ScopesUsed: []string{"s" + evil}, Actions: []string{"a" + evil}, Problems: []string{"p" + evil}},
			Parts: []Part{{Kind: PartData, JSON: []byte(`"` + "x" + `"`)}, {Kind: PartFile, Name: "n" + evil, MediaType: "t" + evil, URL: "u" + evil}}},
		{Role: RoleError, Text: "err" + evil, At: t0},
	}
	f.reply = func(ctx context.Context, text string) (Reply, error) {
		return Reply{}, errors.New("boom" + evil)
	}
	h := newHarness(t, f, testOptions(), 100, 60)
	check := func(what string) {
		t.Helper()
		v := h.view()
		for _, bad := range []string{"\x1b]52", "\x1b[2J", "\u202e", "\u2066", "\x9b", "\x07"} {
			if strings.Contains(v, bad) {
				t.Errorf("%s: screen contains %q", what, bad)
			}
		}
	}
	check("open")
	h.typeText("/card")
	h.key("enter")
	check("card")
	h.key("ctrl+r")
	check("receipt")
	h.key("esc")
	h.typeText("hello")
	h.key("enter")
	h.until("error", h.screenHas("boom"))
	check("error")
}

// The help line and /help come from the one key map: every key listed is bound.
func TestKeyMapDrivesHelp(t *testing.T) {
	k := defaultKeys()
	help := k.commandHelp()
	for _, b := range [][2]string{{"Enter", "send"}, {"Alt+Enter", "newline"}, {"Tab", "complete"}, {"Ctrl+R", "receipt"}, {"Esc", "stop waiting"}, {"Ctrl+C", "quit"}} {
		if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(b[0]) + ` +` + regexp.QuoteMeta(b[1]) + `$`).MatchString(help) {
			t.Errorf("/help lacks %q", b)
		}
	}
	for _, c := range commands {
		if !strings.Contains(help, c.name) {
			t.Errorf("/help lacks %s", c.name)
		}
	}
	for _, item := range k.conversationHelp(false) {
		if item == "/help" {
			continue
		}
		name := strings.Fields(item)[0]
		found := false
		for _, b := range []struct{ h, key string }{{"Enter", "enter"}, {"Ctrl+C", "ctrl+c"}, {"Alt+Enter", "alt+enter"}, {"PgUp/PgDn", "pgup"}, {"Tab", "tab"}, {"Ctrl+R", "ctrl+r"}} {
			if b.h == name {
				found = true
				var once sync.Once
				once.Do(func() {})
				if !keyMatches(press(b.key), k.Send, k.Quit, k.Newline, k.PageUp, k.Complete, k.Receipt) {
					t.Errorf("help item %q: key %s is not bound", item, b.key)
				}
			}
		}
		if !found {
			t.Errorf("help item %q not checked", item)
		}
	}
}

// Update never calls the Backend for /new or /logout: they run as commands.
func TestNoBackendCallInsideUpdate(t *testing.T) {
	f := newFake()
	h := newHarness(t, f, testOptions(), 80, 24)
	h.typeText("/new")
	_, cmd := h.m.Update(press("enter"))
	if f.newConvs != 0 {
		t.Fatal("/new called NewConversation inside Update")
	}
	if cmd == nil {
		t.Fatal("/new returned no command")
	}
	var _ tea.Cmd = cmd
}

// Issue 10 (9): typing while the login panel is open is kept; Enter queues the message,
// which is sent once the login is over.
func TestIssue10_9_TypingDuringLoginIsKept(t *testing.T) {
	f, h, release := loginAsked(t, 80, 24)
	h.typeText("hello, come on") // "o" and "c" inside words are letters
	if got := h.m.c.in.value(); got != "hello, come on" {
		t.Fatalf("input = %q", got)
	}
	h.key("enter")
	if len(queueTexts(h.m.c)) != 1 {
		t.Fatalf("queue = %q, want the typed message", queueTexts(h.m.c))
	}
	release <- nil // nothing granted: the panel closes, the queue goes on
	h.until("queued message sent", func() bool { return slices.Contains(f.sentTexts(), "hello, come on") })
}
