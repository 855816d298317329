//go:build linux

package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"
	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/pact-cli/pact/internal/testrun"
)

// The full-screen chat, end to end: the real pact binary (this test binary
// re-executed as "pact", see TestMain) in a pseudo-terminal of 80x24, against
// the demo Provider on 127.0.0.1. What the User sees is read from the pty and
// stripped of escape sequences. The profile is a pactEnv (pty_harness_test.go).

// screen is pact running in a pseudo-terminal.
type screen struct {
	t    *testing.T
	cmd  *exec.Cmd
	ptmx *os.File
	tty  *os.File

	mu   sync.Mutex
	out  bytes.Buffer
	vt   *vt.Emulator  // the screen as a terminal would show it (under mu)
	done chan struct{} // closed when the output is drained

	wmu        sync.Mutex // serialises writes to ptmx
	lastKeys   time.Time  // when typeKeys last wrote (under wmu)
	lastAnswer time.Time  // when the terminal last answered a query (under wmu)
}

// quietGap separates the test's keys from the terminal's answers to pact's
// queries: a person's Enter and a terminal's answer do not arrive within a
// few milliseconds of each other, but on a loaded machine the test's keys and
// the answer loop's writes can, and the chat then rightly reads the Enter as
// part of a burst (a newline) and sends nothing (seen under CI load).
const quietGap = 50 * time.Millisecond

// write writes b to the terminal, as keys (typed) or as the terminal's answer,
// at least quietGap after the last write of the other kind.
func (s *screen) write(b []byte, typed bool) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	other := &s.lastAnswer
	if !typed {
		other = &s.lastKeys
	}
	if d := quietGap - time.Since(*other); d > 0 {
		time.Sleep(d)
	}
	_, err := s.ptmx.Write(b)
	if typed {
		s.lastKeys = time.Now()
	} else {
		s.lastAnswer = time.Now()
	}
	return err
}

// start runs pact ARGS... on a fresh 80x24 pty, or skips the test when no
// pty can be opened.
func (e *pactEnv) start(args ...string) *screen {
	e.t.Helper()
	return e.startPTY(true, nil, args...)
}

// startPTY is start with a terminal that answers queries (answer) or stays silent, and
// stderr on the pty or, when not nil, on errFile.
func (e *pactEnv) startPTY(answer bool, errFile *os.File, args ...string) *screen {
	e.t.Helper()
	return startOnPTY(e.t, e.command(context.Background(), args...), answer, errFile)
}

// startJobShell runs an interactive bash (job control) on a fresh 80x24 pty, with the
// profile's environment and PACTBIN (the pact binary), BRAND and TRACE (tr's name) set.
func startJobShell(t *testing.T, e *pactEnv, tr *os.File) *screen {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash for job control")
	}
	cmd := exec.Command(bash, "--norc", "--noprofile", "-i")
	cmd.Env = append(slices.Clone(e.env), "PS1=$ ", "PACTBIN="+os.Args[0], "BRAND="+e.brand, "TRACE="+tr.Name())
	return startOnPTY(t, cmd, false, nil)
}

// startOnPTY starts cmd in its own session on a fresh 80x24 pty (its controlling terminal,
// and its stdin, stdout and stderr unless errFile is not nil: then stderr), with a terminal
// that answers queries (answer) or stays silent; it skips the test when no pty can be
// opened.
func startOnPTY(t *testing.T, cmd *exec.Cmd, answer bool, errFile *os.File) *screen {
	t.Helper()
	return startOnPTYSize(t, cmd, 80, 24, answer, errFile)
}

// startOnPTYSize is startOnPTY on a pty of cols×rows.
func startOnPTYSize(t *testing.T, cmd *exec.Cmd, cols, rows int, answer bool, errFile *os.File) *screen {
	t.Helper()
	testrun.Parallel(t) // it waits on the terminal far more than it computes
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal available (%v); the full-screen chat needs one", err)
	}
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: uint16(rows), Cols: uint16(cols)}); err != nil {
		t.Fatal(err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	if errFile != nil {
		cmd.Stderr = errFile
	}
	cmd.SysProcAttr = &unix.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &screen{t: t, cmd: cmd, ptmx: ptmx, tty: tty, vt: vt.NewEmulator(cols, rows), done: make(chan struct{})}
	go io.Copy(io.Discard, s.vt) // the emulator's own answers: the loop below answers
	go func() {
		defer close(s.done)
		buf := make([]byte, 4096)
		scanned := 0
		for {
			n, err := ptmx.Read(buf)
			s.mu.Lock()
			s.out.Write(buf[:n])
			s.vt.Write(buf[:n])
			out := s.out.String()
			s.mu.Unlock()
			// Answer, in order, the queries a terminal answers (termenv asks for the
			// background colour, then the cursor position, and waits 5 s for replies).
			for answer {
				next, k := -1, 0
				for j, a := range terminalAnswers {
					if i := strings.Index(out[scanned:], a[0]); i >= 0 && (next < 0 || i < next) {
						next, k = i, j
					}
				}
				if next < 0 {
					break
				}
				s.write([]byte(terminalAnswers[k][1]), false)
				scanned += next + len(terminalAnswers[k][0])
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
		ptmx.Close()
		tty.Close()
	})
	return s
}

// terminalAnswers are the replies of an xterm with a black background to the
// queries pact's terminal libraries send.
var terminalAnswers = [][2]string{
	{"\x1b]11;?", "\x1b]11;rgb:0000/0000/0000\x1b\\"},
	{"\x1b[6n", "\x1b[1;1R"},
}

// text is everything written to the terminal so far, escape sequences removed.
func (s *screen) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ansi.Strip(s.out.String())
}

// shown is what the terminal shows now (the diff renderer of bubbletea v2 writes only the
// cells that change, so a line typed over several frames is whole only here).
func (s *screen) shown() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.vt.String()
}

