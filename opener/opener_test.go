//go:build unix

package opener

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// script writes an executable shell script that records its arguments (one
// per line) in out and prints to both streams, then runs body.
func script(t *testing.T, body string) (path, out string) {
	t.Helper()
	dir := t.TempDir()
	out = filepath.Join(dir, "args")
	path = filepath.Join(dir, "fake-browser")
	src := "#!/bin/sh\nfor a in \"$@\"; do echo \"$a\" >> '" + out + "'; done\necho to-stdout\necho to-stderr >&2\n" + body
	if err := os.WriteFile(path, []byte(src), 0o700); err != nil {
		t.Fatal(err)
	}
	return path, out
}

// syncBuffer is a bytes.Buffer safe for the copying goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// wait waits (at most 10 s) for p to exit and returns its error.
func wait(t *testing.T, p *Process) error {
	t.Helper()
	select {
	case <-p.Done():
		return p.Err()
	case <-time.After(10 * time.Second):
		t.Fatalf("%s (pid %d) did not exit", p.Name, p.Pid)
		return nil
	}
}

// killOnCleanup ends a started program (its whole session) after the test.
func killOnCleanup(t *testing.T, p *Process) {
	t.Cleanup(func() {
		syscall.Kill(-p.Pid, syscall.SIGKILL)
		syscall.Kill(p.Pid, syscall.SIGKILL)
		<-p.Done()
	})
}

// noDisplayEnv clears what Headless and Command read.
func noDisplayEnv(t *testing.T) {
	for _, k := range []string{"PACT_BROWSER", "BROWSER", "SSH_CONNECTION", "SSH_TTY", "DISPLAY", "WAYLAND_DISPLAY"} {
		t.Setenv(k, "")
	}
}

func TestPACTBrowserWinsAndGetsURLLast(t *testing.T) {
	noDisplayEnv(t)
	pact, pactOut := script(t, "")
	other, otherOut := script(t, "")
	t.Setenv("PACT_BROWSER", pact+" --new-window  -x")
	t.Setenv("BROWSER", other)
	var stderr syncBuffer
	const link = "https://brand.example/login?user_code=WDJB-MJHT&return_to=%2Fx"
	p, err := Start(link, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if err := wait(t, p); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(pactOut)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(got)), "\n")
	if len(lines) != 3 || lines[0] != "--new-window" || lines[1] != "-x" || lines[2] != link {
		t.Errorf("args = %q", lines)
	}
	if _, err := os.Stat(otherOut); err == nil {
		t.Error("BROWSER ran although PACT_BROWSER was set")
	}
	if s := stderr.String(); strings.Contains(s, "to-stdout") || !strings.Contains(s, "to-stderr") {
		t.Errorf("the program's stderr should go to stderr and its stdout nowhere, got %q", s)
	}
}

func TestBROWSERUsedWhenPACTBrowserUnset(t *testing.T) {
	noDisplayEnv(t)
	b, out := script(t, "")
	t.Setenv("BROWSER", b)
	p, err := Start("http://127.0.0.1:8080/x", nil)
	if err != nil {
		t.Fatal(err)
	}
	wait(t, p)
	if got, _ := os.ReadFile(out); strings.TrimSpace(string(got)) != "http://127.0.0.1:8080/x" {
		t.Errorf("args = %q", got)
	}
}

