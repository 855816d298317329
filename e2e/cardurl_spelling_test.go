package e2e

import (
	"strings"
	"testing"
)

// Hostile re-review: other spellings of a pinned card URL each got a pin of
// their own (first contact) instead of meeting the pin. Now they are the
// same card URL (and pin) or a usage error.
func TestPin_E2E_OtherSpellingsOfTheCardURLMeetThePin(t *testing.T) {
	t.Parallel()
	f := newFakeProvider(t, okSend)
	e := hostileEnv(t, f)
	if r := e.must("card", f.URL()); !strings.Contains(r.stdout, "first contact") {
		t.Fatalf("first card:\n%s", r.stdout)
	}
	for _, arg := range []string{
		f.URL() + "//.well-known/agent-card.json",
		f.URL() + "/.well-known/agent-card.json?",
		f.URL() + "/.WELL-KNOWN/agent-card.json",
	} {
		r := e.run("card", arg)
		if r.code != 0 || !strings.Contains(r.stdout, "matches what you accepted") {
			t.Errorf("pact card %s: exit %d, not the pinned card:\n%s%s", arg, r.code, r.stdout, r.stderr)
		}
	}
	for _, arg := range []string{
		f.URL() + "/.well-known/../.well-known/agent-card.json",
		f.URL() + "/x/%2e%2e/.well-known/agent-card.json",
		f.URL() + "/.well-known/agent-card.json?v=2",
	} {
		if r := e.run("card", arg); r.code != 2 || strings.Contains(r.stdout, "first contact") {
			t.Errorf("pact card %s: exit %d, want a usage error:\n%s%s", arg, r.code, r.stdout, r.stderr)
		}
	}
}
