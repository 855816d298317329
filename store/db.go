package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver ("sqlite"); CGO_ENABLED=0 builds keep working
)

// DBFileName is the name of a profile's database in its data folder.
const DBFileName = "pact.db"

// BusyTimeout is how long a statement waits for another pact process that
// holds the database's write lock before failing with "database is locked".
const BusyTimeout = 10_000 // milliseconds

// DB is one profile's SQLite database (one file, WAL journal, foreign keys
// on, a busy timeout so that several pact processes can share it). It keeps
// conversations and their turns, the receipt archive, grants' non-secret
// metadata, the card cache and pins; secrets stay in the keyring.
//
// A DB made by ProfileDB opens lazily: the file is created, migrated to
// the current schema (Migrations) and the previous release's files are
// imported (ImportFiles) on the first call that needs it, and that call
// returns any error. All methods are safe for concurrent use.
type DB struct {
	path     string
	importer func(context.Context, *sql.DB) error

	once sync.Once
	db   *sql.DB
	err  error
	// histID is the database's history_id once read (countWrite); mark is
	// the history marker, open once written, and markState what it holds
	// (noteWrite). All under histMu.
	histMu    sync.Mutex
	histID    string
	countStmt *sql.Stmt
	mark      *os.File
	markState historyMark
	// readOnly is why the database could only be opened for reading (nil
	// when it is writable).
	readOnly error
}

var (
	openMu sync.Mutex
	opened = map[string]*DB{}
)

// DBPath is the database file of profile name: Data/profiles/NAME/pact.db.
func (d Dirs) DBPath(name string) string {
	return filepath.Join(d.ProfileDataDir(name), DBFileName)
}

// ProfileDB returns the database of profile name (one shared handle per
// file in a process). It is opened on first use; on that first open the
// profile's files written by a release before the database (conversations/,
// receipts/, grants.json) are imported once (see ImportFiles).
func ProfileDB(d Dirs, name string) *DB {
	path := d.DBPath(name)
	openMu.Lock()
	defer openMu.Unlock()
	if db, ok := opened[path]; ok {
		return db
	}
	dataDir, pinsFile := d.ProfileDataDir(name), filepath.Join(d.Data, "pins.json")
	db := &DB{path: path}
	db.importer = func(ctx context.Context, c *sql.DB) error { return db.importFiles(ctx, c, dataDir, pinsFile) }
	opened[path] = db
	return db
}

// Open opens (creating it when absent) the database at path and migrates it
// to the current schema. It imports nothing. Close it when done.
func Open(ctx context.Context, path string) (*DB, error) {
	db := &DB{path: path}
	if _, err := db.conn(ctx); err != nil {
		return nil, err
	}
	return db, nil
}

// Path is the database file.
func (db *DB) Path() string { return db.path }

// dsn configures every connection: busy timeout first, WAL, foreign keys,
// synchronous=NORMAL (in WAL mode a commit is not fsynced; the WAL is
// fsynced at checkpoints, so a crash of the process never loses a commit
// and a power cut may lose the last ones but never corrupts the file), and
// BEGIN IMMEDIATE for transactions so writers queue on the busy timeout
// instead of failing on a lock upgrade.
func dsn(path string) string {
	return path + fmt.Sprintf("?_busy_timeout=%d&_foreign_keys=1&_journal_mode=WAL&_synchronous=NORMAL&_txlock=immediate", BusyTimeout)
}

// WALCheckpointBytes is the WAL size after which a commit is followed by a
// truncating checkpoint (two fsyncs). pact processes are short-lived and
// exit without closing the database: the first connection of each process
// rebuilds the WAL index by reading the whole WAL and forgets what was
// already checkpointed, so SQLite's own automatic checkpoint (at 1,000
// pages) would copy the whole WAL again after every commit. Truncating at
// 512 KiB keeps start-up flat (at most ~128 frames to read) and costs two
// or three fsyncs about once every twenty-five sends; other sends do none.
const WALCheckpointBytes = 512 << 10

// checkpointIfLarge runs PRAGMA wal_checkpoint(TRUNCATE) when the WAL has
// grown past WALCheckpointBytes. A checkpoint that cannot finish (another
// process reading) is left for a later commit. It reports whether a
// checkpoint ran to its end (every commit so far in pact.db, fsynced).
func (db *DB) checkpointIfLarge(ctx context.Context, c *sql.DB) bool {
	if fi, err := os.Stat(db.path + "-wal"); err != nil || fi.Size() < WALCheckpointBytes {
		return false
	}
	var busy, log, done int
	err := c.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &log, &done)
	return err == nil && busy == 0
}

