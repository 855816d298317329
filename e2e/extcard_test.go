package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pact-cli/pact/demoprovider"
)

// Issue #23: `pact card BRAND --extended` shows more skills after login
// than before: the demo serves an extended card filtered by the caller's
// grants, signed by the Brand like its public card. The public card lists
// every skill with the scopes it needs.
func TestExtendedCardShowsMoreSkillsAfterLogin(t *testing.T) {
	t.Parallel()
	p := newPublishedEnv(t, demoprovider.Config{})
	p.card = p.prov.Brands()[0].SiteURL // the Brand's signed card
	type doc struct {
		Card         json.RawMessage `json:"card"`
		ExtendedCard json.RawMessage `json:"extendedCard"`
		Pact         struct {
			Skills []struct {
				ID     string   `json:"id"`
				Scopes []string `json:"scopes"`
			} `json:"skills"`
			Extended struct {
				Skills []struct {
					ID string `json:"id"`
				} `json:"skills"`
				Signature struct {
					Verified bool `json:"verified"`
				} `json:"signature"`
				Delegated bool `json:"delegated"`
			} `json:"extended"`
		} `json:"pact"`
	}
	read := func() doc {
		t.Helper()
		r := p.must("card", p.card, "--extended", "--json")
		var d doc
		if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
			t.Fatalf("card --extended --json: %v\n%s", err, r.stdout)
		}
		return d
	}
	ids := func(d doc) string {
		var out []string
		for _, s := range d.Pact.Extended.Skills {
			out = append(out, s.ID)
		}
		return strings.Join(out, ",")
	}
	before := read()
	if ids(before) != "orders" || before.Pact.Extended.Delegated || !before.Pact.Extended.Signature.Verified {
		t.Fatalf("before login: extended skills %q, delegated %v, signature %+v", ids(before), before.Pact.Extended.Delegated, before.Pact.Extended.Signature)
	}
	if len(before.Pact.Skills) != 4 || before.Pact.Skills[1].ID != "order-status" || strings.Join(before.Pact.Skills[1].Scopes, ",") != "orders:read" {
		t.Fatalf("public skills with scopes: %+v", before.Pact.Skills)
	}
	p.login(t, "orders:read")
	after := read()
	if ids(after) != "orders,order-status" || !after.Pact.Extended.Delegated {
		t.Fatalf("after login: extended skills %q, delegated %v", ids(after), after.Pact.Extended.Delegated)
	}
	// The human table says the same in words.
	r := p.must("card", p.card, "--extended")
	if !strings.Contains(r.stdout, "extended card  you may use") || !strings.Contains(r.stdout, "Your orders      needs orders:read") {
		t.Errorf("card --extended:\n%s", r.stdout)
	}
	// The other Brand has no extended card: said plainly.
	r = p.run("card", p.prov.Brands()[1].SiteURL, "--extended")
	if r.code == 0 || !strings.Contains(r.stderr, "does not offer an extended card") {
		t.Errorf("Other Shop --extended: exit %d\n%s", r.code, r.stderr)
	}
}
