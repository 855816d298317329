package main

import "runtime/debug"

// init fills version, commit and date from the binary's build information
// when the linker did not stamp them (a plain `go build` or `go install`).
func init() {
	if bi, ok := debug.ReadBuildInfo(); ok {
		version, commit, date = fromBuildInfo(bi, version, commit, date)
	}
}

// fromBuildInfo returns v, c, d with each default ("dev", "none",
// "unknown") replaced from bi: the main module's version (unless
// "(devel)"), vcs.revision (with "-dirty" when vcs.modified=true) and
// vcs.time. Values stamped by the linker (.goreleaser.yaml) win.
func fromBuildInfo(bi *debug.BuildInfo, v, c, d string) (string, string, string) {
	if v == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	var rev, at string
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if c == "none" && rev != "" {
		c = rev
		if modified {
			c += "-dirty"
		}
	}
	if d == "unknown" && at != "" {
		d = at
	}
	return v, c, d
}
