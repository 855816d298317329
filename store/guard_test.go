package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// historyProfile makes a profile database with history (n turns) and
// returns its Dirs and pact.db, closed as a pact process leaves it (the
// WAL kept).
func historyProfile(t *testing.T, n int, extra ...string) (Dirs, string) {
	t.Helper()
	home := t.TempDir()
	dirs := Dirs{Config: filepath.Join(home, "config"), Data: filepath.Join(home, "data")}
	ctx := context.Background()
	db := ProfileDB(dirs, "p")
	conv := Conversation{Brand: "card", InterfaceURL: "iface", ContextID: "c1", LastMessageAt: time.Now()}
	for i := range n {
		if err := local(db).AppendTurns(ctx, conv, Turn{MessageID: fmt.Sprint("m", i), Role: "user", Text: "hello", At: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	// Copied while the database is open, as from a live pact: the WAL
	// and the marker come along.
	copied := Dirs{Config: filepath.Join(home, "config2"), Data: filepath.Join(home, "data2")}
	os.MkdirAll(copied.ProfileDataDir("p"), 0o700)
	for _, f := range append([]string{DBFileName, DBFileName + "-wal", HistoryMarker}, extra...) {
		b, err := os.ReadFile(filepath.Join(dirs.ProfileDataDir("p"), f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(copied.ProfileDataDir("p"), f), b, 0o600)
	}
	db.Close()
	return copied, copied.DBPath("p")
}

func openErr(dirs Dirs) error {
	db := ProfileDB(dirs, "p")
	defer db.Close()
	_, err := local(db).Conversations(context.Background())
	return err
}

// A copy of a live pact.db without its WAL (where the history is until a
// checkpoint) is refused with the restore advice, never opened empty.
func TestOpen_ProfileWithHistoryWithoutItsWALIsRefused(t *testing.T) {
	dirs, path := historyProfile(t, 3)
	os.Remove(path + "-wal")
	os.Remove(path + "-shm")
	err := openErr(dirs)
	if !errors.Is(err, ErrNoHistory) || !strings.Contains(err.Error(), "pact restore") || !strings.Contains(err.Error(), "pact.db-wal is missing") {
		t.Fatalf("opening pact.db without its WAL: %v", err)
	}
}

// A WAL cut in half is refused: SQLite would drop the commits past the cut.
func TestOpen_ProfileWithACutWALIsRefused(t *testing.T) {
	dirs, path := historyProfile(t, 20)
	fi, err := os.Stat(path + "-wal")
	if err != nil || fi.Size() < 4096 {
		t.Fatalf("no WAL to cut: %v %v", fi, err)
	}
	if err := os.Truncate(path+"-wal", fi.Size()/2); err != nil {
		t.Fatal(err)
	}
	err = openErr(dirs)
	if !errors.Is(err, ErrNoHistory) || !strings.Contains(err.Error(), "cut short") {
		t.Fatalf("opening with a WAL cut in half: %v", err)
	}
	if fi2, _ := os.Stat(path + "-wal"); fi2.Size() != fi.Size()/2 {
		t.Fatal("the cut WAL was written to")
	}
}

// A pact.db deleted or cut short in a profile that had history is refused;
// a whole one opens with its history.
func TestOpen_ProfileWithHistoryMissingOrTruncatedIsRefused(t *testing.T) {
	dirs, path := historyProfile(t, 2)
	if err := openErr(dirs); err != nil {
		t.Fatalf("a whole profile: %v", err)
	}
	data, _ := os.ReadFile(path)
	os.WriteFile(path, data[:len(data)-100], 0o600)
	if err := openErr(dirs); !errors.Is(err, ErrNoHistory) || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("a truncated pact.db: %v", err)
	}
	os.Remove(path)
	if err := openErr(dirs); !errors.Is(err, ErrNoHistory) || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("a deleted pact.db: %v", err)
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatal("a new pact.db was created")
	}
}

// With the WAL index (-shm) beside it, what a crash mid-write leaves (a
// partial frame past the committed ones) opens, with its history; a WAL
// shorter than the frames the index says were committed is refused, and
// so is a WAL missing while the index says it held commits.
func TestOpen_WALIndexTellsACrashFromACut(t *testing.T) {
	dirs, path := historyProfile(t, 20, DBFileName+"-shm")
	f, _ := os.OpenFile(path+"-wal", os.O_WRONLY|os.O_APPEND, 0)
	f.Write(make([]byte, 100)) // a frame header and a bit, never finished
	f.Close()
	db := ProfileDB(dirs, "p")
	turns, err := local(db).Turns(context.Background(), "iface", "c1")
	db.Close()
	if err != nil || len(turns) != 20 {
		t.Fatalf("after a crash mid-write: %d turns, %v", len(turns), err)
	}
	dirs, path = historyProfile(t, 20, DBFileName+"-shm")
	fi, _ := os.Stat(path + "-wal")
	os.Truncate(path+"-wal", 32+((fi.Size()-32)/(4096+24))/2*(4096+24)) // whole frames, half of them
	if err := openErr(dirs); !errors.Is(err, ErrNoHistory) || !strings.Contains(err.Error(), "committed frames") {
		t.Fatalf("a WAL cut at a frame boundary: %v", err)
	}
	dirs, path = historyProfile(t, 3, DBFileName+"-shm")
	os.Remove(path + "-wal")
	if err := openErr(dirs); !errors.Is(err, ErrNoHistory) || !strings.Contains(err.Error(), "lost its write-ahead log") {
		t.Fatalf("the WAL removed, its index kept: %v", err)
	}
}
