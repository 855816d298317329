package store

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ErrNoHistory is matched (errors.Is) by the refusal of a profile's
// database that had history but opens without it: missing, empty,
// truncated, its WAL cut or missing (HistoryError).
var ErrNoHistory = errors.New("the profile's history is missing from its database")

// HistoryError is the refusal of a profile database that had history (the
// HistoryMarker or ImportedDir beside it) but whose files do not hold it:
// pact.db missing, empty, truncated, without the WAL its history is in, or
// with that WAL cut short. Nothing was written; Error gives the restore
// advice.
type HistoryError struct {
	Path string // the pact.db
	Why  string // what is wrong, in plain words
}

func (e *HistoryError) Error() string {
	dir := filepath.Dir(e.Path)
	return fmt.Sprintf("%s %s, but this profile had history; pact will not start it afresh: "+
		"restore it with `pact restore BACKUP` (a file `pact backup` wrote), or put back pact.db together with its pact.db-wal; "+
		"to start this profile afresh instead, move pact.db, pact.db-wal and %s out of %s",
		e.Path, e.Why, HistoryMarker, dir)
}

// Is makes errors.Is(err, ErrNoHistory) true.
func (e *HistoryError) Is(target error) bool { return target == ErrNoHistory }

// checkHistoryFiles looks, before SQLite opens them, at the files of a
// profile database that had history: pact.db present, not empty, as long as
// its header says, and a WAL that is whole (a WAL cut short loses the
// commits past the cut without a word from SQLite). It reads headers only.
func checkHistoryFiles(path string) error {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &HistoryError{Path: path, Why: "is missing"}
	}
	if err != nil {
		return nil // SQLite says what is wrong
	}
	if fi.Size() == 0 {
		return &HistoryError{Path: path, Why: "is empty"}
	}
	// With a WAL that holds frames, pages past the end of pact.db may be
	// in it (a checkpoint that could not grow the file on a full disk left
	// the header ahead of the file): SQLite reads them from the WAL.
	if wi, err := os.Stat(path + "-wal"); err != nil || wi.Size() == 0 {
		if why := mainFileShort(path, fi.Size()); why != "" {
			return &HistoryError{Path: path, Why: why}
		}
	}
	// A writer appends a frame in two writes (header, then page): a size
	// between frames is looked at again before it counts as a cut.
	deadline := time.Now().Add(500 * time.Millisecond)
	for {
		why := walCut(path + "-wal")
		if why == "" {
			return nil
		}
		if time.Now().After(deadline) {
			return &HistoryError{Path: path, Why: why}
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// mainFileShort says why pact.db of size bytes is shorter than its header
// says ("" when it is not, or when the header is not SQLite's: SQLite says
// that one is damaged).
func mainFileShort(path string, size int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var h [100]byte
	if _, err := io.ReadFull(f, h[:]); err != nil || string(h[:16]) != "SQLite format 3\x00" {
		return ""
	}
	pageSize := int64(binary.BigEndian.Uint16(h[16:18]))
	if pageSize == 1 {
		pageSize = 65536
	}
	if pageSize < 512 {
		return ""
	}
	if size%pageSize != 0 {
		return fmt.Sprintf("is truncated (%d bytes, not a whole number of %d-byte pages)", size, pageSize)
	}
	// The in-header page count is valid when its version-valid-for number
	// matches the change counter (SQLite file format §1.3.7).
	pages := int64(binary.BigEndian.Uint32(h[28:32]))
	if binary.BigEndian.Uint32(h[24:28]) == binary.BigEndian.Uint32(h[92:96]) && pages*pageSize > size {
		return fmt.Sprintf("is truncated (%d bytes where its header says %d)", size, pages*pageSize)
	}
	return ""
}

// walCut says why the WAL at path is cut short or missing ("" when it is
// whole as far as can be told). The WAL index beside it (-shm, when valid
// and of this WAL) says how many frames were committed (mxFrame): a WAL
// shorter than that lost committed history, whereas a partial frame past
// them is what a crash mid-write leaves, and SQLite drops it. Without a
// usable index, a WAL that is not a whole number of frames counts as cut.
func walCut(path string) string {
	shm := strings.TrimSuffix(path, "-wal") + "-shm"
	name := filepath.Base(path)
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && fi.Size() == 0) {
		if mx, _, ok := walIndex(shm); ok && mx > 0 {
			return fmt.Sprintf("has lost its write-ahead log %s (%s says %d committed pages are in it)", name, filepath.Base(shm), mx)
		}
		return ""
	}
	if err != nil {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var h [32]byte
	if _, err := io.ReadFull(f, h[:]); err != nil {
		return fmt.Sprintf("has its write-ahead log %s cut short (%d bytes)", name, fi.Size())
	}
	if m := binary.BigEndian.Uint32(h[0:4]); m != 0x377f0682 && m != 0x377f0683 {
		return fmt.Sprintf("has a damaged write-ahead log %s", name)
	}
	pageSize := int64(binary.BigEndian.Uint32(h[8:12]))
	if pageSize < 512 || pageSize > 65536 {
		return fmt.Sprintf("has a damaged write-ahead log %s", name)
	}
	frames := (fi.Size() - 32) / (pageSize + 24)
	if mx, salt, ok := walIndex(shm); ok && salt == [8]byte(h[16:24]) {
		if frames < int64(mx) {
			return fmt.Sprintf("has its write-ahead log %s cut short (%d of the %d committed frames %s names)", name, frames, mx, filepath.Base(shm))
		}
		return ""
	}
	if (fi.Size()-32)%(pageSize+24) != 0 {
		return fmt.Sprintf("has its write-ahead log %s cut short (%d bytes, not a whole number of frames)", name, fi.Size())
	}
	return ""
}

// walIndex reads the header of the WAL index (-shm) at path: the number of
// frames committed to the WAL (mxFrame) and the WAL's salts it belongs to.
// ok is false when there is none or it is not initialised, or its two
// copies of the header differ (being written). The index is in the host's
// byte order (SQLite WAL format §4.2).
func walIndex(path string) (mxFrame uint32, salt [8]byte, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, salt, false
	}
	defer f.Close()
	var h [96]byte
	if _, err := io.ReadFull(f, h[:]); err != nil {
		return 0, salt, false
	}
	if string(h[:48]) != string(h[48:96]) || h[12] == 0 || binary.NativeEndian.Uint32(h[0:4]) != 3007000 {
		return 0, salt, false
	}
	copy(salt[:], h[32:40])
	return binary.NativeEndian.Uint32(h[16:20]), salt, true
}

// checkHistorySchema refuses a database of a profile that had history when
// it has no schema at all (version 0): what a plain copy of a live pact.db
// without its pact.db-wal looks like, since the history sits in the WAL
// until a checkpoint.
// walAbsent is whether pact.db-wal was missing before SQLite opened it.
func checkHistorySchema(ctx context.Context, c *sql.DB, path string, walAbsent bool) error {
	var v int
	if err := c.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return nil // migrate says what is wrong
	}
	if v == 0 {
		why := "holds no history (no schema)"
		if walAbsent {
			why = "holds no history and its pact.db-wal is missing (a copy of pact.db alone?)"
		}
		return &HistoryError{Path: path, Why: why}
	}
	return nil
}

