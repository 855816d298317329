package conversation

import (
	"os"
	"testing"

	"github.com/pact-cli/pact/internal/testrun"
)

// TestMain runs more tests at once than there are CPUs: they wait on demo
// Providers and device flows far more than they compute (testrun).
func TestMain(m *testing.M) {
	testrun.RaiseParallel()
	os.Exit(m.Run())
}
