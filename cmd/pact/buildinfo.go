package main

import (
	"runtime/debug"
	"sync"
)

// stamp is what `pact version` reports, and the version of the
// User-Agent: version, commit and date as the linker stamped them, each
// one it did not (a plain `go build` or `go install`) filled from the
// binary's build information. Read on first use, not at package init:
// reading the build information parses the list of every module built in
// (about 0.1 ms and 34 KB), which a stamped release never needs.
var stamp = sync.OnceValue(func() buildStamp {
	s := buildStamp{version: version, commit: commit, date: date}
	if s.version == "dev" || s.commit == "none" || s.date == "unknown" {
		if bi, ok := debug.ReadBuildInfo(); ok {
			s = fromBuildInfo(bi, s)
		}
	}
	return s
})

// buildStamp is what `pact version` reports.
type buildStamp struct {
	version, commit, date string
	modified              bool // uncommitted changes in the tree built
	commitTime            bool // date is the commit's time, not the build's
}

// fromBuildInfo returns s with each default ("dev", "none", "unknown")
// replaced from bi: the main module's version (unless "(devel)"),
// vcs.revision (a bare SHA; vcs.modified sets modified) and vcs.time (the
// commit time, so commitTime is set). Values stamped by the linker
// (.goreleaser.yaml) win.
func fromBuildInfo(bi *debug.BuildInfo, s buildStamp) buildStamp {
	if s.version == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		s.version = bi.Main.Version
	}
	var rev, at string
	dirty := false
	for _, kv := range bi.Settings {
		switch kv.Key {
		case "vcs.revision":
			rev = kv.Value
		case "vcs.time":
			at = kv.Value
		case "vcs.modified":
			dirty = kv.Value == "true"
		}
	}
	if s.commit == "none" && rev != "" {
		s.commit, s.modified = rev, dirty
	}
	if s.date == "unknown" && at != "" {
		s.date, s.commitTime = at, true
	}
	return s
}
