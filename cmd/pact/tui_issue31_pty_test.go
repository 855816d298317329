//go:build linux

package main

import (
	"database/sql"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pact-cli/pact/demoprovider"
	"github.com/pact-cli/pact/store"
)

// Issue 31 (3): the terminal answers the chat's start-up query (its background colour)
// while the User types, between the two halves of a character: "caf\xc3", the answer,
// "\xa9". The answer is read as an answer and the character stays whole ("café 日"
// arrived as "caf 日").
func TestIssue31_3_AnswerBetweenTheHalvesOfACharacter(t *testing.T) {
	_, s, tr, _ := tracedChat(t, false)
	const answer = "\x1b]11;rgb:0000/0000/0000\x1b\\"
	var want []string
	for i, pieces := range [][]string{
		{"caf\xc3", answer, "\xa9 \xe6\x97", "\xa5\r"},                  // a whole answer
		{"caf\xc3", answer[:9], answer[9:] + "\xa9 \xe6\x97", "\xa5\r"}, // the answer split too
	} {
		for _, p := range pieces {
			s.typeKeys(p)
			time.Sleep(60 * time.Millisecond) // the pieces are read one by one
		}
		want = append(want, "café 日")
		if got := waitSent(t, s, tr, i+1); !slices.Equal(got, want) {
			t.Fatalf("the Brand received %q, want %q", got, want)
		}
	}
	s.quit(t)
}

// Issue 31 (4): escape sequences inside a bracketed paste are kept, shown visibly in the
// input (␛), and sent as pasted.
func TestIssue31_4_BracketedPasteKeepsEscapeSequences(t *testing.T) {
	_, s, tr, _ := tracedChat(t, true)
	text := "status \x1b[31mRED\x1b[0m and \x1b]8;;http://x\x07link\x1b]8;;\x07 and a lone \x1b."
	s.typeKeys("\x1b[200~" + text + "\x1b[201~")
	s.waitShown("status ␛[31mRED␛[0m")
	s.waitShown("control characters")
	s.typeKeys("\r")
	if got := waitSent(t, s, tr, 1); got[0] != text {
		t.Fatalf("the Brand received %q, want the paste as pasted %q", got[0], text)
	}
	s.quit(t)
}

// Issue 31 (4): a paste without bracketed paste that arrives in pieces tens of
// milliseconds apart (over SSH) is one message, sent by the User's Enter, not line by
// line as its pieces end.
func TestIssue31_4_SlowPasteIsOneMessage(t *testing.T) {
	_, s, tr, _ := tracedChat(t, true)
	lines := []string{"first line of the paste", "second line", "third line"}
	for i, l := range lines {
		piece := l
		if i < len(lines)-1 {
			piece += "\r"
		}
		s.typeKeys(piece)
		time.Sleep(40 * time.Millisecond) // SSH: the next piece comes later (over 15 ms)
	}
	s.waitShown("third line")
	if got := sentTexts(t, tr); len(got) != 0 {
		t.Fatalf("the paste was sent before Enter: %q", got)
	}
	s.typeKeys("\r")
	if got := waitSent(t, s, tr, 1); len(got) != 1 || got[0] != strings.Join(lines, "\n") {
		t.Fatalf("the Brand received %q, want the paste as one message", got)
	}
	s.quit(t)
}

// Issue 31 (10): with TERM unset, `pact chat` on a terminal is line mode and writes no
// escape code (it wrote colour); the history it replays on opening has the Brand's lines
// in the gutter, as live replies are, so none can pass for one of pact's.
func TestIssue31_10_LineModeWithoutTERM(t *testing.T) {
	e := newPTYEnv(t)
	e.env = slices.DeleteFunc(e.env, func(v string) bool { return strings.HasPrefix(v, "TERM=") })
	s := e.startPTY(false, nil, "chat", e.brand)
	s.waitFor("you›", 0)
	s.typeKeys("hello\r")
	s.waitFor("What is your order number?", 0)
	s.typeKeys("\x04") // Ctrl+D: the end of input
	if code := s.exit(); code != 0 {
		t.Fatalf("exit %d:\n%s", code, s.text())
	}
	s = e.startPTY(false, nil, "chat", e.brand)
	s.waitFor("you›", s.waitFor("What is your order number?", 0))
	s.typeKeys("\x04")
	if code := s.exit(); code != 0 {
		t.Fatalf("exit %d:\n%s", code, s.text())
	}
	if raw := s.raw(); strings.Contains(raw, "\x1b") {
		t.Errorf("escape codes with TERM unset: %q", raw)
	}
	for _, l := range strings.Split(s.text(), "\n") {
		if strings.Contains(l, "What is your order number?") && !strings.HasPrefix(l, "│ ") {
			t.Errorf("a replayed reply outside the gutter: %q", l)
		}
	}
}

