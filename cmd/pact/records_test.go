package main

import (
	"bytes"
	"encoding/json"
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

// relabel-bundle FILE CARDURL NAME sets the cardUrl and brandName labels of
// every line of the bundle FILE, as a Brand forging another's name would.
func cmdRelabelBundle(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: relabel-bundle FILE CARDURL NAME")
	}
	path := ts.MkAbs(args[0])
	data, err := os.ReadFile(path)
	ts.Check(err)
	var out []byte
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var m map[string]any
		ts.Check(json.Unmarshal(line, &m))
		m["cardUrl"], m["brandName"] = args[1], args[2]
		b, err := json.Marshal(m)
		ts.Check(err)
		out = append(append(out, b...), '\n')
	}
	ts.Check(os.WriteFile(path, out, 0o600))
}
