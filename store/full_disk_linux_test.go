package store

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestWriteFile_FullDiskKeepsOldContent writes to a 64 KiB tmpfs until it
// is full: the write fails with a clear error and the previous content is
// intact. Mounting needs root (CI runs as root); elsewhere it is skipped.
func TestWriteFile_FullDiskKeepsOldContent(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"); err != nil {
		t.Skipf("cannot mount a small tmpfs here (%v); needs root", err)
	}
	defer syscall.Unmount(dir, 0)
	p := filepath.Join(dir, "state.json")
	if err := WriteFile(p, []byte(`{"v":"old"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	err := WriteFile(p, bytes.Repeat([]byte("x"), 128<<10), 0o600)
	if err == nil {
		t.Fatal("writing 128 KiB into a 64 KiB filesystem succeeded")
	}
	if !strings.Contains(err.Error(), "no space") || !strings.Contains(err.Error(), "unchanged") {
		t.Errorf("error does not say what happened: %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != `{"v":"old"}` {
		t.Fatalf("old content lost: %q", b)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("temporary files left on the full disk: %v", entries)
	}
}
