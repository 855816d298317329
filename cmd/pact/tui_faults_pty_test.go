//go:build linux

package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The faults of issue 10 that live in the full-screen chat, each rebuilt in a real
// pseudo-terminal with the real binary and the exact input bursts of the report. What the
// Brand received is read from the --debug trace (stderr to a file, so the chat still
// opens full-screen), which shows every message:send body.

// traceFile is a file for pact's --debug trace.
func traceFile(t *testing.T) *os.File {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "trace"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// tracedChat is `pact --debug chat BRAND` on a fresh profile (newPTYEnv) in a pty whose
// terminal answers queries or not (answer), its trace in tr, once it has opened: at is where
// the screen showed "identity only".
func tracedChat(t *testing.T, answer bool) (e *pactEnv, s *screen, tr *os.File, at int) {
	t.Helper()
	e = newPTYEnv(t)
	tr = traceFile(t)
	s = e.startPTY(answer, tr, "--debug", "chat", e.brand)
	at = s.waitFor("identity only", 0)
	return e, s, tr, at
}

var sentTextRE = regexp.MustCompile(`"text":\s*("(?:[^"\\]|\\.)*")`)

// sentTexts are the texts of the message:send requests in the trace, in order.
func sentTexts(t *testing.T, f *os.File) []string {
	t.Helper()
	data, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if !strings.HasPrefix(l, "> ") || !strings.Contains(l, `"ROLE_USER"`) {
			continue
		}
		for _, m := range sentTextRE.FindAllStringSubmatch(l, -1) {
			var s string
			if json.Unmarshal([]byte(m[1]), &s) == nil {
				out = append(out, s)
			}
		}
	}
	return out
}

// waitSent waits (at most 15 s) until n messages were sent and returns their texts.
func waitSent(t *testing.T, s *screen, f *os.File, n int) []string {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		got := sentTexts(t, f)
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d message(s) sent within 15s, want %d: %q; screen text:\n%s", len(got), n, got, tail(s.text(), 2000))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *screen) quit(t *testing.T) {
	t.Helper()
	s.typeKeys("\x03")
	if code := s.exit(); code != 0 {
		t.Fatalf("pact chat exited %d after Ctrl+C, want 0", code)
	}
	s.checkRestored()
}

// Issue 10 (1): on a terminal that never answers queries, commands other than the chat
// return at once (the fault was a 5 s wait) and write no escape sequence; the chat opens
// without waiting for the terminal either.
func TestIssue10_1_OnlyTheChatTouchesTheTerminal(t *testing.T) {
	e := newPTYEnv(t)
	for _, args := range [][]string{{"version"}, {"send", "--json", e.brand, "hello"}} {
		start := time.Now()
		s := e.startPTY(false, nil, args...)
		if code := s.exit(); code != 0 {
			t.Fatalf("pact %s exited %d:\n%s", strings.Join(args, " "), code, s.text())
		}
		took := time.Since(start)
		s.drained() // every byte pact wrote has been read
		if raw := s.raw(); strings.Contains(raw, "\x1b") {
			t.Errorf("pact %s wrote escape sequences on a terminal: %q", strings.Join(args, " "), raw)
		}
		// The fault was a 5 s wait: 4 s still catches it, and leaves a
		// loaded machine room to start the binary.
		if took > 4*time.Second {
			t.Errorf("pact %s took %s on a silent terminal; it must not wait for terminal answers", strings.Join(args, " "), took)
		}
	}

	start := time.Now()
	s := e.startPTY(false, nil, "chat", e.brand)
	s.waitFor("identity only", 0)
	if took := time.Since(start); took > 4*time.Second {
		t.Errorf("the chat took %s to open on a silent terminal", took)
	}
	s.quit(t)
}

// Issue 10 (2): text arriving in one burst (typed fast, pasted without bracketed paste, an
// auto-typer) is text, never keys: "end", "home", "up", "ctrl+k", … are words.
func TestIssue10_2_BurstsAreText(t *testing.T) {
	_, s, tr, _ := tracedChat(t, true)
	want := []string{
		"the end is near",
		"go home now",
		"up down left right delete backspace ctrl+k alt+b home end pgup esc tab",
	}
	for i, b := range want {
		s.typeKeys(b + "\r")
		waitSent(t, s, tr, i+1)
	}
	if got := sentTexts(t, tr); !slices.Equal(got, want) {
		// The screen says why a text came back into the input (a failed send
		// puts it back): seen once under CI load, not reproduced since.
		t.Fatalf("the Brand received %q, want %q; screen text:\n%s", got, want, tail(s.text(), 3000))
	}
	s.quit(t)
}

// Issue 10 (3): a character split across two reads of the terminal is kept whole.
func TestIssue10_3_MultibyteSplitAcrossReads(t *testing.T) {
	_, s, tr, _ := tracedChat(t, true)
	text := strings.Repeat("a", 254) + "日本"
	s.typeKeys(text[:256]) // ends inside 日 (E6 97 A5)
	time.Sleep(100 * time.Millisecond)
	s.typeKeys(text[256:] + "\r")
	got := waitSent(t, s, tr, 1)
	if got[0] != text {
		t.Fatalf("the Brand received %q (%d bytes), want 254 × a + 日本", got[0], len(got[0]))
	}
	s.quit(t)
}

