package store

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
)

func TestDefaultDirs_PACTHOME(t *testing.T) {
	t.Setenv("PACT_HOME", "/tmp/ph")
	d := DefaultDirs()
	if d.Config != "/tmp/ph/config" || d.Data != "/tmp/ph/data" {
		t.Fatalf("dirs = %+v", d)
	}
}

func TestCheckProfileName(t *testing.T) {
	for _, bad := range []string{"", "..", "../x", "a/b", ".hidden", string(make([]byte, 70))} {
		if CheckProfileName(bad) == nil {
			t.Errorf("accepted %q", bad)
		}
	}
	if err := CheckProfileName("work-2"); err != nil {
		t.Error(err)
	}
}

func TestWriteFile_AtomicAndPrivate(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a", "b.json")
	if err := WriteFile(p, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil || !isPrivate(fi) {
		t.Fatalf("mode = %v, %v", fi.Mode(), err)
	}
	if err := WriteFile(p, []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "two" {
		t.Fatalf("content = %q", b)
	}
	entries, _ := os.ReadDir(filepath.Dir(p))
	if len(entries) != 1 {
		t.Fatalf("temporary files left behind: %v", entries)
	}
}

func TestWriteFile_FailureKeepsOldContent(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.json")
	WriteFile(p, []byte("old"), 0o600)
	if runtime.GOOS == "windows" {
		t.Skip("Windows has no read-only folders (the read-only attribute of a folder is ignored)")
	}
	os.Chmod(dir, 0o500)
	defer os.Chmod(dir, 0o700)
	if os.Getuid() == 0 {
		t.Skip("root ignores directory permissions")
	}
	if err := WriteFile(p, []byte("new"), 0o600); err == nil {
		t.Fatal("want an error writing into a read-only folder")
	}
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Fatalf("old content lost: %q", b)
	}
}

func TestReadJSON_DamagedFileIsAnError(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.json")
	os.WriteFile(p, []byte("{not json"), 0o600)
	var v map[string]any
	if _, err := ReadJSON(p, &v); err == nil {
		t.Fatal("want an error")
	}
	ok, err := ReadJSON(filepath.Join(t.TempDir(), "missing.json"), &v)
	if ok || err != nil {
		t.Fatalf("missing file: %v %v", ok, err)
	}
}

func TestUpdate_ConcurrentGoroutinesLoseNothing(t *testing.T) {
	p := filepath.Join(t.TempDir(), "counter.json")
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := Update(p, 0o600, func(n *int) error { *n++; return nil }); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	var n int
	ReadJSON(p, &n)
	if n != 20 {
		t.Fatalf("counter = %d, want 20", n)
	}
}

// TestUpdate_ConcurrentProcessesLoseNothing runs the test binary as several
// processes incrementing one counter file.
func TestUpdate_ConcurrentProcessesLoseNothing(t *testing.T) {
	if p := os.Getenv("STORE_TEST_COUNTER"); p != "" {
		for i := 0; i < 10; i++ {
			if err := Update(p, 0o600, func(n *int) error { *n++; return nil }); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
		os.Exit(0)
	}
	p := filepath.Join(t.TempDir(), "counter.json")
	var cmds []*exec.Cmd
	for i := 0; i < 5; i++ {
		c := exec.Command(os.Args[0], "-test.run=^TestUpdate_ConcurrentProcessesLoseNothing$")
		c.Env = append(os.Environ(), "STORE_TEST_COUNTER="+p)
		c.Stderr = os.Stderr
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, c)
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := os.ReadFile(p)
	var n int
	ReadJSON(p, &n)
	if n != 50 {
		t.Fatalf("counter = %d (%s), want 50", n, strconv.Quote(string(b)))
	}
}

func TestPendingFile_ReplacesAtomicallyOrNotAtAll(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "bundle.jsonl")
	os.WriteFile(p, []byte("old\n"), 0o644)
	// An abandoned write leaves the old content and no temporary file.
	f, err := NewPendingFile(p, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("half")
	f.Cleanup()
	if b, _ := os.ReadFile(p); string(b) != "old\n" {
		t.Fatalf("an abandoned write changed the file: %q", b)
	}
	f, _ = NewPendingFile(p, 0o600)
	defer f.Cleanup()
	f.WriteString("new\n")
	if err := f.CloseAtomicallyReplace(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	fi, _ := os.Stat(p)
	entries, _ := os.ReadDir(dir)
	if string(b) != "new\n" || !isPrivate(fi) || len(entries) != 1 {
		t.Fatalf("content %q mode %v entries %d", b, fi.Mode().Perm(), len(entries))
	}
}

// The hand-written profile-name check accepts exactly what
// ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$ accepts.
func TestProfileNameSameAsPattern(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	for _, name := range []string{"", "a", "A9", "work-2", "w.o_r-k", ".hidden", "-x", "_x", "a b", "a/b", "é", "a\x00", strings.Repeat("a", 64), strings.Repeat("a", 65), "9" + strings.Repeat(".", 63), "ab\n"} {
		if got, want := validProfileName(name), re.MatchString(name); got != want {
			t.Errorf("validProfileName(%q) = %v, the pattern says %v", name, got, want)
		}
	}
}
