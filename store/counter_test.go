package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// appendN appends n user turns to the test conversation of db.
func appendN(t *testing.T, db *DB, from, n int) {
	t.Helper()
	conv := Conversation{Brand: "card", InterfaceURL: "iface", ContextID: "c1", LastMessageAt: time.Now()}
	for i := from; i < from+n; i++ {
		if err := local(db).AppendTurns(context.Background(), conv, Turn{MessageID: fmt.Sprint("m", i), Role: "user", Text: "hello", At: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
}

func turnCount(t *testing.T, dirs Dirs) (int, error) {
	t.Helper()
	db := ProfileDB(dirs, "p")
	defer db.Close()
	turns, err := local(db).Turns(context.Background(), "iface", "c1")
	return len(turns), err
}

func copyTo(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// Issue 28 (Backups): a pact.db copied without its WAL after a checkpoint
// holds all the history up to that checkpoint and none after; put back
// (alone: no WAL, no WAL index beside it) it used to open with the older
// history and no word. The write counter kept in the database and beside
// the history marker tells it: refused, naming pact restore, nothing
// written.
func TestIssue28_PactDBThatLostItsLastWritesIsRefused(t *testing.T) {
	home := t.TempDir()
	dirs := Dirs{Config: filepath.Join(home, "config"), Data: filepath.Join(home, "data")}
	path := dirs.DBPath("p")
	db := ProfileDB(dirs, "p")
	appendN(t, db, 0, 3)
	db.Close() // the last connection checkpoints: pact.db holds the 3 turns
	copyTo(t, path, filepath.Join(home, "old.db"))
	db = ProfileDB(dirs, "p")
	appendN(t, db, 3, 2)
	db.Close()
	// The old copy put back alone.
	copyTo(t, filepath.Join(home, "old.db"), path)
	os.Remove(path + "-wal")
	os.Remove(path + "-shm")
	before, _ := os.ReadFile(path)
	n, err := turnCount(t, dirs)
	if !errors.Is(err, ErrNoHistory) || !strings.Contains(err.Error(), "pact restore") || !strings.Contains(err.Error(), "lost its last") {
		t.Fatalf("a pact.db missing its last 2 writes opened with %d turns: %v", n, err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Fatal("the refused pact.db was written to")
	}
}

// The counter refuses no database a normal life leaves: a process that
// ended between its commit and the marker (the marker behind the
// database), a marker written by a machine that lost power before its WAL
// reached the disk (ahead, but from an earlier boot and not past the last
// checkpoint), several writers at once (the marker may fall behind, never
// ahead), and a pact restore (another database: the marker is written
// anew).
func TestIssue28_WriteCounterRefusesNoNormalDatabase(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	dirs := Dirs{Config: filepath.Join(home, "config"), Data: filepath.Join(home, "data")}
	path := dirs.DBPath("p")
	marker := filepath.Join(filepath.Dir(path), HistoryMarker)
	db := ProfileDB(dirs, "p")
	appendN(t, db, 0, 3)
	early, err := os.ReadFile(marker)
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, db, 3, 3)
	db.Close()

	// A process that ended after its commit, before the marker: behind.
	os.WriteFile(marker, early, 0o600)
	if n, err := turnCount(t, dirs); err != nil || n != 6 {
		t.Fatalf("the marker behind the database (a crash after a commit): %d turns, %v", n, err)
	}

	// A power cut: the marker reached the disk, the last commits did not.
	// Written in another boot and not past the last checkpoint: opens.
	m, ok := readMark(marker)
	if !ok || m.Writes == 0 {
		t.Fatalf("no write counter in the marker: %q", readFile(marker))
	}
	ahead := m
	ahead.Writes += 5
	ahead.Boot = "another-boot"
	writeMark(marker, ahead)
	if n, err := turnCount(t, dirs); err != nil || n != 6 {
		t.Fatalf("the marker ahead after a power cut (another boot): %d turns, %v", n, err)
	}
	// ... and the next write goes on from the database's counter.
	db = ProfileDB(dirs, "p")
	appendN(t, db, 6, 1)
	db.Close()
	if n, err := turnCount(t, dirs); err != nil || n != 7 {
		t.Fatalf("after a write that followed a power cut: %d turns, %v", n, err)
	}
	// In the same boot nothing but a copy loses commits: refused.
	m, _ = readMark(marker)
	ahead = m
	ahead.Writes += 5
	writeMark(marker, ahead)
	if _, err := turnCount(t, dirs); !errors.Is(err, ErrNoHistory) {
		t.Fatalf("the marker ahead in the same boot: %v", err)
	}
	// Past the last checkpoint, whatever the boot: refused.
	ahead.Durable, ahead.Boot = ahead.Writes, "another-boot"
	writeMark(marker, ahead)
	if _, err := turnCount(t, dirs); !errors.Is(err, ErrNoHistory) {
		t.Fatalf("the marker's checkpointed counter ahead of the database: %v", err)
	}
	writeMark(marker, m)

	// Writers at once, each with its own connections as processes have.
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			other := &DB{path: path, importer: func(context.Context, *sql.DB) error { return nil }}
			defer other.Close()
			appendN(t, other, 100+10*w, 10)
		}()
	}
	wg.Wait()
	if n, err := turnCount(t, dirs); err != nil || n != 47 {
		t.Fatalf("after four writers at once: %d turns, %v", n, err)
	}
	got, _ := readMark(marker)
	db = ProfileDB(dirs, "p")
	c, err := db.conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	id, writes, _ := dbCounter(ctx, c)
	db.Close()
	if got.ID != id || got.Writes > writes {
		t.Fatalf("the marker (%+v) is ahead of the database (%s, %d)", got, id, writes)
	}

	// A backup, more writes, then pact restore: the restored database
	// opens, takes writes and opens again.
	db = ProfileDB(dirs, "p")
	if _, err := db.Backup(ctx, filepath.Join(home, "b.db"), false); err != nil {
		t.Fatal(err)
	}
	appendN(t, db, 200, 5)
	db.Close()
	if _, err := Restore(ctx, dirs, "p", filepath.Join(home, "b.db"), RestoreChecks{}); err != nil {
		t.Fatal(err)
	}
	if n, err := turnCount(t, dirs); err != nil || n != 47 {
		t.Fatalf("after pact restore: %d turns, %v", n, err)
	}
	db = ProfileDB(dirs, "p")
	appendN(t, db, 300, 1)
	db.Close()
	if n, err := turnCount(t, dirs); err != nil || n != 48 {
		t.Fatalf("after a write to the restored database: %d turns, %v", n, err)
	}
}

func readFile(p string) string { b, _ := os.ReadFile(p); return string(b) }
