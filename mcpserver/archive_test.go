package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/pact-cli/pact/demoprovider"
	"github.com/pact-cli/pact/store"
)

// Issue 31 item 5 in MCP: a delegated reply whose receipt pact could not
// archive is the reply (the Brand acted: not a tool error the model might
// answer by sending again) that says the receipt was NOT archived and
// hands over its JWS, never "verified and archived".
func TestIssue31_5_MCP_ReceiptNotArchivedIsSaidWithItsJWS(t *testing.T) {
	e := newEnv(t, false)
	b := e.brands[0].SiteURL
	var started LoginStarted
	e.mustCall("start_login", map[string]any{"brand": b, "scopes": []string{"orders:read"}}, &started)
	<-e.opened
	e.approve(started.VerificationURIComplete, demoprovider.ScriptedUser{})
	if st := e.waitLogin(b); st.Status != StatusGranted {
		t.Fatalf("login: %+v", st)
	}
	if err := e.backend.(*store.DB).Exec(context.Background(),
		`CREATE TRIGGER refuse_receipts BEFORE INSERT ON receipts BEGIN SELECT RAISE(ABORT, 'the archive refuses it'); END`); err != nil {
		t.Fatal(err)
	}
	var out SendOutput
	res := e.mustCall("send_message", map[string]any{"brand": b, "text": "show my orders"}, &out)
	got := text(res)
	if out.Receipt == nil || out.Receipt.ArchiveError == "" || strings.Count(out.Receipt.JWS, ".") != 2 {
		t.Fatalf("structured receipt: %+v", out.Receipt)
	}
	if strings.Contains(got, "verified and archived") || !strings.Contains(got, "could NOT archive it") ||
		!strings.Contains(got, out.Receipt.JWS) || !strings.Contains(got, "the archive refuses it") || !strings.Contains(got, "A-10001") {
		t.Fatalf("the tool's text does not tell the truth about the receipt:\n%s", got)
	}
}
