//go:build linux

package main

import (
	"strings"
	"testing"
	"time"

	"github.com/pact-cli/pact/demoprovider"
)

// Issue #23: in the chat, the streaming Brand's reply grows on screen
// (marked "…" while it arrives) and then stands complete, stored: a chat
// opened again shows it, and /quit leaves both (it was kept as the draft, so
// the reopened chat's /quit became "/quit/quit", sent as a message).
func TestChatTUIInPTY_StreamedReplyGrows(t *testing.T) {
	e := newPactEnv(t, demoprovider.Config{PollInterval: time.Second, StreamWordDelay: 60 * time.Millisecond})
	s := e.start("chat", e.brand)
	at := s.waitFor("identity only", 0)
	s.typeKeys("where is my order A-10001?\r")
	s.waitFor("Example Co. Support …", at) // the reply as it arrives
	s.waitFor("has not shipped yet", at)
	s.waitGone("waiting for Example Co. Support")
	if strings.Contains(s.shown(), "Support …") {
		t.Fatalf("the complete reply is still marked as arriving:\n%s", s.shown())
	}
	s.typeKeys("/quit\r")
	if code := s.exit(); code != 0 {
		t.Fatalf("pact chat exited %d", code)
	}
	s = e.start("chat", e.brand)
	s.waitFor("has not shipped yet", 0)
	s.typeKeys("/quit\r")
	if code := s.exit(); code != 0 {
		t.Fatalf("the reopened chat exited %d", code)
	}
}
