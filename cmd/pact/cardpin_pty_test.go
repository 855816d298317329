//go:build linux

package main

import (
	"strings"
	"testing"
)

// A2A §8.4 and pinning: when the Brand's card changed since first contact,
// the chat opens on the y/n panel with old and new side by side. n quits
// (exit 1) with nothing sent; y trusts the new card (each followed by Enter:
// typed text never answers) and the chat opens with
// "signed by DOMAIN ✓" in its header.
func TestChatTUIInPTY_CardChangedPanel(t *testing.T) {
	e, srv := newRoguePTYEnv(t)
	e.run("card", e.brand) // first contact: the real card is pinned
	domain := strings.TrimPrefix(e.brand, "http://")

	s := e.start("chat", e.brand)
	at := s.waitFor("The Agent Card of "+e.brand+" changed", 0)
	at = s.waitFor("signed by another key", at)
	at = s.waitFor("accepted", at)
	at = s.waitFor("Trust the new card and continue?", at)
	// Text typed in a burst by someone who thought they were in the chat
	// decides nothing: "my order" has a y, "/login" an n.
	s.typeKeys("my order")
	s.waitShown("> my order█")
	s.typeKeys("\r/login\r")
	at = s.waitFor("Answer y or n, then press Enter.", at)
	s.handledSoFar("> ") // the whole burst, both Enters included, was handled
	if !strings.Contains(s.shown(), "Trust the new card and continue?") || strings.Contains(s.text()[at:], "Message Example Co. Support") {
		t.Fatalf("a burst of text answered the panel:\n%s", tail(s.text(), 2000))
	}
	s.typeKeys("n\r")
	if code := s.exit(); code != 1 {
		t.Fatalf("n: exit %d, want 1; screen:\n%s", code, tail(s.text(), 2000))
	}
	s.checkRestored()
	if strings.Contains(s.text(), "Message Example Co. Support") {
		t.Fatal("the chat opened after n")
	}
	if n := srv.AgentRuns(); n != 0 {
		t.Fatalf("the Provider ran its agent %d times before the User accepted the change", n)
	}

	s = e.start("chat", e.brand)
	s.waitFor("Trust the new card and continue?", 0)
	s.typeKeys("y\r")
	at = s.waitFor("Message Example Co. Support", 0)
	s.waitFor("signed by "+domain+" ✓", 0)
	s.typeKeys("where is my order A-10001?\r")
	s.waitFor("Order A-10001 (running shoes) is being processed", at)
	s.typeKeys("\x03")
	if code := s.exit(); code != 0 {
		t.Fatalf("exit %d after y and Ctrl+C, want 0", code)
	}
	s.checkRestored()
}

// `pact card BRAND --trust` on a terminal shows old and new side by side
// with the fingerprint and accepts only after a yes to exactly that card.
func TestCardTrustInPTY_AsksBeforeAccepting(t *testing.T) {
	e, srv := newRoguePTYEnv(t)
	e.run("card", e.brand) // first contact: the real card is pinned

	s := e.start("card", e.brand, "--trust")
	at := s.waitFor("signed by another key", 0)
	at = s.waitFor("accepted", at)
	s.waitFor("Accept this card (fingerprint ", at)
	s.typeKeys("\r")
	if code := s.exit(); code != 1 {
		t.Fatalf("no answer: exit %d, want 1; screen:\n%s", code, tail(s.text(), 2000))
	}
	s.waitFor("you did not accept the changed card", at)

	s = e.start("card", e.brand, "--trust")
	s.waitFor("Accept this card (fingerprint ", 0)
	s.typeKeys("y\r")
	s.waitFor("accepted now (--trust, fingerprint ", 0)
	if code := s.exit(); code != 0 {
		t.Fatalf("y: exit %d, want 0; screen:\n%s", code, tail(s.text(), 2000))
	}
	s = e.start("card", e.brand)
	s.waitFor("matches what you accepted", 0)
	s.exit()
	if n := srv.AgentRuns(); n != 0 {
		t.Fatalf("the Provider ran its agent %d times", n)
	}
}
