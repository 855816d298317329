package conversation

import (
	"context"
	"errors"
	"net/http/cookiejar"
	"strings"
	"testing"

	"github.com/pact-cli/pact/demoprovider"
	"github.com/pact-cli/pact/store"
)

// refuseReceipts makes every later write to the receipt archive fail
// while the rest of the database takes writes (as a damaged archive table
// would).
func refuseReceipts(t *testing.T, e *env) {
	t.Helper()
	if err := e.opts.Backend.(*store.DB).Exec(context.Background(),
		`CREATE TRIGGER refuse_receipts BEFORE INSERT ON receipts BEGIN SELECT RAISE(ABORT, 'the archive refuses it'); END`); err != nil {
		t.Fatal(err)
	}
}

// Issue 31 item 5: the Brand acted and its receipt verified, but pact
// could not archive it. That is not "verified" and done: Send returns the
// Result with a *SaveError saying the receipt was not archived, the
// receipt's status says why (ArchiveError), and its JWS is in the Result
// so that every front-end can hand it to the User. The turns are saved.
func TestIssue31_5_ReceiptThatCouldNotBeArchivedIsASaveError(t *testing.T) {
	e := newEnv(t, demoprovider.Config{})
	s := e.open(e.brands[0].SiteURL)
	jar, _ := cookiejar.New(nil)
	e.login(s, jar, "orders:read")
	refuseReceipts(t, e)
	r, err := s.Send(context.Background(), "show my orders")
	var se *SaveError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "receipt") || !strings.Contains(err.Error(), "archive") {
		t.Fatalf("send whose receipt could not be archived: %v", err)
	}
	if r == nil || r.Receipt == nil || r.Receipt.ArchiveError == "" || strings.Count(r.Receipt.JWS, ".") != 2 {
		t.Fatalf("the receipt's status does not say it was not archived, or its JWS is lost: %+v", r)
	}
	turns, err := e.opts.Store.Turns(s.Card.InterfaceURL, r.ContextID)
	if err != nil || len(turns) != 2 || turns[1].ReceiptID != r.Receipt.ID {
		t.Fatalf("the turns were not saved: %+v, %v", turns, err)
	}
}
