package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// Trust finding 2: the "run `pact login …` and send again" hint after a
// step-up holds only scope ids the card declares, shell-quoted; an id the
// card does not list ("orders:read$(id>/tmp/PWNED)") is flagged and never
// put into a command a User would paste into a shell.
func TestStepUpHint_UnknownScopesFlaggedAndHintShellQuoted(t *testing.T) {
	t.Parallel()
	evil := "orders:read$(id>/tmp/PWNED)"
	var missing []string
	f := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := json.Marshal(map[string]any{"task": map[string]any{"id": "t-1", "contextId": "ctx-1",
			"status":   map[string]any{"state": "TASK_STATE_AUTH_REQUIRED", "message": map[string]any{"messageId": "m-1", "role": "ROLE_AGENT", "parts": []any{map[string]any{"text": "I need more permission"}}}},
			"metadata": map[string]any{"pact.missingScopes": missing}}})
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	})
	f.Card = func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, delegationCard("Step Co.", f.Iface(), f.Iface()+"/oauth", "Look up your orders"))
	}
	e := hostileEnv(t, f)

	missing = []string{evil}
	r := e.run("send", f.URL(), "hello")
	if r.code != 4 {
		t.Fatalf("exit %d, want 4\n%s", r.code, r.stderr)
	}
	if strings.Contains(r.stderr, "pact login") || strings.Contains(r.stderr, "--scope "+evil) {
		t.Errorf("an undeclared scope was put into a command hint:\n%s", r.stderr)
	}
	if !strings.Contains(r.stderr, "does not list") || !strings.Contains(r.stderr, `"`+evil+`"`) {
		t.Errorf("the undeclared scope is not flagged:\n%s", r.stderr)
	}

	missing = []string{"orders:read", evil}
	r = e.run("send", f.URL(), "hello")
	// The Brand as the User typed it (its origin), not its card URL
	// (issue 31 item 17).
	want := "run `pact login " + f.URL() + " --scope orders:read` and send again"
	if r.code != 4 || !strings.Contains(r.stderr, want) {
		t.Errorf("exit %d; want the hint %s in:\n%s", r.code, want, r.stderr)
	}
	if strings.Contains(r.stderr, "--scope "+evil) || strings.Contains(r.stderr, "--scope '"+evil) {
		t.Errorf("an undeclared scope was put into the hint:\n%s", r.stderr)
	}
}