// conn returns the opened *sql.DB, opening and migrating it on first use.
func (db *DB) conn(ctx context.Context) (*sql.DB, error) {
	db.once.Do(func() { db.db, db.err = db.open(ctx) })
	return db.db, db.err
}

func (db *DB) open(ctx context.Context) (*sql.DB, error) {
	if strings.ContainsRune(db.path, '?') {
		return nil, fmt.Errorf("the database path %s contains '?'; choose another PACT_HOME", db.path)
	}
	if err := os.MkdirAll(filepath.Dir(db.path), 0o700); err != nil {
		return nil, fmt.Errorf("creating %s: %w", filepath.Dir(db.path), err)
	}
	// A profile that had history is not started afresh: a pact.db that is
	// missing, empty (truncated, a failed copy: SQLite would take it as a
	// new database), shorter than its header says, or whose WAL is cut
	// short is refused before SQLite opens it. (A file another process has
	// just created is empty only until its first write, and such a profile
	// has no history yet.)
	history := db.hadHistory()
	_, werr := os.Stat(db.path + "-wal")
	walAbsent := errors.Is(werr, fs.ErrNotExist)
	if history {
		if err := checkHistoryFiles(db.path); err != nil {
			return nil, err
		}
	}
	// Create the file with mode 0600 before SQLite does (it would use 0644).
	if f, err := os.OpenFile(db.path, os.O_RDWR|os.O_CREATE, 0o600); err != nil {
		if readOnlyErr(err) {
			if _, serr := os.Stat(db.path); serr == nil {
				return db.openReadOnly(ctx, err)
			}
		}
		return nil, fmt.Errorf("opening %s: %w", db.path, err)
	} else {
		f.Close()
	}
	sdb, err := sql.Open("sqlite", dsn(db.path))
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", db.path, err)
	}
	if history {
		// Without its WAL, a live pact.db has no schema yet.
		if err := checkHistorySchema(ctx, sdb, db.path, walAbsent); err != nil {
			sdb.Close()
			return nil, err
		}
		// With a schema, it may still have lost its last writes.
		if err := checkWriteCounter(ctx, sdb, db.path); err != nil {
			sdb.Close()
			return nil, err
		}
	}
	if err := migrate(ctx, sdb, len(Migrations)); err != nil {
		sdb.Close()
		if strings.Contains(err.Error(), "not a database") || strings.Contains(err.Error(), "malformed") {
			return nil, fmt.Errorf("%s is damaged (%v); pact will not overwrite it: restore it with `pact restore BACKUP` (a file `pact backup` wrote), or move it aside to start this profile's history afresh", db.path, err)
		}
		return nil, fmt.Errorf("%s: %w", db.path, err)
	}
	if db.importer != nil {
		if err := db.importer(ctx, sdb); err != nil {
			sdb.Close()
			return nil, err
		}
	}
	return sdb, nil
}

// readOnlyErr reports an error opening for writing that reading may
// still get past: a read-only file system, or a file or folder this user
// may not write.
func readOnlyErr(err error) bool {
	return errors.Is(err, syscall.EROFS) || errors.Is(err, fs.ErrPermission)
}

// openReadOnly opens the database for reading only, when it cannot be
// opened for writing (why): listing, showing and verifying work, and every
// write fails saying why (wrap). The WAL is read when SQLite can use it
// (its -shm file exists); else the file is opened as immutable, which
// reads pact.db alone.
func (db *DB) openReadOnly(ctx context.Context, why error) (*sql.DB, error) {
	db.readOnly = why
	var lastErr error
	for _, q := range []string{"mode=ro", "mode=ro&immutable=1"} {
		sdb, err := sql.Open("sqlite", "file:"+db.path+"?"+q+fmt.Sprintf("&_busy_timeout=%d&_foreign_keys=1", BusyTimeout))
		if err != nil {
			lastErr = err
			continue
		}
		var v int
		if err := sdb.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
			sdb.Close()
			lastErr = err
			continue
		}
		if v == 0 && db.hadHistory() {
			sdb.Close()
			return nil, &HistoryError{Path: db.path, Why: "holds no history (no schema)"}
		}
		if v != len(Migrations) {
			sdb.Close()
			return nil, fmt.Errorf("%s cannot be written (%v) and has schema version %d, not %d: open it once where it can be written", db.path, why, v, len(Migrations))
		}
		return sdb, nil
	}
	return nil, fmt.Errorf("opening %s: %v; read-only: %w", db.path, why, lastErr)
}

// HistoryMarker is the file, beside a profile's pact.db, that says the
// profile has had a database: an empty pact.db next to it is refused.
const HistoryMarker = "pact.db.history"

