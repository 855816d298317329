//go:build linux

package main

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// Faults found in a second real-terminal review of the chat, each replayed with the real
// binary in a pseudo-terminal.

// Late CSI answers of the terminal (to the chat's own queries) split across reads are not
// typed: ";2$y" and "u" leaked into the input.
func TestChatPTY_LateSplitCSIAnswersAreNotTyped(t *testing.T) {
	_, s, tr, _ := tracedChat(t, false)
	s.typeKeys("\x1b[?2026")
	time.Sleep(80 * time.Millisecond)
	s.typeKeys(";2$y")
	time.Sleep(50 * time.Millisecond)
	s.typeKeys("\x1b[?0")
	time.Sleep(100 * time.Millisecond)
	s.typeKeys("u")
	time.Sleep(100 * time.Millisecond)
	s.typeKeys("hello\r")
	if got := waitSent(t, s, tr, 1); got[0] != "hello" {
		t.Fatalf("the Brand received %q, want \"hello\"", got[0])
	}
	s.quit(t)
}

// Alt+] then a digit looks like the start of an OSC answer; what is typed after it is not
// held for ever: it is released as typed text after a short time, and at once by a byte
// that cannot continue an answer (Enter).
func TestChatPTY_HeldSequenceIsReleasedAsText(t *testing.T) {
	_, s, tr, _ := tracedChat(t, false)
	s.typeKeys("\x1b]12")
	time.Sleep(300 * time.Millisecond)
	s.typeKeys("hello")
	time.Sleep(700 * time.Millisecond)
	s.typeKeys(" world")
	time.Sleep(700 * time.Millisecond)
	s.typeKeys("\r")
	if got := waitSent(t, s, tr, 1); got[0] != "12hello world" {
		t.Fatalf("the Brand received %q, want \"12hello world\"", got[0])
	}
	s.typeKeys("\x1b]34abc\r") // Enter cannot continue an answer
	if got := waitSent(t, s, tr, 2); got[1] != "34abc" {
		t.Fatalf("the Brand received %q, want \"34abc\"", got[1])
	}
	s.quit(t)
}

// SIGTSTP from outside (kill -TSTP, not the Ctrl+Z key) stops the chat like Ctrl+Z: the
// terminal restored while stopped; fg puts it back in raw mode and redraws the chat.
func TestChatPTY_SIGTSTPFromOutsideSuspendsAndFgResumes(t *testing.T) {
	e := newPTYEnv(t)
	tr := traceFile(t)
	s := startJobShell(t, e, tr)
	s.waitFor("$ ", 0)
	s.typeKeys("(exec -a pact \"$PACTBIN\" --debug chat \"$BRAND\" 2>\"$TRACE\")\r")
	at := s.waitFor("identity only", 0)
	pgrp, err := unix.IoctlGetInt(int(s.ptmx.Fd()), unix.TIOCGPGRP)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pgrp, syscall.SIGTSTP); err != nil { // the chat's pid: it leads its group
		t.Fatal(err)
	}
	at = s.waitFor("Stopped", at)
	// Stopped, the terminal is the shell's again: the alternate screen left, the cursor shown.
	raw := s.raw()
	if strings.LastIndex(raw, "\x1b[?1049l") < strings.LastIndex(raw, "\x1b[?1049h") {
		t.Error("stopped on the alternate screen")
	}
	if strings.LastIndex(raw, "\x1b[?25h") < strings.LastIndex(raw, "\x1b[?25l") {
		t.Error("stopped with the cursor hidden")
	}
	mark := len(raw)
	s.typeKeys("fg\r")
	at = s.waitFor("identity only", at) // redrawn
	deadline := time.Now().Add(15 * time.Second)
	for {
		tio, err := unix.IoctlGetTermios(int(s.tty.Fd()), unix.TCGETS)
		if err != nil {
			t.Fatal(err)
		}
		if tio.Lflag&unix.ICANON == 0 && tio.Lflag&unix.ECHO == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after fg the terminal is not in raw mode (lflag %#x)", tio.Lflag)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(s.raw()[mark:], "\x1b[?1049h") {
		t.Error("the chat did not go back to the alternate screen after fg")
	}
	s.typeKeys("hello\r")
	if got := waitSent(t, s, tr, 1); got[0] != "hello" {
		t.Fatalf("the Brand received %q after fg", got[0])
	}
	s.typeKeys("\x03")
	s.waitFor("$ ", at)
}

// The card-changed panel fits a small window: at 40x12 the question and the answer line
// are on screen, the comparison scrolls with PgDn, and y then Enter still answers.
func TestChatPTY_CardChangedPanelFitsSmallWindow(t *testing.T) {
	e, _ := newRoguePTYEnv(t)
	e.run("card", e.brand) // first contact: the real card is pinned
	s := e.start("chat", e.brand)
	at := s.waitFor("Trust the new card and continue?", 0)
	s.mu.Lock()
	s.vt.Resize(40, 12)
	s.mu.Unlock()
	if err := pty.Setsize(s.ptmx, &pty.Winsize{Rows: 12, Cols: 40}); err != nil {
		t.Fatal(err)
	}
	at = s.waitFor("more below · PgDn", at)
	// The resized frame may reach the screen in several reads: wait (with a
	// deadline) for the question and the answer line on it together.
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		shown := s.shown()
		if strings.Contains(shown, "Trust the new card") && strings.Contains(shown, "> ") && strings.Contains(shown, "more below · PgDn") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the question or the answer line is off screen at 40x12:\n%s", shown)
		}
	}
	s.typeKeys("\x1b[6~") // PgDn
	s.waitFor("more above · PgUp", at)
	if shown := s.shown(); !strings.Contains(shown, "Trust the new card") {
		t.Fatalf("the question scrolled away:\n%s", shown)
	}
	s.typeKeys("y\r")
	s.waitFor("Message Example Co. Support", at)
	s.typeKeys("\x03")
	if code := s.exit(); code != 0 {
		t.Fatalf("exit %d after y and Ctrl+C, want 0", code)
	}
}
