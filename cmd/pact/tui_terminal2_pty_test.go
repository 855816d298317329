//go:build linux

package main

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/charmbracelet/x/vt"
)

// Faults found by a tester in real terminals after issue 10, each replayed with the real
// binary in a pseudo-terminal.

// A character whose two halves arrive far apart (longer than bubbletea's 50 ms escape
// timeout) is kept whole.
func TestChatPTY_CharacterSplitByALongGap(t *testing.T) {
	_, s, tr, _ := tracedChat(t, true)
	var want []string
	for i, gap := range []time.Duration{60 * time.Millisecond, 300 * time.Millisecond} {
		s.typeKeys("caf\xc3")
		time.Sleep(gap)
		s.typeKeys("\xa9 \xe6\x97")
		time.Sleep(gap)
		s.typeKeys("\xa5\r")
		want = append(want, "café 日")
		if got := waitSent(t, s, tr, i+1); !slices.Equal(got, want) {
			t.Fatalf("with %s between the halves the Brand received %q, want %q", gap, got, want)
		}
	}
	s.quit(t)
}

// A late background-colour answer (the terminal answers the chat's query after it gave
// up) split in two leaves nothing in the input.
func TestChatPTY_LateSplitColourAnswerIsNotTyped(t *testing.T) {
	_, s, tr, _ := tracedChat(t, false)
	s.typeKeys("\x1b]11;rgb:1e1e/")
	time.Sleep(200 * time.Millisecond)
	s.typeKeys("1e1e/1e1e\x1b\\")
	time.Sleep(100 * time.Millisecond)
	s.typeKeys("hello\r")
	if got := waitSent(t, s, tr, 1); got[0] != "hello" {
		t.Fatalf("the Brand received %q, want \"hello\"", got[0])
	}
	s.quit(t)
}

// After a Provider restart the chat asks "Start a new conversation? (y/n)". Text that
// arrives in one burst ("yes please") is typed, not an answer; what is submitted while the
// question is open is sent after the failed message, once a lone "y" answers.
func TestChatPTY_QuestionKeepsTextTypedMeanwhile(t *testing.T) {
	e, s, tr, at := tracedChat(t, true)
	s.typeKeys("hello\r")
	at = s.waitFor("What is your order number?", at)

	e.restartProvider()

	s.typeKeys("where is my order A-10001?\r")
	s.waitFor("Start a new conversation", at)
	s.typeKeys("yes please")
	// Echoed whole: every key of the burst was handled, the y first.
	s.waitShown("> yes please")
	if !strings.Contains(s.shown(), "(y/n)") {
		t.Fatalf("a burst answered the question:\n%s", s.shown())
	}
	s.typeKeys("\r") // queued while the question is open
	time.Sleep(200 * time.Millisecond)
	s.typeKeys("y")
	got := waitSent(t, s, tr, 4)
	if want := []string{"hello", "where is my order A-10001?", "where is my order A-10001?", "yes please"}; !slices.Equal(got, want) {
		t.Fatalf("the Brand received %q, want %q", got, want)
	}
	s.quit(t)
}

// SIGINT sent to the chat from outside ends it like any interrupted command: exit 130,
// said in plain words, the terminal restored.
func TestChatPTY_SIGINTExits130(t *testing.T) {
	e := newPTYEnv(t)
	s := e.start("chat", e.brand)
	s.waitFor("identity only", 0)
	if err := s.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := s.exit(); code != exitCancelled {
		t.Fatalf("pact chat exited %d after SIGINT, want %d", code, exitCancelled)
	}
	s.checkRestored()
	s.drained()
	if !strings.Contains(s.text(), "interrupted") {
		t.Errorf("nothing said why the chat ended:\n%s", tail(s.text(), 500))
	}
}

// Ctrl+Z in a chat that no job-control shell can resume (here the chat leads its own
// session, like a terminal window running it directly) says so and goes on: the next
// words are the User's message, not lost to a stopped process.
func TestChatPTY_CtrlZWithoutJobControlSaysSo(t *testing.T) {
	_, s, tr, at := tracedChat(t, true)
	s.typeKeys("\x1a")
	s.waitFor("Ctrl+Z does nothing here", at)
	s.typeKeys("hello\r")
	if got := waitSent(t, s, tr, 1); got[0] != "hello" {
		t.Fatalf("the Brand received %q", got[0])
	}
	s.quit(t)
}