// hadHistory reports signs that this profile had history before: the
// marker written on a successful open, or the files of a release before the
// database kept aside after their import.
func (db *DB) hadHistory() bool {
	dir := filepath.Dir(db.path)
	for _, name := range []string{HistoryMarker, ImportedDir} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return true
		}
	}
	return false
}

// Close closes the database (a lazy DB that was never used has nothing to
// close). A DB from ProfileDB is forgotten, so the next ProfileDB opens it
// again.
func (db *DB) Close() error {
	openMu.Lock()
	if opened[db.path] == db {
		delete(opened, db.path)
	}
	openMu.Unlock()
	var err error
	db.once.Do(func() { db.err = errors.New("the database is closed") })
	db.histMu.Lock()
	if db.countStmt != nil {
		db.countStmt.Close()
		db.countStmt = nil
	}
	db.histMu.Unlock()
	if db.db != nil {
		err = db.db.Close()
	}
	db.histMu.Lock()
	if db.mark != nil {
		db.mark.Close()
		db.mark = nil
	}
	db.histMu.Unlock()
	return err
}

// IntegrityCheck runs PRAGMA integrity_check and returns nil when the
// answer is "ok", else an error holding SQLite's findings.
func (db *DB) IntegrityCheck(ctx context.Context) error {
	c, err := db.conn(ctx)
	if err != nil {
		return err
	}
	if err := pragmaOK(ctx, c, "PRAGMA integrity_check"); err != nil {
		return fmt.Errorf("%s failed its integrity check: %w", db.path, err)
	}
	return nil
}

// tx runs fn in one write transaction (BEGIN IMMEDIATE) and commits it, or
// rolls it back when fn or the commit fails.
func (db *DB) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	c, err := db.conn(ctx)
	if err != nil {
		return err
	}
	return db.txMark(ctx, c, fn, true)
}

// txOn is tx on c (while opening), keeping the marker's write counter up
// to date without creating the marker.
func (db *DB) txOn(ctx context.Context, c *sql.DB, fn func(*sql.Tx) error) error {
	return db.txMark(ctx, c, fn, false)
}

// txMark runs fn in one write transaction on c. In a profile's database
// (ProfileDB) the transaction also counts itself (countWrite) and, once
// committed, the count goes to the history marker (noteWrite), which is
// created when mark is set: once it holds something, the profile has
// history, and an emptied file, or one that lost its last writes, is
// refused rather than taken as it is (hadHistory, checkWriteCounter).
func (db *DB) txMark(ctx context.Context, c *sql.DB, fn func(*sql.Tx) error, mark bool) error {
	var count *sql.Stmt
	if db.importer != nil {
		// Prepared once, before the transaction holds a connection.
		db.histMu.Lock()
		if db.countStmt == nil {
			if st, err := c.PrepareContext(ctx, countSQL); err == nil {
				db.countStmt = st
			}
		}
		count = db.countStmt
		db.histMu.Unlock()
	}
	t, err := c.BeginTx(ctx, nil)
	if err != nil {
		return db.wrap(err)
	}
	if err := fn(t); err != nil {
		t.Rollback()
		return db.wrap(err)
	}
	var (
		id string
		n  int64
	)
	if db.importer != nil {
		db.histMu.Lock()
		known := db.histID
		db.histMu.Unlock()
		if id, n, err = countWrite(ctx, t, count, known); err != nil {
			t.Rollback()
			return db.wrap(err)
		}
	}
	if err := t.Commit(); err != nil {
		t.Rollback()
		return db.wrap(err)
	}
	done := db.checkpointIfLarge(ctx, c)
	if db.importer != nil {
		db.histMu.Lock()
		db.histID = id
		db.histMu.Unlock()
		db.noteWrite(id, n, done, mark)
	}
	return nil
}

// wrap names the database in an error and says the write left it unchanged.
func (db *DB) wrap(err error) error {
	if err == nil {
		return nil
	}
	if db.readOnly != nil {
		return fmt.Errorf("%s can only be read here (%v): nothing can be saved; make PACT_HOME writable: %w", db.path, db.readOnly, err)
	}
	var se interface{ Code() int }
	if errors.As(err, &se) {
		return fmt.Errorf("%s: %w (nothing was changed)", db.path, err)
	}
	return err
}

// Exec runs one SQL statement in a write transaction. It is for repairs and
// for tests that damage rows on purpose; pact itself writes through the
// typed methods.
func (db *DB) Exec(ctx context.Context, query string, args ...any) error {
	return db.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, query, args...)
		return err
	})
}
