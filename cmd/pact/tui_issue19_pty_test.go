//go:build linux

package main

import (
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
	e := newPactEnv(t, demoprovider.Config{PollInterval: time.Second, AgentDelay: 2 * time.Second})
	tr := traceFile(t)
	s := e.startPTY(true, tr, "--debug", "chat", e.brand)
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
	scr := s.shown()
	if !strings.Contains(scr, "> my draft") || !strings.Contains(scr, "queued 1 · where is my order") || !strings.Contains(scr, "no answer yet") {
		t.Fatalf("after Esc the screen lost the draft, the queue or the sent message:\n%s", scr)
	}
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
