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
	v, c, d := fromBuildInfo(bi, "dev", "none", "unknown")
	if v != "v1.2.3" || c != "0123abcd-dirty" || d != "2026-11-30T18:00:00Z" {
		t.Fatalf("got %q %q %q", v, c, d)
	}
	// A clean tree: no -dirty.
	bi.Settings[2].Value = "false"
	if _, c, _ := fromBuildInfo(bi, "dev", "none", "unknown"); c != "0123abcd" {
		t.Fatalf("clean tree: commit %q", c)
	}
	// Linker-stamped values win; "(devel)" is no version.
	bi.Main.Version = "(devel)"
	v, c, d = fromBuildInfo(bi, "v9.9.9", "feedbeef", "2026-01-01")
	if v != "v9.9.9" || c != "feedbeef" || d != "2026-01-01" {
		t.Fatalf("stamped values replaced: %q %q %q", v, c, d)
	}
	if v, _, _ := fromBuildInfo(bi, "dev", "none", "unknown"); v != "dev" {
		t.Fatalf("(devel) taken as a version: %q", v)
	}
}
