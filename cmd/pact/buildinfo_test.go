package main

import (
	"runtime/debug"
	"testing"
)

func TestVersionFallsBackToBuildInfo(t *testing.T) {
	bi := &debug.BuildInfo{
		Main: debug.Module{Path: "github.com/pact-cli/pact", Version: "v1.2.3"},
		Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123abcd"},
			{Key: "vcs.time", Value: "2026-11-30T18:00:00Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	defaults := buildStamp{version: "dev", commit: "none", date: "unknown"}
	// A dirty tree: the commit stays a bare SHA, modified says so; the
	// date is the commit's.
	got := fromBuildInfo(bi, defaults)
	want := buildStamp{version: "v1.2.3", commit: "0123abcd", date: "2026-11-30T18:00:00Z", modified: true, commitTime: true}
	if got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	// A clean tree.
	bi.Settings[2].Value = "false"
	if b := fromBuildInfo(bi, defaults); b.commit != "0123abcd" || b.modified {
		t.Fatalf("clean tree: %+v", b)
	}
	// Linker-stamped values win (and the date is the build's); "(devel)"
	// is no version.
	bi.Main.Version = "(devel)"
	stamped := buildStamp{version: "v9.9.9", commit: "feedbeef", date: "2026-01-01"}
	if b := fromBuildInfo(bi, stamped); b != stamped {
		t.Fatalf("stamped values replaced: %+v", b)
	}
	if b := fromBuildInfo(bi, defaults); b.version != "dev" {
		t.Fatalf("(devel) taken as a version: %q", b.version)
	}
}
