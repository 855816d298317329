package mcpserver

import (
	"strings"
	"testing"
	"time"

	"github.com/pact-cli/pact/demoprovider"
)

// get_agent_card lists each skill with the scopes it needs, and with
// extended the Brand's extended card: not fetched before the User accepted
// the card (looking records nothing), identity-only skills after the first
// message, more after a login.
func TestMCP_GetAgentCardSkillScopesAndExtended(t *testing.T) {
	e := newEnv(t, false)
	b := e.brands[0].SiteURL
	var out CardOutput
	e.mustCall("get_agent_card", map[string]any{"brand": b, "extended": true}, &out)
	if len(out.Pact.Skills) != 4 || out.Pact.Skills[2].ID != "cancel-order" || strings.Join(out.Pact.Skills[2].Scopes, ",") != "orders:cancel" || len(out.Pact.Skills[0].Scopes) != 0 {
		t.Fatalf("skills = %+v", out.Pact.Skills)
	}
	if x := out.Pact.Extended; x == nil || x.Fetched || x.Problem == "" {
		t.Fatalf("extended before the card is accepted = %+v", x)
	}
	var sent SendOutput
	e.mustCall("send_message", map[string]any{"brand": b, "text": "hello"}, &sent)
	res := e.mustCall("get_agent_card", map[string]any{"brand": b, "extended": true}, &out)
	if x := out.Pact.Extended; x == nil || !x.Fetched || !x.Verified || x.Delegated || len(x.Skills) != 1 {
		t.Fatalf("extended, identity only = %+v", x)
	}
	if !strings.Contains(text(res), "skill: Cancel an order") || !strings.Contains(text(res), "(needs orders:cancel)") {
		t.Errorf("text does not give the skills' scopes: %s", text(res))
	}
	var started LoginStarted
	e.mustCall("start_login", map[string]any{"brand": b, "scopes": []string{"orders:read"}}, &started)
	select {
	case <-e.opened:
	case <-time.After(5 * time.Second):
		t.Fatal("the browser was not opened")
	}
	e.approve(started.VerificationURIComplete, demoprovider.ScriptedUser{})
	if st := e.waitLogin(b); st.Status != StatusGranted {
		t.Fatalf("login: %+v", st)
	}
	e.mustCall("get_agent_card", map[string]any{"brand": b, "extended": true}, &out)
	if x := out.Pact.Extended; x == nil || !x.Delegated || len(x.Skills) != 2 || x.Skills[1].ID != "order-status" {
		t.Fatalf("extended after login = %+v", x)
	}
}
