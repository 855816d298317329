//go:build unix

package store

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// State folders are private (0700) whoever creates them, WriteFile or
// Lock, even under a permissive umask: they hold conversations, grants and
// receipts.
func TestStateFoldersArePrivate(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	root := t.TempDir()
	written := filepath.Join(root, "data", "profiles", "p", "grants.json")
	if err := WriteFile(written, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	unlock, err := Lock(filepath.Join(root, "config", "x", "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	for _, dir := range []string{
		filepath.Join(root, "data"), filepath.Join(root, "data", "profiles"),
		filepath.Join(root, "data", "profiles", "p"),
		filepath.Join(root, "config"), filepath.Join(root, "config", "x"),
	} {
		fi, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: mode %v, want 0700", dir, fi.Mode().Perm())
		}
	}
	fi, err := os.Stat(written)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s: mode %v, want 0600", written, fi.Mode().Perm())
	}
}
