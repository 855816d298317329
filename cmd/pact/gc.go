package main

import (
	"os"
	"runtime/debug"
	"time"
)

// gcGrace is how long a pact process runs before its garbage collector
// starts. Most pact processes (a send, a completion, `pact version`) live
// for a few milliseconds and allocate a few megabytes; collecting then is
// wasted work: a sixth of a send's CPU after package init (issue 21,
// BENCHMARKS.md). Longer processes (chat, mcp, serve, a large receipts
// list) collect as usual from then on.
const gcGrace = 100 * time.Millisecond

// gcGraceLimit bounds the heap while the collector waits: past it the
// runtime collects anyway (runtime/debug.SetMemoryLimit).
const gcGraceLimit = 256 << 20

// deferGC turns the collector off for gcGrace, unless GOGC or GOMEMLIMIT
// says how to collect.
func deferGC() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	percent := debug.SetGCPercent(-1)
	limit := debug.SetMemoryLimit(gcGraceLimit)
	time.AfterFunc(gcGrace, func() {
		debug.SetMemoryLimit(limit)
		debug.SetGCPercent(percent)
	})
}
