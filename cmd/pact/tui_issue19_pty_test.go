//go:build linux

package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pact-cli/pact/demoprovider"
)

// Issue 19, in the real binary on a pty: what the User types is never lost or changed.

// The texts of the report, pasted without bracketed paste: each reaches the Brand whole,
// as one message, and none runs a command.
func TestIssue19_SlashTextsAreSentWhole(t *testing.T) {
	_, s, tr, _ := tracedChat(t, true)
	texts := []string{
		"/home/jane/invoice.pdf says order A-88213 was charged twice.\nPlease refund the second charge.",
		"/new\nhello",
		"/login orders:read\nI want to know where my order is",
	}
	for i, text := range texts {
		s.typeKeys(strings.ReplaceAll(text, "\n", "\r") + "\r")
		waitSent(t, s, tr, i+1)
		s.waitFor("", 0)
	}
	if got := waitSent(t, s, tr, len(texts)); !slices.Equal(got, texts) {
		t.Fatalf("the Brand received %q, want %q", got, texts)
	}
	if txt := s.text(); strings.Contains(txt, "New conversation") || strings.Contains(txt, "Unknown command") || strings.Contains(txt, "is not a command") {
		t.Errorf("a text ran as a command:\n%s", tail(txt, 2000))
	}
	s.quit(t)
}

// Esc while a reply is on its way stops the wait and nothing more: the draft stays in the
// input, the queued message stays queued above it, the late answer is shown, then the
// queued message goes.
func TestIssue19_EscStopsWaitingNothingMore(t *testing.T) {
	// The answers are held until the screen after Esc has been checked: a
	// fixed delay let a loaded machine answer "hello" before Esc was typed.
	gate := make(chan struct{})
	e := newPactEnv(t, demoprovider.Config{PollInterval: time.Second, AgentGate: gate})
	tr := traceFile(t)
	s := e.startPTY(true, tr, "--debug", "chat", e.brand)
	defer func() {
		select {
		case <-gate:
		default:
			close(gate)
		}
	}()
	at := s.waitFor("identity only", 0)
	s.typeKeys("hello\r")
	at = s.waitFor("waiting for", at)
	s.typeKeys("where is my order A-10001?")
	s.waitFor("where is my order A-10001?", at)
	s.typeKeys("\r")
	at = s.waitFor("queued 1 · where is my order A-10001?", at)
	s.typeKeys("my draft")
	s.waitFor("> my draft", 0)
	s.typeKeys("\x1b")
	at = s.waitFor("Stopped waiting", at)
	// The frame that says "Stopped waiting" may reach the terminal in several
	// reads: wait (bounded) for each part rather than reading the screen once.
	// No answer can come meanwhile (the gate is shut), so a lost draft, queue
	// or sent message never comes back and fails here.
	s.waitShown("> my draft")
	s.waitShown("queued 1 · where is my order")
	s.waitShown("no answer yet")
	close(gate)
	at = s.waitFor("What is your order number?", at) // the late answer to "hello"
	s.waitFor("Order A-10001 (running shoes) is being processed", at)
	if got := sentTexts(t, tr); !slices.Equal(got, []string{"hello", "where is my order A-10001?"}) {
		t.Fatalf("the Brand received %q", got)
	}
	if !strings.Contains(s.shown(), "> my draft") {
		t.Errorf("the draft is gone:\n%s", s.shown())
	}
	s.quit(t)
}

var sentIDRE = regexp.MustCompile(`"messageId":\s*"([^"]+)"`)

// sentIDs are the messageIds of the message:send requests in the trace, in order.
func sentIDs(t *testing.T, f *os.File) []string {
	t.Helper()
	data, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "> ") && strings.Contains(l, `"ROLE_USER"`) {
			if m := sentIDRE.FindStringSubmatch(l); m != nil {
				out = append(out, m[1])
			}
		}
	}
	return out
}

