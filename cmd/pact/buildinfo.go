package main

import "runtime/debug"

// modified reports a build from a working tree with uncommitted changes
// (vcs.modified); commitTime reports that date is the commit's time
// (vcs.time), not the build's.
var modified, commitTime bool

// init fills version, commit and date from the binary's build information
// when the linker did not stamp them (a plain `go build` or `go install`).
func init() {
	if bi, ok := debug.ReadBuildInfo(); ok {
		b := fromBuildInfo(bi, buildStamp{version: version, commit: commit, date: date})
		version, commit, date, modified, commitTime = b.version, b.commit, b.date, b.modified, b.commitTime
	}
}

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
