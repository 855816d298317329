package store

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
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

// The write counter (issue 28). A pact.db that lost its last writes (a copy
// taken without its WAL after a checkpoint, put back alone later) is a
// whole SQLite file with a schema: nothing above tells it from the real
// one. So every write transaction of a profile's database adds one to a
// counter kept in the database (meta history_writes, beside a random
// history_id naming this database), and after its commit the counter is
// written to the history marker beside it (HistoryMarker). On open, a
// database whose counter is below the marker's lost writes the marker saw
// committed: it is refused (HistoryError, naming `pact restore`).
//
// What must not be refused, and why it is not:
//   - A process that ends (crash, kill, Ctrl+C) between its commit and the
//     marker leaves the marker behind the database: only a database
//     behind its marker is refused.
//   - Several processes writing at once: the counter is incremented inside
//     each write transaction, under SQLite's write lock, so it counts every
//     commit exactly once; each process then writes a counter that was
//     committed, never more (the larger of its own last commit and what
//     the marker held when it first wrote it). Processes that write in
//     turn may move the marker back: behind is never refused, so that only
//     makes the check judge less.
//   - A power cut (or an OS crash): pact commits without an fsync
//     (synchronous=NORMAL), so the marker may reach the disk while the last
//     commits in the WAL do not. The marker says in which boot it was
//     written (bootID; "" where the system cannot tell): in the same boot
//     no power was lost, so a database behind it lost writes by a copy;
//     in another boot it is refused only when it is behind the counter of
//     the last complete checkpoint (Durable), which SQLite had fsynced to
//     pact.db before the marker was written.
//   - `pact restore` builds a new database with a new history_id and
//     writes the marker anew; a marker naming another history_id (another
//     database put there, or a process still writing the one kept aside)
//     judges nothing.
//
// A marker that cannot be read (from an earlier release, half written)
// judges nothing either: the counter only adds refusals that are certain.
const (
	metaHistoryID     = "history_id"
	metaHistoryWrites = "history_writes"
)

// historyMark is the write counter kept in the HistoryMarker.
type historyMark struct {
	ID      string // the database's history_id
	Writes  int64  // the counter of the last commit recorded
	Durable int64  // the counter as of the last complete checkpoint
	Boot    string // the boot it was written in ("" unknown)
}

// markerHead is the marker's first line (all an earlier release wrote).
const markerHead = "this profile's history is in pact.db (with pact.db-wal and pact.db-shm)\n"

// encode is the marker's text: the head line, then one line of fixed
// width with the counter and a CRC-32 of the line before it, so that it is
// rewritten in place by one write of the same length and a torn or edited
// one is ignored.
func (m historyMark) encode() []byte {
	boot := m.Boot
	if boot == "" || len(boot) > 36 || strings.ContainsAny(boot, " \n") {
		boot = "-"
	}
	line := fmt.Sprintf("writes %-16.16s %020d %020d %-36s", m.ID, m.Writes, m.Durable, boot)
	return []byte(fmt.Sprintf("%s%s %08x\n", markerHead, line, crc32.ChecksumIEEE([]byte(line))))
}

// readMark reads the write counter of the marker at path; ok is false
// when it has none that can be trusted.
func readMark(path string) (historyMark, bool) {
	b, err := os.ReadFile(path)
	if err != nil || !strings.HasPrefix(string(b), markerHead) {
		return historyMark{}, false
	}
	line, _, _ := strings.Cut(string(b[len(markerHead):]), "\n")
	i := strings.LastIndexByte(line, ' ')
	if i < 0 || fmt.Sprintf("%08x", crc32.ChecksumIEEE([]byte(line[:i]))) != line[i+1:] {
		return historyMark{}, false
	}
	var m historyMark
	if n, err := fmt.Sscanf(line[:i], "writes %s %d %d %s", &m.ID, &m.Writes, &m.Durable, &m.Boot); n != 4 || err != nil {
		return historyMark{}, false
	}
	if m.Boot == "-" {
		m.Boot = ""
	}
	return m, true
}