// Issue 10 (4), issue 19: Enter while a reply is on its way queues the message; a
// multi-line paste without bracketed paste (one burst) is one message, its Enters newlines.
func TestIssue10_4_EnterWhilePendingQueues(t *testing.T) {
	_, s, tr, _ := tracedChat(t, true)
	lines := []string{"first line", "where is my order A-10001?", "third line", "fourth"}
	s.typeKeys(strings.Join(lines, "\r") + "\r")
	got := waitSent(t, s, tr, 1)
	if want := strings.Join(lines, "\n"); len(got) != 1 || got[0] != want {
		t.Fatalf("the Brand received %q, want the burst as one message %q", got, want)
	}
	s.waitFor("Order A-10001 (running shoes) is being processed", 0)
	s.typeKeys("next one\r") // a burst of its own: Enter at its end sends
	got = waitSent(t, s, tr, 2)
	if got[1] != "next one" {
		t.Fatalf("the Brand received %q", got)
	}
	s.quit(t)
}

// Issue 10 (5): after a 20-line bracketed paste the input shows the cursor's line (the
// last), and Enter sends the 20 lines as one message.
func TestIssue10_5_PasteKeepsCursorInView(t *testing.T) {
	_, s, tr, at := tracedChat(t, true)
	var lines []string
	for i := 1; i <= 20; i++ {
		lines = append(lines, "pasted line "+strings.Repeat("x", i%3)+string(rune('A'+i)))
	}
	s.typeKeys("\x1b[200~" + strings.Join(lines, "\n") + "\x1b[201~")
	s.waitFor(lines[19], at)
	s.typeKeys("\r")
	got := waitSent(t, s, tr, 1)
	if got[0] != strings.Join(lines, "\n") {
		t.Fatalf("the Brand received %q, want the 20 pasted lines", got[0])
	}
	s.quit(t)
}

// Issue 10 (7), issue 19: every terminating signal restores the terminal (main screen,
// cursor, echo and canonical mode) and exits 128 + the signal: HUP 129, QUIT 131, TERM 143.
func TestIssue10_7_SignalsRestoreTheTerminal(t *testing.T) {
	e := newPTYEnv(t)
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			s := e.start("chat", e.brand)
			s.waitFor("identity only", 0)
			if err := s.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if code, want := s.exit(), 128+int(sig); code != want {
				t.Errorf("pact chat exited %d after %s, want %d (128 + the signal)", code, sig, want)
			}
			s.checkRestored()
		})
	}
}

// Issue 10 (8), §4.2: after a Provider restart the stored conversation is unknown. The
// error answer ends the wait at once (one request, no retries), the chat offers a new
// conversation, and "y" sends the message again in it.
func TestIssue10_8_UnknownContextAfterRestartOffersNew(t *testing.T) {
	e, s, tr, at := tracedChat(t, true)
	s.typeKeys("hello\r")
	at = s.waitFor("What is your order number?", at)

	e.restartProvider()

	s.typeKeys("where is my order A-10001?\r")
	at = s.waitFor("no longer knows this conversation", at)
	s.waitFor("Start a new conversation", at)
	if got := sentTexts(t, tr); len(got) != 2 {
		t.Fatalf("sent %q before the question; an error answer must not be retried", got)
	}
	s.typeKeys("y")
	s.waitFor("Order A-10001 (running shoes) is being processed", at)
	if got := sentTexts(t, tr); !slices.Equal(got, []string{"hello", "where is my order A-10001?", "where is my order A-10001?"}) {
		t.Fatalf("the Brand received %q", got)
	}
	for _, bad := range []string{"INVALID_PARAMS", "HTTP 400", "§"} {
		if strings.Contains(s.text(), bad) {
			t.Errorf("the chat shows %q", bad)
		}
	}
	s.quit(t)
}

// Issue 10 (9), (10), issue 19: an unknown /command says so in plain words and stays in
// the input; Ctrl+U clears it, and the next message is exactly what is typed next.
func TestIssue10_9_UnknownCommandStaysInTheInput(t *testing.T) {
	_, s, tr, at := tracedChat(t, true)
	s.typeKeys("/bogus\r")
	s.waitFor("/bogus is not a command", at)
	if !strings.Contains(s.shown(), "> /bogus") {
		t.Fatalf("the input lost /bogus:\n%s", s.shown())
	}
	s.typeKeys("\x15") // Ctrl+U
	s.waitFor("Ctrl+Y brings it back", at)
	s.typeKeys("hello\r")
	if got := waitSent(t, s, tr, 1); got[0] != "hello" {
		t.Fatalf("the Brand received %q, want \"hello\"", got[0])
	}
	s.quit(t)
}

// Issue 10 (8), §5.5: the Provider revoked the delegation. The header stops claiming it,
// one line says the chat continues with identity only, the message is back in the input,
// and Enter sends it identity-only.
func TestIssue10_8_DeadGrantDropsToIdentityOnly(t *testing.T) {
	e := newPTYEnv(t)
	e.run("login", e.brand, "--scope", "orders:read")
	var grants []struct {
		GrantID string `json:"grantId"`
	}
	if err := json.Unmarshal(e.output("grants", "--json"), &grants); err != nil || len(grants) != 1 {
		t.Fatalf("grants: %v %+v", err, grants)
	}

	s := e.start("chat", e.brand)
	at := s.waitFor("delegated orders:read", 0)
	if !e.srv.RevokeGrant(grants[0].GrantID) {
		t.Fatal("RevokeGrant: unknown grant")
	}
	s.typeKeys("where is my order A-10001?\r")
	at = s.waitFor("stopped working", at)
	s.waitFor("identity only · the delegation stopped working", 0)
	if strings.Contains(s.shown(), "delegated orders:read") {
		t.Errorf("the header still claims the delegation:\n%s", s.shown())
	}
	s.typeKeys("\r") // the message is back in the input
	s.waitFor("Order A-10001 (running shoes) is being processed", at)
	s.quit(t)
}
