package store

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDB_FullDiskFailsCleanlyAndKeepsWhatWasThere fills a small tmpfs with
// turns until a write fails: the error says the disk is full and that
// nothing was changed, every turn committed before is still there, and the
// database passes its integrity check. Mounting needs root (CI runs as
// root); elsewhere it is skipped.
func TestDB_FullDiskFailsCleanlyAndKeepsWhatWasThere(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=512k"); err != nil {
		t.Skipf("cannot mount a small tmpfs here (%v); needs root", err)
	}
	defer syscall.Unmount(dir, 0)
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(dir, DBFileName))
	if err != nil {
		t.Fatal(err)
	}
	conv := Conversation{Brand: "card", InterfaceURL: "iface", ContextID: "c1", LastMessageAt: time.Now()}
	text := strings.Repeat("lorem ipsum dolor sit amet ", 200)
	committed := 0
	var werr error
	for i := 0; i < 10000; i++ {
		werr = local(db).AppendTurns(ctx, conv, Turn{MessageID: fmt.Sprint(i), Role: "user", Text: fmt.Sprint(i, text), At: time.Now()})
		if werr != nil {
			break
		}
		committed++
	}
	if werr == nil {
		t.Fatal("10,000 large turns fitted in 512 KiB")
	}
	if !strings.Contains(werr.Error(), "full") || !strings.Contains(werr.Error(), "nothing was changed") {
		t.Errorf("the error does not say what happened: %v", werr)
	}
	db.Close()
	db, err = Open(ctx, filepath.Join(dir, DBFileName))
	if err != nil {
		t.Fatalf("reopening after the full disk: %v", err)
	}
	defer db.Close()
	if err := db.IntegrityCheck(ctx); err != nil {
		t.Fatal(err)
	}
	turns, err := local(db).Turns(ctx, "iface", "c1")
	if err != nil || len(turns) != committed {
		t.Fatalf("%d turns after the full disk, %d were committed (%v)", len(turns), committed, err)
	}
}
