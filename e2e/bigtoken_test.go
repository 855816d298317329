package e2e

import (
	"strings"
	"testing"
)

// Trust finding 7: a delegation token over the 64 KiB every keyring holds
// (the file keyring included, which used to take it) is refused with a
// clear message before anything is stored: no grant, no token.
func TestLogin_TokenOverTheKeyringLimitRefusedBeforeStoring(t *testing.T) {
	t.Parallel()
	p := newTrustProvider(t)
	p.TokenPad = 70 << 10
	e := trustEnv(t, p)
	r := e.run("login", p.CardURL(), "--scope", "orders:read", "--no-browser", "--json")
	wantError(t, r, 1, "TOO_LARGE", 0, "more than the 64 KiB pact can keep in any keyring", "nothing was stored")
	if g := e.must("grants", "--json"); strings.TrimSpace(g.stdout) != "[]" {
		t.Errorf("a grant was kept: %s", g.stdout)
	}
}
