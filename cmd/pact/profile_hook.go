//go:build pactprofile

package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// Built only with -tags pactprofile (bench/cmd/benchrun -breakdown): each
// process writes a CPU profile (100 Hz) to $PACT_CPUPROFILE_DIR, so that the
// profiles of many short processes can be merged by pprof. The profile
// starts when package main is initialised, after every other package.
func init() {
	dir := os.Getenv("PACT_CPUPROFILE_DIR")
	if dir == "" {
		return
	}
	f, err := os.Create(fmt.Sprintf("%s/cpu-%d.pprof", dir, os.Getpid()))
	if err != nil {
		return
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return
	}
	exit = func(code int) {
		pprof.StopCPUProfile()
		f.Close()
		os.Exit(code)
	}
}
