package main

import (
	"strings"
	"testing"
	"time"

	"github.com/pact-cli/pact/demoprovider"
	"github.com/pact-cli/pact/providercheck"
)

// Issue 31 item 20: a fault breaks one thing. --fault reason-not-first
// puts a DebugInfo before the ErrorInfo of A2A errors (§6); answers with no
// A2A body (a bare 401, 404 or 405; OAuth errors) must stay as they are, so
// the only checks that fail are those that read details[0] of an A2A
// error, and every identity, routing and OAuth check passes.
func TestIssue31_20_ReasonNotFirstBreaksOnlyTheErrorDetails(t *testing.T) {
	e := newPactEnv(t, demoprovider.Config{PollInterval: time.Second, Faults: []string{"reason-not-first"}}, "NO_COLOR=1")
	code, rep, stderr := runCheck(t, e)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, stderr)
	}
	failed := 0
	for _, r := range rep.Results {
		if r.Status != providercheck.Fail {
			continue
		}
		failed++
		if !strings.Contains(r.Got+" "+r.Reason, "details[0]") {
			t.Errorf("%s failed for another reason than the error details: got %s; %s", r.ID, r.Got, r.Reason)
		}
	}
	if failed == 0 {
		t.Fatalf("nothing failed against reason-not-first\n%s", stderr)
	}
	for _, r := range rep.Results {
		if (strings.HasPrefix(r.ID, "identity.") || r.ID == "routes.unknown-route" || r.ID == "routes.wrong-method" ||
			r.ID == "routes.before-auth" || r.ID == "card.unknown-brand" || strings.HasPrefix(r.ID, "delegation.")) && r.Status == providercheck.Fail {
			t.Errorf("%s fails under reason-not-first, which changes nothing it reads: got %s; %s", r.ID, r.Got, r.Reason)
		}
	}
}
