package e2e

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pact-cli/pact/store"
)

// Issue 31 item 5, as a user meets it: the Brand acted under the User's
// delegation and its receipt verified, but pact could not archive it. pact
// send says so (never "✓ … verified" alone), prints the receipt's JWS,
// and exits 1 as on a save error; under --json the reply document carries
// an error member and receipt.jws, receipt.archiveError.
func TestIssue31_5_ReceiptThatCouldNotBeArchivedIsSaidAndPrinted(t *testing.T) {
	t.Parallel()
	p := newTrustProvider(t)
	e := loggedIn(t, p)
	tamperDB(t, filepath.Join(e.home, "data", "profiles", "default", store.DBFileName),
		`CREATE TRIGGER refuse_receipts BEFORE INSERT ON receipts BEGIN SELECT RAISE(ABORT, 'the archive refuses it'); END`)
	jws := regexp.MustCompile(`eyJ[\w-]+\.[\w-]+\.[\w-]+`)

	r := e.run("send", p.CardURL(), "refund order A-1")
	if r.code != 1 || !strings.Contains(r.stdout, "done") {
		t.Fatalf("pact send: exit %d, want 1 with the reply\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stderr, "✓") || !strings.Contains(r.stderr, "verified, but pact could NOT archive it") || !jws.MatchString(r.stderr) {
		t.Fatalf("pact send does not say the receipt was not archived, with its JWS:\n%s", r.stderr)
	}

	r = e.run("send", p.CardURL(), "refund order A-2", "--json")
	var doc struct {
		Receipt struct {
			Verified     bool   `json:"verified"`
			JWS          string `json:"jws"`
			ArchiveError string `json:"archiveError"`
		} `json:"receipt"`
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 1 {
		t.Fatalf("pact send --json: exit %d, %v\n%s", r.code, err, r.stdout)
	}
	if !jws.MatchString(doc.Receipt.JWS) || doc.Receipt.ArchiveError == "" || !strings.Contains(doc.Error.Message, "could not archive its receipt") {
		t.Fatalf("pact send --json: %s", r.stdout)
	}
}