// Ctrl+C while a reply is on its way leaves the message on record, sent and unanswered,
// and keeps the draft; the next chat shows both, and Enter fetches the answer by sending
// the message again under the same messageId (§4.3).
func TestIssue19_QuitWhileWaitingKeepsEverything(t *testing.T) {
	// The Brand answers nothing until the reopened chat is checked (a gate, not a delay
	// that a loaded machine may outlast or a quiet one wait out).
	gate := make(chan struct{})
	e := newPactEnv(t, demoprovider.Config{PollInterval: time.Second, AgentGate: gate})
	defer func() {
		select {
		case <-gate:
		default:
			close(gate)
		}
	}()
	tr := traceFile(t)
	s := e.startPTY(true, tr, "--debug", "chat", e.brand)
	at := s.waitFor("identity only", 0)
	s.typeKeys("hello\r")
	s.waitFor("waiting for", at) // the trace shows a request with its answer only
	s.typeKeys("my draft")
	s.waitFor("> my draft", 0)
	s.quit(t)

	s = e.startPTY(true, tr, "--debug", "chat", e.brand)
	at = s.waitFor("same message id", 0)
	scr := s.shown()
	if !strings.Contains(scr, "no answer yet") || !strings.Contains(scr, "> my draft") || !strings.Contains(scr, "hello") {
		t.Fatalf("the reopened chat lost the unanswered message or the draft:\n%s", scr)
	}
	s.typeKeys("\x15") // Ctrl+U: the draft goes (Ctrl+Y would bring it back)
	s.waitFor("Ctrl+Y brings it back", at)
	close(gate)
	s.typeKeys("\r")
	s.waitFor("What is your order number?", at)
	ids := sentIDs(t, tr)
	if got := sentTexts(t, tr); !slices.Equal(got, []string{"hello", "hello"}) || len(ids) != 2 || ids[0] != ids[1] {
		t.Fatalf("the Brand received %q with ids %q, want hello twice under one messageId", got, ids)
	}
	if n := e.srv.AgentRuns(); n != 1 {
		t.Errorf("the Brand's agent ran %d times, want once", n)
	}
	s.quit(t)
}

// Data and file parts are kept with their turn: shown again when the chat is reopened,
// saved by /save from there, printed by pact conversations show and its --json.
func TestIssue19_PartsAreKeptInHistory(t *testing.T) {
	url := cannedProvider(t, []any{
		map[string]any{"text": "Here is your invoice."},
		map[string]any{"data": map[string]any{"order": "A-88213", "total": 42}},
		map[string]any{"raw": "JVBERi0xLjcgaW52b2ljZQ==", "filename": "invoice.pdf", "mediaType": "application/pdf"},
	})
	home := t.TempDir()
	e := &pactEnv{t: t, dir: home, env: []string{"PACT_HOME=" + filepath.Join(home, "pact"), "PACT_KEYRING=file", "PATH=" + os.Getenv("PATH"),
		"HOME=" + home, "TERM=xterm-256color", "LANG=C.UTF-8"}}
	e.run("init", "--issuer", "http://127.0.0.1:1")
	e.run("provider", "add", url, "--audience", "md")

	s := e.start("chat", url)
	at := s.waitFor("Message Markdown Co.", 0)
	s.typeKeys("my invoice please\r")
	s.waitFor("invoice.pdf", at)
	s.quit(t)

	// Reopened in another folder: the parts are shown, and /save writes the kept file.
	dir := t.TempDir()
	cmd := e.command(context.Background(), "chat", url)
	cmd.Dir = dir
	s = startOnPTY(t, cmd, true, nil)
	at = s.waitFor("invoice.pdf", 0)
	s.waitFor("A-88213", 0)
	s.typeKeys("/save\r")
	s.waitFor("Saved", at)
	s.quit(t)
	if data, err := os.ReadFile(filepath.Join(dir, "invoice.pdf")); err != nil || string(data) != "%PDF-1.7 invoice" {
		t.Fatalf("/save after reopening wrote %q (%v)", data, err)
	}

	out := e.run("conversations", "show", "ctx-1")
	for _, want := range []string{"my invoice please", "Here is your invoice.", `data {"order":"A-88213","total":42}`, "file invoice.pdf (application/pdf, 16 bytes)"} {
		if !strings.Contains(out, want) {
			t.Errorf("conversations show lacks %q:\n%s", want, out)
		}
	}
	var rec struct {
		Turns []struct {
			Role  string `json:"role"`
			Parts []struct {
				Kind   string          `json:"kind"`
				Name   string          `json:"name"`
				Data   json.RawMessage `json:"data"`
				SHA256 string          `json:"sha256"`
				Size   int64           `json:"size"`
			} `json:"parts"`
		} `json:"turns"`
	}
	if err := json.Unmarshal(e.output("conversations", "show", "ctx-1", "--json"), &rec); err != nil {
		t.Fatal(err)
	}
	if len(rec.Turns) != 2 || len(rec.Turns[1].Parts) != 2 || rec.Turns[1].Parts[1].Name != "invoice.pdf" || rec.Turns[1].Parts[1].Size != 16 || rec.Turns[1].Parts[0].Kind != "data" {
		t.Fatalf("conversations show --json: %+v", rec)
	}
}

