package store

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDB_ReadOnlyHomeStillReads: a PACT_HOME on a read-only file system
// (the previous release could read it) opens read-only: history is listed
// and shown, and a write fails saying why. Mounting needs root (CI runs
// as root); elsewhere it is skipped.
func TestDB_ReadOnlyHomeStillReads(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=4m"); err != nil {
		t.Skipf("cannot mount a small tmpfs here (%v); needs root", err)
	}
	defer syscall.Unmount(dir, 0)
	dirs := Dirs{Config: filepath.Join(dir, "config"), Data: filepath.Join(dir, "data")}
	ctx := context.Background()
	conv := Conversation{Brand: "card", InterfaceURL: "iface", ContextID: "c1", LastMessageAt: time.Now()}
	db := ProfileDB(dirs, "p")
	if err := local(db).AppendTurns(ctx, conv, Turn{MessageID: "m1", Role: "user", Text: "kept", At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	db.Close() // the WAL stays, as when pact exits
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		t.Skipf("cannot remount read-only: %v", err)
	}
	db = ProfileDB(dirs, "p")
	defer db.Close()
	turns, err := local(db).Turns(ctx, "iface", "c1")
	if err != nil || len(turns) != 1 || turns[0].Text != "kept" {
		t.Fatalf("reading a read-only home: %+v, %v", turns, err)
	}
	err = local(db).AppendTurns(ctx, conv, Turn{MessageID: "m2", Role: "user", Text: "new", At: time.Now()})
	if err == nil || !strings.Contains(err.Error(), "can only be read here") {
		t.Fatalf("writing to a read-only home: %v", err)
	}
}

// On a read-only home, search finds what the index holds and counts the
// turns added since the last search, which it cannot index.
func TestDB_ReadOnlyHomeSearchesWhatIsIndexed(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=4m"); err != nil {
		t.Skipf("cannot mount a small tmpfs here (%v); needs root", err)
	}
	defer syscall.Unmount(dir, 0)
	dirs := Dirs{Config: filepath.Join(dir, "config"), Data: filepath.Join(dir, "data")}
	ctx := context.Background()
	conv := Conversation{Brand: "card", InterfaceURL: "iface", ContextID: "c1", LastMessageAt: time.Now()}
	db := ProfileDB(dirs, "p")
	local(db).AppendTurns(ctx, conv, Turn{MessageID: "m1", Role: "user", Text: "parcel one", At: time.Now()})
	if _, err := local(db).searchHits(ctx, "parcel", 0); err != nil { // indexed
		t.Fatal(err)
	}
	local(db).AppendTurns(ctx, conv, Turn{MessageID: "m2", Role: "user", Text: "parcel two", At: time.Now()},
		Turn{MessageID: "m3", Role: "user", Text: "parcel three", At: time.Now()})
	db.Close()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		t.Skipf("cannot remount read-only: %v", err)
	}
	db = ProfileDB(dirs, "p")
	defer db.Close()
	for _, q := range []string{"parcel", "on"} {
		res, err := local(db).SearchTurns(ctx, q, 0)
		if err != nil || len(res.Hits) != 1 || res.Hits[0].Turn.Text != "parcel one" || res.Unindexed != 2 {
			t.Fatalf("search %q on a read-only home: %+v, %v", q, res, err)
		}
	}
}
