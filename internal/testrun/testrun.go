// Package testrun is what pact's test binaries share about how their tests
// run: more of them at once than there are CPUs, because most of them wait
// rather than compute (on loopback servers, on the pact processes they
// start, on a device flow's one-second polling interval, on a stream
// written at a reading pace). On the 2-CPU development machine the whole
// suite used about 60 s of CPU in 270 s of tests run one after another.
// It is imported by tests only.
package testrun

import (
	"flag"
	"runtime"
	"strconv"
	"sync"
	"testing"
)

// RaiseParallel sets how many tests marked t.Parallel run at once in this
// test binary, unless the command line says (go test -parallel N): four per
// CPU, at least 8, where Go's default is one per CPU. Call it in TestMain
// before m.Run (which parses the command line, so a -test.parallel given
// there still wins).
func RaiseParallel() {
	if f := flag.Lookup("test.parallel"); f != nil { // nil: testing.Init has not run
		f.Value.Set(strconv.Itoa(max(8, 4*runtime.GOMAXPROCS(0))))
	}
}

// Parallel marks t to run in parallel with the other tests that do
// (t.Parallel), the first time it is called for t: set-up helpers call it,
// and a test may set up more than once. A test that uses t.Setenv or
// t.Chdir cannot run in parallel, and so cannot use those helpers.
func Parallel(t *testing.T) {
	if _, done := marked.LoadOrStore(t, true); !done {
		t.Parallel()
	}
}

var marked sync.Map // *testing.T → true once Parallel called t.Parallel
