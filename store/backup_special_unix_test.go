//go:build unix

package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Backup with force replaces a regular file only: a device, a FIFO or
// another special file at FILE (`pact backup --force /dev/full`, as root)
// is refused and left in place, never renamed over.
func TestBackup_ForceRefusesAFileThatIsNotRegular(t *testing.T) {
	db := openTest(t)
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFO here:", err)
	}
	_, err := db.Backup(context.Background(), fifo, true)
	if !errors.Is(err, ErrNotRegular) {
		t.Fatalf("Backup over a FIFO with force: %v, want ErrNotRegular", err)
	}
	fi, err := os.Lstat(fifo)
	if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO was replaced: %v %v", fi, err)
	}
}
