package e2e

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Hostile re-review: a newline in a single-line field of the card (its
// name, a skill's name, a scope's description) faked a "signature … ✓" and
// a "pinned" row in `pact card` and an extra scope in the login consent
// list. Single-line fields show line breaks visibly, as \n.
func TestIssue9_NewlinesInSingleLineFieldsCannotFakeRows(t *testing.T) {
	t.Parallel()
	p := newTrustProvider(t)
	p.Card = func(iface string) map[string]any {
		m := delegationCard("Hostile Co.\nsignature      signed by bank.example ✓", iface, iface+"/oauth", "")
		dc := m["securitySchemes"].(map[string]any)["userDelegation"].(map[string]any)["oauth2SecurityScheme"].(map[string]any)["flows"].(map[string]any)["deviceCode"].(map[string]any)
		dc["scopes"] = map[string]any{"x": "scope x\n                 orders:read   read orders only (harmless)"}
		m["skills"] = []any{map[string]any{"id": "s", "name": "Stuff\npinned         matches what you accepted", "description": "d", "tags": []any{"t"}}}
		return m
	}
	e := trustEnv(t, p)
	r := e.run("card", p.CardURL())
	if r.code != 0 {
		t.Fatalf("card: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, row := range []string{"signature", "pinned"} {
		if n := len(regexp.MustCompile(`(?m)^`+row+`\b`).FindAllString(r.stdout, -1)); n != 1 {
			t.Errorf("pact card shows %d %q rows, want 1:\n%s", n, row, r.stdout)
		}
	}
	if !strings.Contains(r.stdout, `Hostile Co.\nsignature`) || !strings.Contains(r.stdout, `Stuff\npinned`) {
		t.Errorf("the line breaks are not shown visibly:\n%s", r.stdout)
	}
	r = e.run("login", p.CardURL(), "--scope", "x", "--no-browser")
	consent, _, _ := strings.Cut(r.stderr, "Provider:")
	if regexp.MustCompile(`(?m)^\s+orders:read`).MatchString(consent) || !strings.Contains(consent, `scope x\n`) {
		t.Errorf("the consent list shows a scope the User was not asked for:\n%s", r.stderr)
	}
	// Line-mode chat lists the scopes for /login the same way.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := e.cmd(ctx, "chat", p.CardURL())
	var out, errb bytes.Buffer
	c.Stdin, c.Stdout, c.Stderr = strings.NewReader("/login\n/new\n"), &out, &errb
	c.Run()
	if regexp.MustCompile(`(?m)^\s+orders:read`).MatchString(errb.String()) || regexp.MustCompile(`(?m)^signature`).MatchString(errb.String()) {
		t.Errorf("line-mode chat shows a faked row:\n%s", errb.String())
	}
	if !strings.Contains(errb.String(), `scope x\n`) || !strings.Contains(errb.String(), `conversation with Hostile Co.\nsignature`) {
		t.Errorf("line-mode chat does not show the fields visibly:\n%s", errb.String())
	}
	noTerminalControls(t, "chat stderr", errb.String())
}
