//go:build linux

package main

import (
	"strings"
	"testing"
	"time"

	"github.com/pact-cli/pact/demoprovider"
)

// Issue 31 item 11: `pact send` on a terminal to a Brand that streams
// prints its step-up sentence once: as it streamed, not again when pact
// asks the User for the permission (then logs in, and sends again).
func TestIssue31_11_StreamedStepUpTextPrintedOnceInPTY(t *testing.T) {
	e := newPactEnv(t, demoprovider.Config{PollInterval: time.Second, StreamWordDelay: time.Millisecond}, "NO_COLOR=1")
	e.run("login", e.brand, "--scope", "orders:read")
	c := e.startTerm(nil, "send", e.brand, "please cancel order A-10001")
	if code := c.exit(30 * time.Second); code != 0 {
		t.Fatalf("pact send exited %d; terminal:\n%s", code, c.text())
	}
	out := c.text()
	const stepUp = "I need your permission to cancel"
	if n := strings.Count(out, stepUp); n != 1 {
		t.Errorf("the step-up text is shown %d times, want once; terminal:\n%s", n, out)
	}
	if !strings.Contains(out, "needs more permission") || !strings.Contains(out, "cancelled") {
		t.Errorf("want the step-up, the login and the reply; terminal:\n%s", out)
	}
}
