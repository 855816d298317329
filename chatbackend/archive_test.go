package chatbackend

import (
	"regexp"
	"strings"
	"testing"

	"github.com/pact-cli/pact/demoprovider"
	"github.com/pact-cli/pact/tui"
)

// Issue 31 item 5 in the chat: a reply whose receipt pact could not
// archive is shown, followed by pact's error saying so with the receipt's
// JWS, the only copy of the Brand's proof.
func TestIssue31_5_Chat_ReceiptNotArchivedShowsItsJWS(t *testing.T) {
	r := newRig(t, demoprovider.Config{})
	ctx := testCtx(t)
	if _, err := r.b.Login(ctx, []string{"orders:read"}, nil); err != nil {
		t.Fatal(err)
	}
	<-r.opened
	if err := r.db.Exec(ctx, `CREATE TRIGGER refuse_receipts BEFORE INSERT ON receipts BEGIN SELECT RAISE(ABORT, 'the archive refuses it'); END`); err != nil {
		t.Fatal(err)
	}
	rep, err := r.b.Send(ctx, "show my orders")
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Turns) != 2 || rep.Turns[0].Role != tui.RoleAgent || rep.Turns[1].Role != tui.RoleError {
		t.Fatalf("turns = %+v, want the reply then pact's error", rep.Turns)
	}
	msg := rep.Turns[1].Text
	if !strings.Contains(msg, "could not archive its receipt") || !regexp.MustCompile(`\neyJ[\w-]+\.[\w-]+\.[\w-]+`).MatchString(msg) {
		t.Fatalf("the error does not say the receipt was not archived, with its JWS:\n%s", msg)
	}
}