// Issue 31, review: line mode on a terminal (here TERM=dumb) says, as it opens, which of
// the User's messages got no answer before a chat was left, as the full-screen chat does,
// and offers to fetch the answer under the same messageId: /again does (the Brand's agent
// runs once), /drop gives the message up (it is not offered again).
func TestIssue31_LineModeOffersTheUnansweredMessages(t *testing.T) {
	// The Brand answers nothing until the test opens the gate.
	gate := make(chan struct{})
	e := newPactEnv(t, demoprovider.Config{PollInterval: time.Second, AgentGate: gate})
	defer func() {
		select {
		case <-gate:
		default:
			close(gate)
		}
	}()
	e.env = append(e.env, "TERM=dumb")
	// leaveWaiting sends text and leaves the chat (Ctrl+C) once the message is on
	// record as sent; it returns its messageId.
	leaveWaiting := func(text string) string {
		t.Helper()
		s := e.startPTY(false, nil, "chat", e.brand)
		s.waitFor("you›", 0)
		s.typeKeys(text + "\r")
		id := waitOnRecord(t, e, text)
		s.typeKeys("\x03")
		s.exit()
		return id
	}
	leaveWaiting("hello")
	s := e.startPTY(false, nil, "chat", e.brand)
	at := s.waitFor("got no answer before the chat was left", 0)
	if txt := s.text(); !strings.Contains(txt, "hello  · no answer yet") || !strings.Contains(txt, "/again") || !strings.Contains(txt, "same message id") {
		t.Fatalf("line mode does not say which message got no answer and how to fetch it:\n%s", txt)
	}
	s.typeKeys("/drop\r")
	s.waitFor("Gave up your message", at)
	s.typeKeys("\x04")
	s.exit()
	s = e.startPTY(false, nil, "chat", e.brand)
	s.waitFor("you›", 0) // after what the opening says
	if txt := s.text(); strings.Contains(txt, "no answer") {
		t.Fatalf("a message given up with /drop is offered again:\n%s", txt)
	}
	s.typeKeys("\x04")
	s.exit()

	id := leaveWaiting("where is my order A-10001?")
	s = e.startPTY(false, nil, "chat", e.brand)
	at = s.waitFor("got no answer before the chat was left", 0)
	close(gate)
	s.typeKeys("/again\r")
	s.waitFor("is being processed", at)
	s.typeKeys("\x04")
	if code := s.exit(); code != 0 {
		t.Fatalf("exit %d after /again:\n%s", code, s.text())
	}
	if n := e.srv.AgentRuns(); n != 1 {
		t.Errorf("the Brand's agent ran %d times, want once", n)
	}
	var convs []struct {
		ContextID string `json:"contextId"`
	}
	json.Unmarshal([]byte(e.run("conversations", "--json")), &convs)
	if len(convs) != 1 {
		t.Fatalf("conversations after /again: %+v", convs)
	}
	var rec struct {
		Turns []struct {
			MessageID, Role, Text string
		} `json:"turns"`
	}
	json.Unmarshal([]byte(e.run("conversations", "show", convs[0].ContextID, "--json")), &rec)
	if len(rec.Turns) != 2 || rec.Turns[0].MessageID != id || rec.Turns[0].Text != "where is my order A-10001?" {
		t.Fatalf("/again did not send the message under its messageId %s: %+v", id, rec.Turns)
	}
}

// waitOnRecord waits (at most 15 s) until the message text is on record as sent and
// unanswered in e's profile, and returns its messageId.
func waitOnRecord(t *testing.T, e *pactEnv, text string) string {
	t.Helper()
	path := filepath.Join(e.dir, "pact", "data", "profiles", "default", store.DBFileName)
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := sql.Open("sqlite", "file:"+path+"?mode=ro"); err == nil {
			var id string
			err := c.QueryRow(`SELECT message_id FROM sends WHERE text = ? AND state = ?`, text, store.SendSending).Scan(&id)
			c.Close()
			if err == nil {
				return id
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%q is not on record as sent within 15s", text)
		}
	}
}