// A browser program that exits with a failure after a second is reported in the login
// panel, which stops saying the link is open.
func TestChatPTY_LoginPanelReportsFailingBrowser(t *testing.T) {
	e := newPTYEnv(t)
	dir := t.TempDir()
	browser := filepath.Join(dir, "failing-browser")
	if err := os.WriteFile(browser, []byte("#!/bin/sh\nsleep 1\nexit 3\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	for i, v := range e.env {
		if strings.HasPrefix(v, "PACT_BROWSER=") {
			e.env[i] = "PACT_BROWSER=" + browser
		}
	}
	s := e.start("chat", e.brand)
	at := s.waitFor("identity only", 0)
	s.typeKeys("/login orders:read\r")
	at = s.waitFor("Asked your browser to open it", at)
	s.waitFor("failing-browser exited with status 3", at)
	if strings.Contains(s.shown(), "Asked your browser to open it:") {
		t.Errorf("the panel still claims the browser has the link:\n%s", s.shown())
	}
	s.quit(t)
}

// During `pact login` on a terminal, what the browser program prints never lands in the
// countdown line: its stdout is dropped, its stderr comes as whole lines of its own,
// marked as the browser's.
func TestLoginBrowserOutputDoesNotCorruptTheCountdownInPTY(t *testing.T) {
	dir := t.TempDir()
	e := newCLIEnv(t, "PACT_BROWSER="+slowBrowser(t, dir, "sleep 0.5; echo BROWSER STDOUT NOISE; printf 'BROWSER STDERR ' >&2; sleep 0.3; echo NOISE >&2; exec sleep 20"))
	c := e.startTerm(nil, "login", e.brand, "--scope", "orders:read")
	at := c.waitFor("Waiting for your approval", 0)
	at = c.waitFor("browser: BROWSER STDERR NOISE", at)
	pid := readPid(t, dir)
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	c.waitCount("expires in", at, 3) // three more countdown frames drawn after the noise
	c.mu.Lock()
	raw := c.out.String()
	c.mu.Unlock()
	term := vt.NewEmulator(100, 24)
	go io.Copy(io.Discard, term)
	term.Write([]byte(raw))
	screen := term.String()
	if strings.Contains(screen, "STDOUT NOISE") {
		t.Errorf("the browser's stdout reached the terminal:\n%s", screen)
	}
	found := false
	for _, l := range strings.Split(screen, "\n") {
		if strings.TrimSpace(l) == "browser: BROWSER STDERR NOISE" {
			found = true
		}
		if strings.Contains(l, "NOISE") && strings.Contains(l, "expires in") {
			t.Errorf("the browser's output is mixed with the countdown: %q", l)
		}
	}
	if !found {
		t.Errorf("the browser's stderr is not on a line of its own:\n%s", screen)
	}
	c.typeKeys("\x03")
	if code := c.exit(15 * time.Second); code != exitCancelled {
		t.Fatalf("exit code %d after Ctrl+C, want %d", code, exitCancelled)
	}
}

// Ctrl+Z in a chat started as a job of an interactive shell stops it with the terminal
// restored; fg brings it back, and what is typed then is the User's message again.
func TestChatPTY_CtrlZSuspendsAndFgResumes(t *testing.T) {
	e := newPTYEnv(t)
	tr := traceFile(t)
	s := startJobShell(t, e, tr)
	s.waitFor("$ ", 0)
	s.typeKeys("(exec -a pact \"$PACTBIN\" --debug chat \"$BRAND\" 2>\"$TRACE\")\r")
	at := s.waitFor("identity only", 0)
	s.typeKeys("\x1a")
	at = s.waitFor("Stopped", at)
	s.typeKeys("fg\r")
	at = s.waitFor("identity only", at)
	s.typeKeys("hello\r")
	if got := waitSent(t, s, tr, 1); got[0] != "hello" {
		t.Fatalf("the Brand received %q after fg", got[0])
	}
	s.typeKeys("\x03")
	s.waitFor("$ ", at)
}
