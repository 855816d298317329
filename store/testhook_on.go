//go:build pact_store_testhook

package store

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

// inWriteHook, in test builds only (tag pact_store_testhook): when
// PACT_STORE_TEST_HOLD_MS is set, say so on stderr and hold the open write
// transaction that long, so that a test can kill the process mid-write
// for certain.
func inWriteHook() {
	ms, err := strconv.Atoi(os.Getenv("PACT_STORE_TEST_HOLD_MS"))
	if err != nil || ms <= 0 {
		return
	}
	fmt.Fprintln(os.Stderr, "pact-store-test: in a write transaction")
	time.Sleep(time.Duration(ms) * time.Millisecond)
}