// A failing opener is not waited for by Start; its failure is reported
// through Err once it has exited.
func TestFailingBrowserIsReportedAfterwards(t *testing.T) {
	noDisplayEnv(t)
	b, _ := script(t, "exit 3\n")
	t.Setenv("PACT_BROWSER", b)
	p, err := Start("https://brand.example/login", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := wait(t, p); err == nil || !strings.Contains(err.Error(), "status 3") {
		t.Fatalf("err = %v", err)
	}
}

func TestMissingProgramIsAStartError(t *testing.T) {
	noDisplayEnv(t)
	t.Setenv("PACT_BROWSER", filepath.Join(t.TempDir(), "no-such-browser"))
	err := Open("https://brand.example/login", nil)
	if err == nil || !strings.Contains(err.Error(), "could not start no-such-browser") {
		t.Fatalf("err = %v", err)
	}
}

func TestRefusesNonHTTPURLs(t *testing.T) {
	noDisplayEnv(t)
	// Some have no host; the others have one, so only the scheme check can
	// refuse them.
	refused := []string{"--help", "file:///etc/passwd", "javascript:alert(1)", "/relative",
		"file://brand.example/etc/passwd", "ftp://brand.example/login", "javascript://brand.example/%0Aalert(1)",
		"ssh://brand.example", "x-scheme-handler://brand.example/login"}
	// With a browser that cannot start, an attempt to run it fails in Start
	// itself ("could not start"): a refusal naming the link proves that
	// nothing was run, without waiting for a browser that might write later.
	t.Setenv("PACT_BROWSER", filepath.Join(t.TempDir(), "no-such-browser"))
	for _, u := range refused {
		p, err := Start(u, nil)
		if p != nil || err == nil || !strings.Contains(err.Error(), "refusing to open") {
			t.Errorf("%q: process %v, err %v; want a refusal before anything runs", u, p, err)
		}
	}
	// With a browser that runs: the refused links start nothing, and the good
	// link after them is the only one it ever got (its exit is the event
	// waited for).
	b, out := script(t, "")
	t.Setenv("PACT_BROWSER", b)
	for _, u := range refused {
		if p, err := Start(u, nil); p != nil || err == nil {
			t.Errorf("%q was opened", u)
		}
	}
	p, err := Start("https://brand.example/login", nil)
	if err != nil {
		t.Fatal(err)
	}
	wait(t, p)
	if got, _ := os.ReadFile(out); strings.TrimSpace(string(got)) != "https://brand.example/login" {
		t.Errorf("the browser got %q; want only the good link", got)
	}
}

// RFC 8628 §3.3: the client polls while the User is in the browser. An
// opener that takes 20 s (xdg-open starting a browser) must not hold up
// the caller: Start returns while it is still running.
func TestRFC8628_SlowOpenerIsNotWaitedFor(t *testing.T) {
	noDisplayEnv(t)
	b, _ := script(t, "exec sleep 20\n")
	t.Setenv("PACT_BROWSER", b)
	p, err := Start("https://brand.example/login", nil)
	if err != nil {
		t.Fatal(err)
	}
	killOnCleanup(t, p)
	select {
	case <-p.Done():
		t.Fatalf("the slow opener had already ended when Start returned: Start waited for it (%v)", p.Err())
	default:
	}
	// It runs in a session of its own, so the terminal's Ctrl+C does not
	// reach it and it has no controlling terminal.
	sid, err := unix.Getsid(p.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if sid != p.Pid {
		t.Errorf("the opener's session is %d, want its own (%d)", sid, p.Pid)
	}
	if own, _ := unix.Getsid(0); sid == own {
		t.Error("the opener shares pact's session")
	}
}

// The opener's stdin is /dev/null: a program that reads stdin gets end of
// input at once and never the User's keystrokes.
func TestOpenerStdinIsDevNull(t *testing.T) {
	noDisplayEnv(t)
	dir := t.TempDir()
	got := filepath.Join(dir, "stdin")
	b, _ := script(t, "cat > '"+got+"'\nreadlink /proc/$$/fd/0 > '"+got+".name'\n")
	t.Setenv("PACT_BROWSER", b)
	p, err := Start("https://brand.example/login", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := wait(t, p); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(got); err != nil || len(data) != 0 {
		t.Errorf("the opener read %q from stdin (%v)", data, err)
	}
	if name, err := os.ReadFile(got + ".name"); err == nil && strings.TrimSpace(string(name)) != "/dev/null" {
		t.Errorf("the opener's stdin is %s, want /dev/null", name)
	}
}

// On SSH without a display the system opener is not run: nothing to claim,
// the caller prints the link. An explicit PACT_BROWSER is still honoured.
func TestHeadlessSessionRunsNoSystemOpener(t *testing.T) {
	skipUnlessXDG(t)
	noDisplayEnv(t)
	bin := t.TempDir()
	ran := filepath.Join(bin, "ran")
	for _, name := range []string{"xdg-open", "x-www-browser", "www-browser"} {
		src := "#!/bin/sh\necho \"$@\" >> '" + ran + "'\n"
		if err := os.WriteFile(filepath.Join(bin, name), []byte(src), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("SSH_CONNECTION", "192.0.2.1 50000 192.0.2.2 22")
	t.Setenv("SSH_TTY", "/dev/pts/3")
	if !Headless() {
		t.Fatal("SSH without DISPLAY/WAYLAND_DISPLAY is not headless")
	}
	if p, err := Start("https://brand.example/login", nil); p != nil || !errors.Is(err, ErrHeadless) {
		t.Fatalf("process %v, err = %v, want ErrHeadless and nothing started", p, err)
	}
	// Whether it ran anyway shows below: the opener started with a display
	// (and waited for) must be the only one that ever recorded the link.

	// With a display forwarded (ssh -X) the system opener runs.
	t.Setenv("DISPLAY", "localhost:10.0")
	if Headless() {
		t.Fatal("SSH with DISPLAY counts as headless")
	}
	p, err := Start("https://brand.example/login", nil)
	if err != nil {
		t.Fatal(err)
	}
	wait(t, p)
	if got, _ := os.ReadFile(ran); strings.TrimSpace(string(got)) != "https://brand.example/login" {
		t.Errorf("the system opener got %q", got)
	}

	// An explicit command is honoured on a headless session.
	t.Setenv("DISPLAY", "")
	b, out := script(t, "")
	t.Setenv("PACT_BROWSER", b)
	p, err = Start("https://brand.example/x", nil)
	if err != nil {
		t.Fatal(err)
	}
	wait(t, p)
	if got, _ := os.ReadFile(out); strings.TrimSpace(string(got)) != "https://brand.example/x" {
		t.Errorf("PACT_BROWSER got %q", got)
	}
}

func TestNoOpenerFound(t *testing.T) {
	skipUnlessXDG(t)
	noDisplayEnv(t)
	t.Setenv("PATH", t.TempDir())
	if err := Open("https://brand.example/login", nil); !errors.Is(err, ErrNoOpener) {
		t.Fatalf("err = %v, want ErrNoOpener", err)
	}
}

// skipUnlessXDG skips tests of the xdg-open family and of headless
// detection, which apply to Linux and the BSDs only.
func skipUnlessXDG(t *testing.T) {
	if runtime.GOOS == "darwin" {
		t.Skip("macOS uses open(1) and has no headless rule")
	}
}
