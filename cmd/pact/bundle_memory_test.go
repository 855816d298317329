package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/pact-cli/pact/iostreams"
)

// heapWatch is stdout that measures the live heap (after a collection) at
// every 2048th write, and writes to a file (not to memory).
type heapWatch struct {
	writes int
	peak   uint64
	out    *os.File
}

func (w *heapWatch) Write(p []byte) (int, error) {
	if w.writes%2048 == 0 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		w.peak = max(w.peak, m.HeapAlloc)
	}
	w.writes++
	return w.out.Write(p)
}

// bundleJSONPeak runs `pact receipts verify --bundle FILE --json` over a
// bundle of n lines that each fail, and returns the live heap's peak while
// the document is written, and the document.
func bundleJSONPeak(t *testing.T, n int) (uint64, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "bundle.jsonl")
	if err := os.WriteFile(path, []byte(strings.Repeat("{}\n", n)), 0o600); err != nil {
		t.Fatal(err)
	}
	io, _, _, _ := iostreams.Test()
	f, err := os.Create(path + ".out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := &heapWatch{out: f}
	io.Out = w
	a := &app{io: io, json: true}
	err = a.bundleRun(context.Background(), path, nil, nil)
	if se := (silentError{}); !errors.As(err, &se) || se.code != exitReceipts {
		t.Fatalf("verify --bundle of %d failing lines: %v", n, err)
	}
	doc, _ := os.ReadFile(path + ".out")
	return w.peak, string(doc)
}

// Issue 31 item 14: `receipts verify --bundle --json` (and `import
// --json`) held every line's result, then the whole document, in memory:
// 1.6 GB for a 35 MB bundle. The document is written as the lines are
// checked: four times the lines leave the live heap where it was (it
// grew with them), and the document is the documented one.
func TestIssue31_14_BundleJSONIsWrittenAsTheLinesAreChecked(t *testing.T) {
	const n = 5000
	small, _ := bundleJSONPeak(t, n)
	large, doc := bundleJSONPeak(t, 4*n)
	t.Logf("live heap: %d bytes for %d lines, %d for %d", small, n, large, 4*n)
	if large > small+1<<20 {
		t.Errorf("the live heap grew from %d to %d bytes for 4 × %d lines: the results are held", small, large, n)
	}
	var got struct {
		Verified, Failed int
		Checked          *bool `json:"checkedAgainstPublishedKeys"`
		Results          []struct {
			Line     int
			Verified bool
			Problems []string
		}
	}
	if err := json.Unmarshal([]byte(doc), &got); err != nil {
		t.Fatalf("not one JSON document: %v\n%.300s", err, doc)
	}
	if got.Failed != 4*n || got.Verified != 0 || got.Checked == nil || *got.Checked || len(got.Results) != 4*n ||
		got.Results[4*n-1].Line != 4*n || len(got.Results[0].Problems) == 0 {
		t.Fatalf("the document: failed %d, verified %d, %d results", got.Failed, got.Verified, len(got.Results))
	}
	if !strings.HasPrefix(doc, "{\n  \"results\": [\n    {\n      \"line\": 1,") {
		t.Fatalf("not printJSON's layout:\n%.200s", doc)
	}
}
