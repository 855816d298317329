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

// Issue 31 items 5 and 6 in the chat, review: a stored turn's receipt mark was its own
// copy of the verdict. Reopened, the chat drew "✓ receipt" for a receipt the archive never
// took, and its panel "✓ verified", with no scopes and no actions; and a turn's flag put
// back by a restore read "✓" for a receipt the archive holds as rejected. The mark of a
// stored turn is the archive's verdict, and a receipt the archive does not hold is said
// to be missing.
func TestIssue31_5_Chat_StoredTurnsReceiptIsTheArchivesVerdict(t *testing.T) {
	r := newRig(t, demoprovider.Config{})
	ctx := testCtx(t)
	if _, err := r.b.Login(ctx, []string{"orders:read"}, nil); err != nil {
		t.Fatal(err)
	}
	<-r.opened
	if _, err := r.b.Send(ctx, "show my orders"); err != nil {
		t.Fatal(err)
	}
	if err := r.db.Exec(ctx, `CREATE TRIGGER refuse_receipts BEFORE INSERT ON receipts BEGIN SELECT RAISE(ABORT, 'the archive refuses it'); END`); err != nil {
		t.Fatal(err)
	}
	if _, err := r.b.Send(ctx, "show my orders again"); err != nil {
		t.Fatal(err)
	}
	var marks []*tui.ReceiptMark
	for _, tt := range r.reopen().History() {
		if tt.Receipt != nil {
			marks = append(marks, tt.Receipt)
		}
	}
	if len(marks) != 2 {
		t.Fatalf("%d receipt marks in the history, want 2", len(marks))
	}
	if !marks[0].Verified || len(marks[0].ScopesUsed) == 0 {
		t.Errorf("the archived receipt: %+v, want verified with its claims", marks[0])
	}
	if marks[1].Verified || !marks[1].Missing {
		t.Errorf("the receipt the archive never took: %+v, want not verified, missing", marks[1])
	}
	// A turn's flag that says verified while the archive holds the receipt as rejected
	// (a restore puts both back as the file had them).
	if err := r.db.Exec(ctx, `UPDATE receipts SET verified = 0, problems = '["bad signature"]' WHERE id = ?`, marks[0].ID); err != nil {
		t.Fatal(err)
	}
	for _, tt := range r.reopen().History() {
		if m := tt.Receipt; m != nil && m.ID == marks[0].ID && (m.Verified || len(m.Problems) == 0) {
			t.Errorf("a receipt the archive holds as rejected: %+v, want not verified, with its problems", m)
		}
	}
}

// Issue 31 item 6, review, in the chat: a receipt `pact restore` put back (whatever
// the backup said: store.Restore marks every receipt so) is drawn "not re-checked",
// never "✓ receipt", and its panel says what checks it, until `pact receipts verify`.
func TestIssue31_6_Chat_RestoredReceiptIsNotReChecked(t *testing.T) {
	r := newRig(t, demoprovider.Config{})
	ctx := testCtx(t)
	if _, err := r.b.Login(ctx, []string{"orders:read"}, nil); err != nil {
		t.Fatal(err)
	}
	<-r.opened
	if _, err := r.b.Send(ctx, "show my orders"); err != nil {
		t.Fatal(err)
	}
	if err := r.db.Exec(ctx, `UPDATE receipts SET verified = 0, restored = 1, problems = '[]'`); err != nil {
		t.Fatal(err)
	}
	var marks []*tui.ReceiptMark
	for _, tt := range r.reopen().History() {
		if tt.Receipt != nil {
			marks = append(marks, tt.Receipt)
		}
	}
	if len(marks) != 1 || marks[0].Verified || !marks[0].Restored || marks[0].Missing || len(marks[0].ScopesUsed) == 0 {
		t.Fatalf("the restored receipt's mark: %+v, want restored, not verified, with its claims", marks)
	}
	if p := strings.Join(marks[0].Problems, " "); !strings.Contains(p, "pact receipts verify") {
		t.Errorf("the mark does not say what checks it: %q", p)
	}
}
