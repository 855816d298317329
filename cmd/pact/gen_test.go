package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocsUpToDate regenerates the command reference and the man pages in
// memory and fails when docs/ differs: the docs are generated, never edited
// by hand.
func TestDocsUpToDate(t *testing.T) {
	for _, c := range []struct {
		dir string
		gen func() (map[string][]byte, error)
	}{
		{"../../docs/reference", genMarkdown},
		{"../../docs/man", genMan},
	} {
		files, err := c.gen()
		if err != nil {
			t.Fatal(err)
		}
		if len(files) < 20 {
			t.Fatalf("%s: only %d pages generated", c.dir, len(files))
		}
		if stale := staleDocs(c.dir, files); len(stale) > 0 {
			t.Errorf("%s is stale: run go generate ./cmd/pact\n  %s", c.dir, strings.Join(stale, "\n  "))
		}
	}
}

// TestDocsCoverEveryCommand: every visible command, `completion` included,
// has a reference page and a man page.
func TestDocsCoverEveryCommand(t *testing.T) {
	md, err := genMarkdown()
	if err != nil {
		t.Fatal(err)
	}
	man, err := genMan()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"pact", "pact_send", "pact_login", "pact_receipts_verify", "pact_completion_bash", "pact_completion_powershell"} {
		if _, ok := md[name+".md"]; !ok {
			t.Errorf("no reference page %s.md", name)
		}
		if _, ok := man[strings.ReplaceAll(name, "_", "-")+".1"]; !ok {
			t.Errorf("no man page %s.1", name)
		}
	}
	for name := range md {
		if strings.Contains(name, "__gen") || strings.Contains(name, "__complete") {
			t.Errorf("hidden command documented: %s", name)
		}
	}
}

// TestSyncDirKeepsDatesAndRemovesStalePages: regenerating only changes
// what changed, and a page for a removed command goes away.
func TestSyncDirKeepsDatesAndRemovesStalePages(t *testing.T) {
	dir := t.TempDir()
	old := []byte(".TH \"PACT\" \"1\" \"Jan 2020\" \"pact\" \"pact manual\" \"\"\nbody\n")
	for _, name := range []string{"pact-x.1", "pact-gone.1", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), old, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	newer := []byte(".TH \"PACT\" \"1\" \"Mar 2026\" \"pact\" \"pact manual\" \"\"\nbody\n")
	if err := syncDir(dir, map[string][]byte{"pact-x.1": newer}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "pact-x.1")); string(b) != string(old) {
		t.Errorf("a page differing only in its date was rewritten:\n%s", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "pact-gone.1")); !os.IsNotExist(err) {
		t.Errorf("the page of a removed command is still there (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); err != nil {
		t.Errorf("a file that is not a generated page was removed: %v", err)
	}
	changed := []byte(".TH \"PACT\" \"1\" \"Mar 2026\" \"pact\" \"pact manual\" \"\"\nnew body\n")
	syncDir(dir, map[string][]byte{"pact-x.1": changed})
	if b, _ := os.ReadFile(filepath.Join(dir, "pact-x.1")); string(b) != string(changed) {
		t.Errorf("a changed page was not rewritten:\n%s", b)
	}
}