// Health is what Check found of a database that can be used.
type Health struct {
	Path          string // the database file (set on errors too)
	SchemaVersion int
	// ReadOnly is why it can only be read here (nil: writable).
	ReadOnly error
}

// Check opens the database as every command does (so a profile whose
// history is missing is refused, HistoryError), runs PRAGMA quick_check and
// compares its schema version with this binary's (SchemaVersion). Any
// finding is an error holding SQLite's words; `pact doctor` fails on it.
func (db *DB) Check(ctx context.Context) (Health, error) {
	h := Health{Path: db.path}
	c, err := db.conn(ctx)
	if err != nil {
		return h, err
	}
	h.ReadOnly = db.readOnly
	if err := c.QueryRowContext(ctx, "PRAGMA user_version").Scan(&h.SchemaVersion); err != nil {
		return h, fmt.Errorf("%s: reading the schema version: %w", db.path, err)
	}
	if h.SchemaVersion != SchemaVersion {
		return h, fmt.Errorf("%s has schema version %d, this pact writes %d", db.path, h.SchemaVersion, SchemaVersion)
	}
	if err := pragmaOK(ctx, c, "PRAGMA quick_check"); err != nil {
		return h, fmt.Errorf("%s failed its integrity check: %w", db.path, err)
	}
	return h, nil
}

// pragmaOK runs a check pragma (integrity_check, quick_check) and returns
// nil when it answers "ok", else its findings.
func pragmaOK(ctx context.Context, c interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, q string) error {
	rows, err := c.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	var found []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return err
		}
		found = append(found, s)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(found) == 1 && found[0] == "ok" {
		return nil
	}
	if len(found) > 5 {
		found = append(found[:5], fmt.Sprintf("and %d more", len(found)-5))
	}
	return errors.New(strings.Join(found, "; "))
}

// ErrCannotWrite is matched by CanWrite's error: the database can only be
// read here.
var ErrCannotWrite = errors.New("the database cannot be written here")

// CanWrite reports whether a write could be saved now: nil, or an error
// matching ErrCannotWrite saying why (a read-only PACT_HOME). It opens the
// database when it is not yet open, and writes nothing.
func (db *DB) CanWrite(ctx context.Context) error {
	if _, err := db.conn(ctx); err != nil {
		return err
	}
	if db.readOnly != nil {
		return fmt.Errorf("%w: %s can only be read (%v); make PACT_HOME writable", ErrCannotWrite, db.path, db.readOnly)
	}
	return nil
}