// TERM=dumb (no cursor addressing): `pact chat` on a terminal is line mode, and writes no
// escape sequence (no alternate screen, no mouse, no queries).
func TestIssue19_DumbTerminalIsLineMode(t *testing.T) {
	e := newPTYEnv(t)
	e.env = append(e.env, "TERM=dumb")
	s := e.startPTY(false, nil, "chat", e.brand)
	s.waitFor("you›", 0)
	s.typeKeys("hello\r")
	s.waitFor("What is your order number?", 0)
	s.typeKeys("\x04") // Ctrl+D: the end of input
	if code := s.exit(); code != 0 {
		t.Fatalf("exit %d:\n%s", code, s.text())
	}
	if raw := s.raw(); strings.Contains(raw, "\x1b") {
		t.Errorf("escape sequences on a dumb terminal: %q", raw)
	}
}

// The first frame is drawn at the window's size (here 100×30), not at 80×24 and redrawn.
func TestIssue19_FirstFrameUsesTheRealSize(t *testing.T) {
	e := newPTYEnv(t)
	s := startOnPTYSize(t, e.command(context.Background(), "chat", e.brand), 100, 30, true, nil)
	s.waitFor("identity only", 0)
	txt := s.text()
	i := strings.Index(txt, "─")
	if i < 0 {
		t.Fatalf("no rule drawn:\n%s", txt)
	}
	n := 0
	for _, r := range txt[i:] {
		if r != '─' {
			break
		}
		n++
	}
	if n != 100 {
		t.Errorf("the first frame's rule is %d cells wide, want 100 (the window)", n)
	}
	s.quit(t)
}

// At 40 columns the trust badge is shown in its short form, never cut; the card's host
// stays beside it and the name gives way (issue 31: the origin was dropped first).
func TestIssue19_TrustBadgeAt40Columns(t *testing.T) {
	e := newPTYEnv(t)
	s := startOnPTYSize(t, e.command(context.Background(), "chat", e.brand), 40, 20, true, nil)
	s.waitFor("identity only", 0)
	host := strings.TrimPrefix(e.brand, "http://")
	if scr := s.shown(); !strings.Contains(scr, "Example Co") || !strings.Contains(scr, "… "+host+" signed ✓") {
		t.Errorf("the header at 40 columns:\n%s", scr)
	}
	s.quit(t)
}

// At 40×15 the login panel scrolls: PgDn brings the scopes asked into view.
func TestIssue19_LoginPanelScrollsAt40x15(t *testing.T) {
	e := newPTYEnv(t)
	s := startOnPTYSize(t, e.command(context.Background(), "--no-browser", "chat", e.brand), 40, 15, true, nil)
	at := s.waitFor("identity only", 0)
	s.typeKeys("/login orders:cancel refunds:issue\r")
	at = s.waitFor("Code:", at) // the code and the link come first, the scopes below them
	s.waitFor("more below · PgDn", 0)
	if strings.Contains(s.shown(), "refunds:issue —") {
		t.Fatalf("the scopes fit at 40×15: this test needs them below the fold:\n%s", s.shown())
	}
	s.typeKeys("\x1b[6~\x1b[6~") // PgDn PgDn
	s.waitFor("more above · PgUp", at)
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(s.shown(), "refunds:issue") {
		if time.Now().After(deadline) {
			t.Fatalf("PgDn did not bring the scopes into view:\n%s", s.shown())
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.typeKeys("\x1b") // Esc: cancel the login
	s.waitFor("Login cancelled", at)
	s.quit(t)
}

// Backspace removes a character as people see it: the flag 🇯🇵 and the ZWJ sequence 👩🏽‍💻
// go whole, and what is sent is what the screen showed.
func TestIssue19_BackspaceRemovesWholeCharacters(t *testing.T) {
	_, s, tr, at := tracedChat(t, true)
	s.typeKeys("a🇯🇵")
	s.waitFor("a🇯🇵", at)
	s.typeKeys("\x7f") // Backspace
	s.typeKeys("b👩🏽‍💻")
	s.waitFor("b👩🏽\u200d💻", at)
	s.typeKeys("\x7f")
	s.typeKeys("c")
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(s.shown(), "> abc") {
		if time.Now().After(deadline) {
			t.Fatalf("the input is not \"abc\":\n%s", s.shown())
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.typeKeys("\r")
	if got := waitSent(t, s, tr, 1); got[0] != "abc" {
		t.Fatalf("the Brand received %q, want \"abc\"", got[0])
	}
	s.quit(t)
}