// writeMark writes m to the marker at path in place (one write), creating
// it when create is set. Errors are ignored: the marker only adds
// refusals, and one that cannot be written judges less.
func writeMark(path string, m historyMark, create ...bool) {
	flag := os.O_WRONLY
	if len(create) > 0 && create[0] {
		flag |= os.O_CREATE
	}
	f, err := os.OpenFile(path, flag, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	writeMarkTo(f, m, true)
}

// writeMarkTo writes m over the marker file f from its start (every
// marker is as long), cutting off what a longer one had past it when
// trim is set.
func writeMarkTo(f *os.File, m historyMark, trim bool) {
	b := m.encode()
	if _, err := f.WriteAt(b, 0); err == nil && trim {
		if fi, err := f.Stat(); err == nil && fi.Size() > int64(len(b)) {
			f.Truncate(int64(len(b)))
		}
	}
}

// bootOnce is the boot this process runs in (bootID, read once).
var bootOnce = sync.OnceValue(func() string { return bootID() })

// currentBoot is the boot this process runs in; tests replace it.
var currentBoot = func() string { return bootOnce() }

// countWrite adds one to the database's write counter inside tx (count:
// countSQL prepared once, or nil) and returns the database's history_id and the
// new count. id is the history_id this process already read ("" the first
// time).
func countWrite(ctx context.Context, tx *sql.Tx, count *sql.Stmt, id string) (string, int64, error) {
	if id == "" {
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO meta (key, value) VALUES (?, lower(hex(randomblob(8))))`, metaHistoryID); err != nil {
			return "", 0, err
		}
		if err := tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, metaHistoryID).Scan(&id); err != nil {
			return "", 0, err
		}
	}
	var n int64
	var row *sql.Row
	if count != nil {
		row = tx.StmtContext(ctx, count).QueryRowContext(ctx)
	} else {
		row = tx.QueryRowContext(ctx, countSQL)
	}
	err := row.Scan(&n)
	return id, n, err
}

// countSQL adds one to the write counter and returns it.
const countSQL = `INSERT INTO meta (key, value) VALUES ('` + metaHistoryWrites + `', 1)
	ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1 RETURNING CAST(value AS INTEGER)`

// dbCounter reads the database's history_id and write counter ("" and 0
// when it has none: a database of an earlier release, or never written).
func dbCounter(ctx context.Context, c interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}) (id string, writes int64, err error) {
	rows, err := c.QueryContext(ctx, `SELECT key, value FROM meta WHERE key IN (?, ?)`, metaHistoryID, metaHistoryWrites)
	if err != nil {
		return "", 0, err
	}
	defer rows.Close()
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return "", 0, err
		}
		if k == metaHistoryID {
			id = v
		} else {
			writes, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	return id, writes, rows.Err()
}

// checkWriteCounter refuses (HistoryError) a profile's database whose
// write counter is behind the one its marker recorded, as the rules above
// the constants say. It reads; it writes nothing.
func checkWriteCounter(ctx context.Context, c *sql.DB, path string) error {
	m, ok := readMark(filepath.Join(filepath.Dir(path), HistoryMarker))
	if !ok {
		return nil
	}
	id, n, err := dbCounter(ctx, c)
	if err != nil || id == "" || id != m.ID || n >= m.Writes {
		return nil // migrate or the caller says what is wrong; or nothing was lost
	}
	if n >= m.Durable && (m.Boot == "" || m.Boot != currentBoot()) {
		return nil // a power cut may have taken the last commits
	}
	return &HistoryError{Path: path, Why: fmt.Sprintf("has lost its last %s (it holds %d of the %d this profile made: a copy of pact.db taken without its pact.db-wal, or an older copy put back?)",
		plural(int(m.Writes-n), "write", "writes"), n, m.Writes)}
}

// noteWrite records, after a commit, the counter n of database id in the
// marker (created when create is set; else only kept up to date when it
// exists). checkpointed says a complete checkpoint followed the commit:
// everything up to n is on disk in pact.db. The marker is read once, when
// this process first writes it, and then written in place, one write per
// commit (its file kept open): what other processes wrote since is not
// read again, so a late writer may move the counter back, which only
// makes the check judge less.
func (db *DB) noteWrite(id string, n int64, checkpointed, create bool) {
	if id == "" || n == 0 {
		return
	}
	db.histMu.Lock()
	defer db.histMu.Unlock()
	boot := currentBoot()
	first := db.mark == nil
	if first {
		path := filepath.Join(filepath.Dir(db.path), HistoryMarker)
		flag := os.O_RDWR
		if create {
			flag |= os.O_CREATE
		}
		f, err := os.OpenFile(path, flag, 0o600)
		if err != nil {
			return
		}
		db.mark = f
		db.markState = historyMark{}
		if old, ok := readMark(path); ok && old.ID == id {
			db.markState.Durable = old.Durable // fsynced in any boot
			if old.Boot == boot && boot != "" {
				db.markState.Writes = old.Writes // a late writer does not move it back
			}
		}
	}
	m := db.markState
	if m.ID != id {
		m = historyMark{}
	}
	m.ID, m.Boot = id, boot
	m.Writes = max(m.Writes, n)
	if checkpointed {
		m.Durable = max(m.Durable, n)
	}
	m.Durable = min(m.Durable, m.Writes)
	writeMarkTo(db.mark, m, first)
	db.markState = m
}

// markHistory creates (or rewrites) the history marker beside a profile's
// database with its current write counter: after an import of an earlier
// release's files, and after `pact restore`, which puts another database
// (a new history_id) in place.
func (db *DB) markHistory(ctx context.Context, c *sql.DB) {
	id, n, _ := dbCounter(ctx, c)
	path := filepath.Join(filepath.Dir(db.path), HistoryMarker)
	if id == "" {
		// No write counted yet: the marker says only that there is history.
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			os.WriteFile(path, []byte(markerHead), 0o600)
		}
		return
	}
	writeMark(path, historyMark{ID: id, Writes: n, Boot: currentBoot()}, true)
}
