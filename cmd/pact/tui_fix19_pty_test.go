//go:build linux

package main

import (
	"strings"
	"testing"
	"time"

	"github.com/pact-cli/pact/demoprovider"
)

// A message on record whose retry fails because the Provider is down stays sent and
// unanswered (its first attempt may have reached the Brand): never a draft, never sent
// again under a new messageId (PACT §4.3).
func TestFix19_RetryWithProviderDownKeepsTheMessageID(t *testing.T) {
	e := newPactEnv(t, demoprovider.Config{PollInterval: time.Second, AgentDelay: 30 * time.Second})
	tr := traceFile(t)
	s := e.startPTY(true, tr, "--debug", "chat", e.brand)
	at := s.waitFor("identity only", 0)
	s.typeKeys("dup test A-88213\r")
	s.waitFor("waiting for", at) // the Provider is frozen: no answer comes
	s.quit(t)

	addr := strings.TrimPrefix(e.srv.URL(), "http://")
	e.srv.Close() // the Provider is down
	s = e.startPTY(true, tr, "--debug", "chat", e.brand)
	at = s.waitFor("same message id", 0)
	s.typeKeys("\r")
	s.waitFor("the connection was refused", at)
	if scr := s.shown(); !strings.Contains(scr, "unanswered 1 · dup test A-88213") || strings.Contains(scr, "not sent 1") {
		t.Errorf("the retried message is not shown as unanswered:\n%s", scr)
	}
	s.quit(t)

	e.srv = startDemo(t, demoprovider.Config{Addr: addr, PollInterval: time.Second}) // up again
	s = e.startPTY(true, tr, "--debug", "chat", e.brand)
	at = s.waitFor("same message id", 0)
	if scr := s.shown(); strings.Contains(scr, "queued message was kept") || strings.Contains(scr, "queued 1 · dup test") {
		t.Fatalf("the message on record was also kept as a draft:\n%s", scr)
	}
	s.typeKeys("\r")
	s.waitFor("wireless headphones", at)
	s.quit(t)

	ids := sentIDs(t, tr)
	if len(ids) < 3 {
		t.Fatalf("%d message:send requests in the trace, want at least 3 (first, retry while down, retry)", len(ids))
	}
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("the message went under more than one messageId: %q", ids)
		}
	}
	if n := e.srv.AgentRuns(); n != 1 {
		t.Errorf("the Brand's agent ran %d times, want once", n)
	}
}
