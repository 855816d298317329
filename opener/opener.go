// Package opener opens a URL for the User: the device-code login link of
// PACT §5.3, which the personal agent shows but never proxies or observes.
//
// The command is chosen as the CLI contract says: PACT_BROWSER, then
// BROWSER, then the system browser (github.com/pkg/browser). Whatever the
// launched program prints goes to the given stderr, so --json output on
// stdout stays clean.
package opener

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/pkg/browser"
)

// StartGrace is how long Open waits for a browser command to fail.
var StartGrace = 3 * time.Second

// mu serialises use of browser.Stdout/Stderr, which are package globals.
var mu sync.Mutex

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

// Open opens rawURL (absolute http or https only, so the URL cannot be taken
// for a command-line flag) with the PACT_BROWSER or BROWSER command, the URL
// as its last argument, or else with the system browser. The program's
// stdout and stderr go to stderr (nil: discarded). A browser command may
// keep running (a browser window that stays open): Open waits at most
// StartGrace for it to fail and otherwise lets it run. It returns an error
// naming the command when it fails; the caller should then print the URL
// and keep going.
func Open(rawURL string, stderr io.Writer) error {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("opener: refusing to open %q: not an absolute http(s) URL", rawURL)
	}
	if stderr == nil {
		stderr = io.Discard
	}
	if argv := Command(); argv != nil {
		cmd := exec.Command(argv[0], append(argv[1:], rawURL)...)
		cmd.Stdout = stderr
		cmd.Stderr = stderr
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("opener: running %s: %w", argv[0], err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				return fmt.Errorf("opener: %s exited with status %d", argv[0], ee.ExitCode())
			}
			if err != nil {
				return fmt.Errorf("opener: running %s: %w", argv[0], err)
			}
			return nil
		case <-time.After(StartGrace):
			return nil // still running: a browser that stays open
		}
	}
	mu.Lock()
	defer mu.Unlock()
	oldOut, oldErr := browser.Stdout, browser.Stderr
	browser.Stdout, browser.Stderr = stderr, stderr
	defer func() { browser.Stdout, browser.Stderr = oldOut, oldErr }()
	if err := browser.OpenURL(rawURL); err != nil {
		return fmt.Errorf("opener: no browser could be opened (set PACT_BROWSER or BROWSER): %w", err)
	}
	return nil
}
