// Package opener opens a URL for the User: the device-code login link of
// PACT §5.3, which the personal agent shows but never proxies or observes.
//
// The command is chosen as the CLI contract says: PACT_BROWSER, then
// BROWSER (each a command line, the URL added as its last argument), then
// the system opener (xdg-open and friends, open, rundll32). Whatever runs is
// started detached and never waited for:
//
//   - in a session of its own (setsid on Unix), so it is not the terminal's
//     foreground job, cannot open /dev/tty and does not get the terminal's
//     Ctrl+C;
//   - with stdin from /dev/null, so it cannot read the User's keystrokes;
//   - with its stdout discarded (browsers print chatter there) and its
//     stderr copied to the writer the caller gives (or discarded), never to
//     the caller's own stdout or stderr, through a pipe that pact owns, so a
//     browser that keeps running never holds pact's own output open.
//
// Start returns as soon as the program has started: callers poll (RFC 8628)
// and honour Ctrl+C at once, whatever the opener does. A program that exits
// with a failure is reported later through Process.Done/Err.
//
// On a headless session (Linux and the BSDs: SSH_CONNECTION or SSH_TTY set
// and neither DISPLAY nor WAYLAND_DISPLAY) the system opener is not run and
// Start returns ErrHeadless: the caller prints the link and the code only.
// An explicit PACT_BROWSER or BROWSER is still honoured there (a remote
// editor's BROWSER helper forwards links to the User's own machine).
package opener

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// ErrHeadless means nothing was started: the session has no display (SSH
// without DISPLAY or WAYLAND_DISPLAY) and no PACT_BROWSER or BROWSER is set.
var ErrHeadless = errors.New("this session has no display (SSH without DISPLAY or WAYLAND_DISPLAY)")

// ErrNoOpener means no browser command was found: no PACT_BROWSER or
// BROWSER, and none of the system openers (xdg-open, x-www-browser,
// www-browser; open; rundll32) is installed.
var ErrNoOpener = errors.New("no browser command was found (set PACT_BROWSER or BROWSER)")

// Command returns the browser command line the environment names
// (PACT_BROWSER, else BROWSER), split on spaces, or nil when neither is set.
func Command() []string {
	for _, v := range []string{"PACT_BROWSER", "BROWSER"} {
		if f := strings.Fields(os.Getenv(v)); len(f) > 0 {
			return f
		}
	}
	return nil
}

// Headless reports whether this is a session without a display where a
// system browser cannot be shown: on Linux and the BSDs, SSH_CONNECTION or
// SSH_TTY is set and neither DISPLAY nor WAYLAND_DISPLAY is. Always false on
// macOS and Windows.
func Headless() bool {
	switch runtime.GOOS {
	case "darwin", "windows", "ios", "android", "js", "wasip1", "plan9":
		return false
	}
	ssh := os.Getenv("SSH_CONNECTION") != "" || os.Getenv("SSH_TTY") != ""
	return ssh && os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == ""
}

// Process is an opener that was started. It runs on its own; Done is
// closed when it has exited (and its output has been copied).
type Process struct {
	// Name is the program run (for messages), e.g. "xdg-open".
	Name string
	// Pid is its process id.
	Pid int

	done chan struct{}
	err  error
}

// Done is closed when the program has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Err is, once Done is closed, why the program failed (it exited with a
// non-zero status or was killed), or nil.
func (p *Process) Err() error {
	<-p.done
	return p.err
}

// Start opens rawURL (an absolute http or https URL only, so the URL cannot
// be taken for a command-line flag) with the PACT_BROWSER or BROWSER
// command, the URL as its last argument, or else with the system opener,
// and returns as soon as the program has started, without waiting for it.
// The program's stdout is discarded and its stderr copied to stderr (nil:
// discarded).
//
// Errors: a refused URL; ErrHeadless (nothing started, print the link);
// ErrNoOpener; the program could not be started. Each names what failed in
// plain words; the caller should then print the link and keep going.
func Start(rawURL string, stderr io.Writer) (*Process, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("refusing to open %q: not an absolute http(s) link", rawURL)
	}
	argv := Command()
	if argv == nil {
		if Headless() {
			return nil, ErrHeadless
		}
		if argv = systemOpener(); argv == nil {
			return nil, ErrNoOpener
		}
	}
	cmd := exec.Command(argv[0], append(argv[1:], rawURL)...)
	// Stdin stays nil: /dev/null.
	if stderr == nil {
		stderr = io.Discard
	}
	// A writer that is not an *os.File makes exec copy through a pipe pact
	// owns: the program never inherits pact's own stdout/stderr.
	cmd.Stdout, cmd.Stderr = io.Discard, &lockedWriter{w: stderr}
	detach(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("could not start %s: %w", filepath.Base(argv[0]), unwrapExec(err))
	}
	p := &Process{Name: filepath.Base(argv[0]), Pid: cmd.Process.Pid, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		if err := cmd.Wait(); err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) && ee.ExitCode() >= 0 {
				p.err = fmt.Errorf("%s exited with status %d", p.Name, ee.ExitCode())
			} else {
				p.err = fmt.Errorf("%s failed: %w", p.Name, err)
			}
		}
	}()
	return p, nil
}

// Open is Start for callers that need only to know whether the program
// started. It never waits for the program.
func Open(rawURL string, stderr io.Writer) error {
	_, err := Start(rawURL, stderr)
	return err
}

// systemOpener is the platform's URL opener, or nil when none is installed.
func systemOpener() []string {
	switch runtime.GOOS {
	case "darwin":
		return []string{"open"}
	case "windows":
		return []string{"rundll32", "url.dll,FileProtocolHandler"}
	}
	for _, p := range []string{"xdg-open", "x-www-browser", "www-browser"} {
		if path, err := exec.LookPath(p); err == nil {
			return []string{path}
		}
	}
	return nil
}

// unwrapExec drops exec's "exec: \"name\":" prefix, the caller names the
// program itself.
func unwrapExec(err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) {
		if errors.Is(ee.Err, exec.ErrNotFound) {
			return errors.New("no such program")
		}
		return ee.Err
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// lockedWriter serialises writes of the program's stderr copy.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Detach makes cmd start as Start starts a browser: in a session (Unix)
// or process group (Windows) of its own, so that the terminal's Ctrl+C
// does not reach it. pact starts its own background work this way (PA
// JWTs minted ahead, profile.Profile.MintAhead).
func Detach(cmd *exec.Cmd) { detach(cmd) }
