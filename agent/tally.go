package agent

import (
	"fmt"

	"github.com/pact-cli/pact/receipts"
)

// Tally counts receipts checked again (receipts.Archive.VerifyAll,
// VerifyIDs): Verified passed, Failed did not (a bad signature or claims:
// the CLI exits 6), Unchecked could not be checked (the Brand's keys could
// not be fetched, say: exit 1). It is the one count `pact receipts verify`,
// MCP verify_receipts and the tour report.
type Tally struct {
	Verified  int `json:"verified"`
	Failed    int `json:"failed"`
	Unchecked int `json:"unchecked"`
}

// Count tallies checks.
func Count(checks []receipts.Check) Tally {
	var t Tally
	for _, c := range checks {
		t.Add(c)
	}
	return t
}

// Add counts one check.
func (t *Tally) Add(c receipts.Check) {
	switch {
	case c.Verified:
		t.Verified++
	case c.Unchecked:
		t.Unchecked++
	default:
		t.Failed++
	}
}

// Total is how many receipts were counted.
func (t Tally) Total() int { return t.Verified + t.Failed + t.Unchecked }

// OK reports whether every receipt counted was verified.
func (t Tally) OK() bool { return t.Failed == 0 && t.Unchecked == 0 }

// String is the tally in plain words: "2 verified, 0 failed, 1 not checked".
func (t Tally) String() string {
	return fmt.Sprintf("%d verified, %d failed, %d not checked", t.Verified, t.Failed, t.Unchecked)
}
