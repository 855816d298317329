package main

import (
	"os"

	"github.com/rogpeppe/go-internal/testscript"
)

// cut-half FILE truncates FILE to half its size, as a failed copy would.
func cmdCutHalf(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: cut-half FILE")
	}
	path := ts.MkAbs(args[0])
	fi, err := os.Stat(path)
	ts.Check(err)
	if fi.Size() < 2 {
		ts.Fatalf("%s has %d bytes: nothing to cut", path, fi.Size())
	}
	ts.Check(os.Truncate(path, fi.Size()/2))
}