func (s *screen) raw() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String()
}

// waitFor waits (at most 15 s) until want has been drawn after the first
// skip bytes of text, or is on the screen now; it returns the offset to skip
// for what comes next.
func (s *screen) waitFor(want string, skip int) int {
	s.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		txt := s.text()
		if i := strings.Index(txt[min(skip, len(txt)):], want); i >= 0 {
			return skip + i + len(want)
		}
		if strings.Contains(s.shown(), want) {
			return len(txt)
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%q did not appear on the screen within 15s; screen:\n%s\nscreen text:\n%s", want, s.shown(), tail(txt, 3000))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitGone waits (at most 15 s) until text is no longer on the screen.
func (s *screen) waitGone(text string) {
	s.t.Helper()
	for deadline := time.Now().Add(15 * time.Second); strings.Contains(s.shown(), text); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			s.t.Fatalf("%q stayed on the screen for 15s; screen:\n%s", text, s.shown())
		}
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// typeKeys writes keys to the terminal as a person would type them.
func (s *screen) typeKeys(keys string) {
	s.t.Helper()
	if err := s.write([]byte(keys), true); err != nil {
		s.t.Fatal(err)
	}
}

// exit waits (at most 15 s) for pact to end and returns its exit code.
func (s *screen) exit() int {
	s.t.Helper()
	waited := make(chan error, 1)
	go func() { waited <- s.cmd.Wait() }()
	select {
	case err := <-waited:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			s.t.Fatal(err)
		}
		return 0
	case <-time.After(15 * time.Second):
		s.cmd.Process.Kill()
		s.t.Fatalf("pact did not exit within 15s; screen text:\n%s", tail(s.text(), 2000))
		return -1
	}
}

// checkRestored fails unless the terminal is back as pact found it: the
// alternate screen left, the cursor shown, and the line discipline cooked
// (echo and canonical input on) again.
func (s *screen) checkRestored() {
	s.t.Helper()
	// The last bytes may still be on their way through the pty.
	raw := s.raw()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); raw = s.raw() {
		if strings.LastIndex(raw, "\x1b[?1049l") > strings.LastIndex(raw, "\x1b[?1049h") {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	enter, leave := strings.LastIndex(raw, "\x1b[?1049h"), strings.LastIndex(raw, "\x1b[?1049l")
	if enter < 0 || leave < enter {
		s.t.Errorf("the alternate screen was not left (enter at %d, leave at %d)", enter, leave)
	}
	if strings.LastIndex(raw, "\x1b[?25h") < strings.LastIndex(raw, "\x1b[?25l") {
		s.t.Error("the cursor was left hidden")
	}
	tio, err := unix.IoctlGetTermios(int(s.tty.Fd()), unix.TCGETS)
	if err != nil {
		s.t.Fatal(err)
	}
	if tio.Lflag&unix.ECHO == 0 || tio.Lflag&unix.ICANON == 0 {
		s.t.Errorf("the terminal was left in raw mode (lflag %#x)", tio.Lflag)
	}
}

// §4.1, §4.2: a message typed in the chat gets the agent's reply on screen;
// Ctrl+C leaves with exit 0 and the terminal restored; a second chat shows
// the earlier turns of the stored conversation.
func TestChatTUIInPTY_SendQuitAndReopen(t *testing.T) {
	e := newPTYEnv(t)

	s := e.start("chat", e.brand)
	at := s.waitFor("Message Example Co. Support", 0)
	s.waitFor("identity only", 0)
	s.typeKeys("where is my order A-10001?")
	s.waitFor("where is my order A-10001?", at)
	s.typeKeys("\r")
	s.waitFor("Order A-10001 (running shoes) is being processed", at)
	// Example Co. streams: its text is on screen before the reply is
	// complete and stored; the wait ends then.
	s.waitGone("waiting for Example Co. Support")
	s.typeKeys("\x03") // Ctrl+C
	if code := s.exit(); code != 0 {
		t.Fatalf("pact chat exited %d after Ctrl+C, want 0; screen text:\n%s", code, tail(s.text(), 2000))
	}
	s.checkRestored()

	s = e.start("chat", e.brand)
	s.waitFor("Message Example Co. Support", 0)
	s.waitFor("where is my order A-10001?", 0)
	s.waitFor("Order A-10001 (running shoes) is being processed", 0)
	s.typeKeys("/quit\r")
	if code := s.exit(); code != 0 {
		t.Fatalf("pact chat exited %d after /quit, want 0", code)
	}
	s.checkRestored()
}

// §5.3, §5.5, §5.6: with orders:read granted, asking to cancel an order
// opens the step-up panel for orders:cancel; the scripted person approves in
// the "browser" (PACT_BROWSER), the chat sends the message again by itself
// and the reply arrives with a verified receipt mark.
func TestChatTUIInPTY_StepUp(t *testing.T) {
	e := newPTYEnv(t)
	e.run("login", e.brand, "--scope", "orders:read")

	s := e.start("chat", e.brand)
	at := s.waitFor("delegated orders:read", 0)
	s.typeKeys("please cancel order A-10001\r")
	at = s.waitFor("Permission needed", at)
	s.waitFor("orders:cancel — Cancel an order", at)
	at = s.waitFor("Granted: orders:read, orders:cancel", at)
	s.waitFor("✓ receipt", at) // the only reply sent under delegation
	at = s.waitFor("Order A-10001 is cancelled.", at)
	s.typeKeys("\x12") // Ctrl+R: the receipt panel
	s.waitFor("cancel_order", at)
	s.typeKeys("\x03")
	if code := s.exit(); code != 0 {
		t.Fatalf("pact chat exited %d, want 0", code)
	}
	s.checkRestored()
}
