package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Contents counts what a database holds: what `pact backup` and `pact
// restore` report.
type Contents struct {
	SchemaVersion int `json:"schemaVersion"`
	Conversations int `json:"conversations"`
	Turns         int `json:"turns"`
	Receipts      int `json:"receipts"`
	Grants        int `json:"grants"` // grants' metadata (the tokens stay in the keyring)
	Pins          int `json:"pins"`
}

func contentsOf(ctx context.Context, c interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (Contents, error) {
	var n Contents
	if err := c.QueryRowContext(ctx, "PRAGMA user_version").Scan(&n.SchemaVersion); err != nil {
		return n, err
	}
	err := c.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM conversations), (SELECT count(*) FROM turns),
		(SELECT count(*) FROM receipts), (SELECT count(*) FROM grants), (SELECT count(*) FROM pins)`).
		Scan(&n.Conversations, &n.Turns, &n.Receipts, &n.Grants, &n.Pins)
	return n, err
}

// ErrExists is matched by Backup's refusal of a file that exists (without
// force).
var ErrExists = errors.New("the file exists")

// ErrInUse is matched by Restore's refusal of a database another process
// has open: what it writes after the restore would go to the database kept
// aside, and be lost from the restored one.
var ErrInUse = errors.New("the database is in use")

// ErrNotRegular is matched by Backup's refusal, even with force, of a FILE
// that is not a regular file (a device such as /dev/full, a FIFO, a
// directory, a symbolic link): the backup is renamed into place, and
// would replace it.
var ErrNotRegular = errors.New("not a regular file")

// Backup writes a consistent copy of the whole database, its WAL included,
// to the single file dest (SQLite VACUUM INTO: one read transaction, so
// other pact processes may go on writing meanwhile). The copy is written
// beside dest, fsynced and renamed into place (mode 0600): dest is either
// absent, the old file or the whole copy. An existing dest is refused
// (ErrExists) unless force, and one that is not a regular file even with
// force (ErrNotRegular). Secrets are not in it: they stay in the keyring.
func (db *DB) Backup(ctx context.Context, dest string, force bool) (Contents, error) {
	c, err := db.conn(ctx)
	if err != nil {
		return Contents{}, err
	}
	if fi, err := os.Lstat(dest); err == nil {
		if !force {
			return Contents{}, fmt.Errorf("%s: %w (use --force to replace it)", dest, ErrExists)
		}
		if !fi.Mode().IsRegular() {
			return Contents{}, fmt.Errorf("%s: %w (name a new file, or a regular file to replace with --force)", dest, ErrNotRegular)
		}
	}
	n, err := contentsOf(ctx, c)
	if err != nil {
		return n, fmt.Errorf("reading %s: %w", db.path, err)
	}
	dir := filepath.Dir(dest)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(dest)+".tmp-*")
	if err != nil {
		return n, fmt.Errorf("writing the backup: %w", err)
	}
	name := tmp.Name()
	tmp.Close()
	os.Remove(name) // VACUUM INTO writes a new file
	defer os.Remove(name)
	if _, err := c.ExecContext(ctx, "VACUUM INTO ?", name); err != nil {
		return n, fmt.Errorf("writing the backup of %s to %s: %w", db.path, dest, err)
	}
	if err := syncFile(name, 0o600); err != nil {
		return n, fmt.Errorf("writing the backup: %w", err)
	}
	if err := os.Rename(name, dest); err != nil {
		return n, fmt.Errorf("writing the backup: %w", err)
	}
	syncDir(dir)
	return n, nil
}

func syncFile(path string, perm fs.FileMode) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Chmod(perm); err != nil {
		return err
	}
	return f.Sync()
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// InspectBackup opens the file a backup wrote, read-only, and checks it as
// Restore does before it copies anything: an SQLite database whose schema
// version this binary can migrate (3 to SchemaVersion), whose tables are
// pact's own as pact's migrations make them at that version (checkSchema),
// which pass PRAGMA integrity_check. It returns what the file holds.
func InspectBackup(ctx context.Context, file string) (Contents, error) {
	b, err := openBackup(ctx, file)
	if err != nil {
		return Contents{}, err
	}
	defer b.Close()
	fresh, err := pactSchema(ctx, b.version)
	if err != nil {
		return Contents{}, err
	}
	if _, err := b.check(ctx, fresh); err != nil {
		return Contents{}, err
	}
	return b.contents, nil
}

// backupFile is a backup opened read-only (immutable: nothing is written
// beside it) whose version is one this binary can migrate.
type backupFile struct {
	*sql.DB
	file, uri string
	version   int
	contents  Contents
}

func openBackup(ctx context.Context, file string) (*backupFile, error) {
	fi, err := os.Stat(file)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() == 0 {
		return nil, fmt.Errorf("%s is not a backup pact wrote (empty, or not a file)", file)
	}
	if wi, err := os.Stat(file + "-wal"); err == nil && wi.Size() > 0 {
		return nil, fmt.Errorf("%s has a write-ahead log beside it (%s-wal): it is a live database, not a backup; make one with `pact backup FILE`", file, file)
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, err
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: "mode=ro&immutable=1"}
	c, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, err
	}
	b := &backupFile{DB: c, file: file, uri: u.String()}
	if err := c.QueryRowContext(ctx, "PRAGMA user_version").Scan(&b.version); err != nil {
		c.Close()
		return nil, fmt.Errorf("%s is not a backup pact wrote: %v", file, err)
	}
	if b.version > SchemaVersion {
		c.Close()
		return nil, fmt.Errorf("%s has schema version %d, newer than this pact knows (%d): upgrade pact", file, b.version, SchemaVersion)
	}
	if b.version < 3 { // conversations, receipts and pins are all there from version 3
		c.Close()
		return nil, fmt.Errorf("%s is not a backup pact wrote (schema version %d)", file, b.version)
	}
	return b, nil
}

// schemaObject is one row of sqlite_schema.
type schemaObject struct{ Type, Name, Table, SQL string }

// schemaOf reads the schema of the database schema ("main", or an
// attached one's name) of c, by name.
func schemaOf(ctx context.Context, c interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, schema string) (map[string]schemaObject, error) {
	rows, err := c.QueryContext(ctx, `SELECT type, name, tbl_name, coalesce(sql, '') FROM "`+schema+`".sqlite_schema`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]schemaObject{}
	for rows.Next() {
		var o schemaObject
		if err := rows.Scan(&o.Type, &o.Name, &o.Table, &o.SQL); err != nil {
			return nil, err
		}
		out[o.Name] = o
	}
	return out, rows.Err()
}

// pactSchema is the schema pact's migrations make at version v, read from
// a new database in memory.
func pactSchema(ctx context.Context, v int) (map[string]schemaObject, error) {
	c, err := sql.Open("sqlite", "file:pact-schema?mode=memory")
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.SetMaxOpenConns(1) // one in-memory database
	if err := migrate(ctx, c, v); err != nil {
		return nil, err
	}
	return schemaOf(ctx, c, "main")
}

// check compares the backup's schema with pact's at its version (fresh)
// and runs the integrity check of the tables a restore copies. Every table
// a restore copies must be there exactly as pact makes it (a table pact
// makes otherwise may run code when read: refused); anything else the file
// holds that pact never makes (a trigger, a view, a table, an index, the
// planner's statistics) is not restored and is named in leftOut. It sets
// b.contents.
func (b *backupFile) check(ctx context.Context, fresh map[string]schemaObject) (leftOut []string, err error) {
	got, err := schemaOf(ctx, b.DB, "main")
	if err != nil {
		return nil, fmt.Errorf("%s is not a backup pact wrote: %v", b.file, err)
	}
	for _, t := range append(restoredTables(fresh), "meta") {
		o, ok := got[t]
		if !ok {
			return nil, fmt.Errorf("%s is not a backup pact wrote: it has no table %s", b.file, t)
		}
		if o != fresh[t] {
			return nil, fmt.Errorf("%s is not a backup pact wrote: its table %s is not the one pact makes (%s); nothing was changed", b.file, t, clip(o.SQL, 80))
		}
	}
	names := make([]string, 0, len(got))
	for name := range got {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if o := got[name]; o != fresh[name] && !strings.HasPrefix(name, "sqlite_autoindex_") && !ftsTable(o) {
			leftOut = append(leftOut, fmt.Sprintf("%s %s, which pact does not make", o.Type, clip(name, 60)))
		}
	}
	for _, t := range append(restoredTables(fresh), "meta") {
		if err := pragmaOK(ctx, b.DB, `PRAGMA integrity_check("`+t+`")`); err != nil {
			return nil, fmt.Errorf("%s fails its integrity check (%v): it is not a usable backup", b.file, err)
		}
	}
	if b.contents, err = contentsOf(ctx, b.DB); err != nil {
		return nil, fmt.Errorf("%s is not a backup pact wrote: %v", b.file, err)
	}
	return leftOut, nil
}

// ftsTable reports pact's search index or one of its shadow tables, which
// another SQLite may have written in other words; a restore makes them
// anew, and never reads them.
func ftsTable(o schemaObject) bool {
	switch o.Name {
	case "turns_fts", "turns_fts_data", "turns_fts_idx", "turns_fts_content", "turns_fts_docsize", "turns_fts_config":
		return o.Type == "table"
	}
	return false
}

// clip shortens s to n characters for a message.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// restoreOrder are pact's tables whose rows a restore copies, parents
// before the rows that refer to them (foreign keys). What a restore does
// not copy is in notRestored; a table pact's migrations make must be in
// one of the two (TestRestore_EveryTableIsCopiedOrSaidWhyNot).
var restoreOrder = []string{
	"conversations", "current_conversations", "turns", "turn_parts", "blobs", "sends", "drafts",
	"grants", "receipts", "receipt_brands", "receipt_scopes", "receipt_turns", "pins", "card_changes",
	"notes", "secrets", "server_users", "server_devices", "server_registrations",
}

// notRestored are the tables a restore does not copy, and why.
var notRestored = map[string]string{
	"meta":                   "its keys are copied one by one (restoredMeta)",
	"cards":                  "the card cache: fetched again, with its signature checked again (A2A §8.4)",
	"turns_fts":              "the search index: rebuilt from the turns by the next search",
	"sqlite_stat1":           "the planner's statistics: made again by SQLite",
	"sqlite_stat4":           "the planner's statistics: made again by SQLite",
	"sqlite_sequence":        "SQLite's own",
	"server_enrolment_codes": "one-time enrolment codes: short-lived, made again by pact serve user add",
	"server_device_jtis":     "device tokens already seen: they expire within a minute",
	"server_rate_counts":     "rate-limit counters: they start afresh",
	"server_leases":          "leases of turns and logins in flight: they expire on their own, and a restore starts none",
	"server_shared":          "what the replicas of a server share: recorded again by the next pact serve",
}

// restoredMeta is the meta keys a restore copies: the import of an earlier
// release's files (done, and its report) and the notes kept for the User.
// Not the search index's progress (the index is rebuilt) nor the write
// counter (a restored database is a new one).
const restoredMeta = `key IN ('` + metaImported + `', 'import_report') OR key LIKE 'note:%'`

// restoredTables are the tables of restoreOrder that the schema fresh has.
func restoredTables(fresh map[string]schemaObject) []string {
	var out []string
	for _, t := range restoreOrder {
		if o, ok := fresh[t]; ok && o.Type == "table" {
			out = append(out, t)
		}
	}
	return out
}

// RestoreChecks check again, as a restore copies them, the rows whose
// meaning pact checked when it first wrote them; a row that fails is not
// restored and is named in Restored.LeftOut. A nil check lets every row
// through.
type RestoreChecks struct {
	// Grant checks a grant's document (delegation.Grant's JSON) as login
	// checked it: its endpoints under the registration of the Provider of
	// its interface URL.
	Grant func(interfaceURL, brand string, data []byte) error
	// Pin checks a pin as pinning makes them.
	Pin func(Pin) error
	// Receipt checks what a receipt was checked against (its expect
	// column: receipts.Expect's JSON, with the jwks_uri its key came from)
	// as login checked the grant it came from. A receipt that fails is
	// restored as rejected, with the reason among its problems; the others
	// are restored without a verdict (Receipt.Restored): the file's verdict
	// is not pact's.
	Receipt func(expect []byte) error
}

// Restored is what Restore did.
type Restored struct {
	Contents
	// Aside is where the database it replaced was kept (with "-wal" beside
	// it when it had one); "" when there was none.
	Aside string `json:"aside,omitempty"`
	// LeftOut names what the file held that was not restored: what pact
	// never makes (triggers, views, other tables), and rows that failed
	// their check again (RestoreChecks).
	LeftOut []string `json:"leftOut,omitempty"`
	// NotRechecked is how many receipts came back without the verdict the
	// file gave them (Receipt.Restored): a backup's word is not pact's, and
	// they are not verified until an online `pact receipts verify` checks
	// them against their Brand's published keys.
	NotRechecked int `json:"notRechecked"`
}

// Restore replaces the database of profile name with the history in the
// backup file. The file is checked first (InspectBackup's checks; nothing
// changes when it fails), then a new database is built beside pact.db from
// its data, never from its schema: pact's migrations make the database at
// the file's version, the rows of pact's own tables are copied by explicit
// column lists (restoreOrder; the card cache and the search index are
// made again), each row checked against pact's constraints and column
// types, grants and pins again by chk; then it is migrated to this
// binary's schema, and the receipts' verdicts of the file are set aside
// (setAside: Restored.NotRechecked). Triggers, views and tables that pact does not make stay
// behind in the file (Restored.LeftOut). The current pact.db and its
// pact.db-wal, if any, are kept aside as pact.db.before-restore-TIME (and
// -wal), whatever their state (a refused, emptied or damaged database is
// what one restores over), and the new database is renamed into place. A
// database another process has open is refused (ErrInUse, on unix: its
// -shm lock), and nothing changes.
func Restore(ctx context.Context, d Dirs, name, file string, chk RestoreChecks) (Restored, error) {
	b, err := openBackup(ctx, file)
	if err != nil {
		return Restored{}, err
	}
	defer b.Close()
	fresh, err := pactSchema(ctx, b.version)
	if err != nil {
		return Restored{}, err
	}
	res := Restored{}
	if res.LeftOut, err = b.check(ctx, fresh); err != nil {
		return Restored{}, err
	}
	path := d.DBPath(name)
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Restored{}, err
	}
	if db, ok := lookupOpened(path); ok {
		db.Close()
	}
	inUse := func() error {
		if pid := inUseBy(path); pid != 0 {
			return fmt.Errorf("%s is open in another pact process (pid %d): %w; end it (a chat, `pact mcp`, a send) and restore again (nothing was changed)", path, pid, ErrInUse)
		}
		return nil
	}
	if err := inUse(); err != nil {
		return Restored{}, err
	}
	tmp := path + ".restore-tmp"
	left, kept, err := rebuild(ctx, b, fresh, tmp, chk)
	if err != nil {
		os.Remove(tmp)
		return Restored{}, err
	}
	res.LeftOut = append(res.LeftOut, left...)
	res.NotRechecked = kept
	if err := inUse(); err != nil {
		os.Remove(tmp)
		return Restored{}, err
	}
	if _, err := os.Stat(path); err == nil {
		res.Aside = path + ".before-restore-" + time.Now().UTC().Format("20060102T150405Z")
		if err := os.Rename(path, res.Aside); err != nil {
			os.Remove(tmp)
			return Restored{}, fmt.Errorf("keeping %s aside: %w (nothing was changed)", path, err)
		}
		if err := os.Rename(path+"-wal", res.Aside+"-wal"); err != nil && !errors.Is(err, fs.ErrNotExist) {
			os.Rename(res.Aside, path)
			os.Remove(tmp)
			return Restored{}, fmt.Errorf("keeping %s-wal aside: %w (nothing was changed)", path, err)
		}
	}
	os.Remove(path + "-shm") // the WAL index of the database kept aside
	os.Remove(path + "-wal") // none is left but a stray one
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return res, fmt.Errorf("restoring %s: %w (the previous database is kept as %s)", path, err, res.Aside)
	}
	syncDir(dir)
	db := ProfileDB(d, name)
	defer db.Close()
	c, err := db.conn(ctx)
	if err != nil {
		return res, err
	}
	if res.Contents, err = contentsOf(ctx, c); err != nil {
		return res, err
	}
	db.markHistory(ctx, c) // another database: the marker is written anew
	return res, nil
}

// rebuild makes the database tmp from the data of the backup b: pact's
// schema at b's version (fresh), the rows of pact's tables copied by
// explicit column lists and checked (column types, constraints, foreign
// keys, chk), a new history_id, then the migrations to this binary's
// schema, and the verdicts of the file set aside (setAside). It returns the
// rows left out by chk, and how many receipts are kept restored.
func rebuild(ctx context.Context, b *backupFile, fresh map[string]schemaObject, tmp string, chk RestoreChecks) ([]string, int, error) {
	for _, f := range []string{tmp, tmp + "-journal", tmp + "-wal", tmp + "-shm"} {
		os.Remove(f)
	}
	if f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600); err != nil {
		return nil, 0, fmt.Errorf("restoring: %w (nothing was changed)", err)
	} else {
		f.Close()
	}
	c, err := sql.Open("sqlite", tmp+fmt.Sprintf("?_busy_timeout=%d&_foreign_keys=1&_journal_mode=DELETE&_txlock=immediate", BusyTimeout))
	if err != nil {
		return nil, 0, err
	}
	defer c.Close()
	c.SetMaxOpenConns(1) // the attached backup is this connection's
	if err := migrate(ctx, c, b.version); err != nil {
		return nil, 0, err
	}
	if _, err := c.ExecContext(ctx, `ATTACH DATABASE ? AS backup`, b.uri); err != nil {
		return nil, 0, fmt.Errorf("reading %s: %w (nothing was changed)", b.file, err)
	}
	t, err := c.BeginTx(ctx, nil)
	if err != nil {
		return nil, 0, err
	}
	defer t.Rollback()
	for _, table := range restoredTables(fresh) {
		if err := copyRows(ctx, t, b.file, table); err != nil {
			return nil, 0, err
		}
	}
	if _, err := t.ExecContext(ctx, `INSERT OR REPLACE INTO main.meta (key, value) SELECT key, value FROM backup.meta WHERE (`+restoredMeta+`) AND typeof(value) = 'text'`); err != nil {
		return nil, 0, fmt.Errorf("%s: copying meta: %w (nothing was changed)", b.file, err)
	}
	left, err := checkRows(ctx, t, chk)
	if err != nil {
		return nil, 0, err
	}
	if _, err := t.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES (?, lower(hex(randomblob(8)))), (?, '0')`, metaHistoryID, metaHistoryWrites); err != nil {
		return nil, 0, err
	}
	if err := t.Commit(); err != nil {
		return nil, 0, fmt.Errorf("restoring: %w (nothing was changed)", err)
	}
	if _, err := c.ExecContext(ctx, `DETACH DATABASE backup`); err != nil {
		return nil, 0, err
	}
	if err := migrate(ctx, c, len(Migrations)); err != nil {
		return nil, 0, fmt.Errorf("migrating the restored history: %w (nothing was changed)", err)
	}
	more, kept, err := setAside(ctx, c, chk)
	if err != nil {
		return nil, 0, fmt.Errorf("restoring: %w (nothing was changed)", err)
	}
	left = append(left, more...)
	if err := c.Close(); err != nil {
		return nil, 0, err
	}
	if err := syncFile(tmp, 0o600); err != nil {
		return nil, 0, fmt.Errorf("restoring: %w (nothing was changed)", err)
	}
	return left, kept, nil
}

// setAside takes from the restored database c every verdict the backup
// held of its receipts, which are the file's, not pact's: a receipt whose
// jwks_uri fails chk.Receipt (the rule login applied to the grant it came
// from) is kept as rejected, saying why; every other receipt is kept
// restored (Receipt.Restored: not verified, no problems) until pact checks
// it again. A turn's receipt verdict then reads from its receipt
// (turnColumns); a turn whose receipt the file does not hold is not
// verified (pact has nothing to check it with). It returns what it left
// out, and how many receipts it kept restored.
func setAside(ctx context.Context, c *sql.DB, chk RestoreChecks) (left []string, restored int, err error) {
	t, err := c.BeginTx(ctx, nil)
	if err != nil {
		return nil, 0, err
	}
	defer t.Rollback()
	type receipt struct{ user, id, expect, problems string }
	var bad []receipt
	var why []error
	if chk.Receipt != nil {
		rows, err := t.QueryContext(ctx, `SELECT user_id, id, expect, problems FROM receipts ORDER BY user_id, id`)
		if err != nil {
			return nil, 0, err
		}
		for rows.Next() {
			var r receipt
			if err := rows.Scan(&r.user, &r.id, &r.expect, &r.problems); err != nil {
				rows.Close()
				return nil, 0, err
			}
			if err := chk.Receipt([]byte(r.expect)); err != nil {
				bad, why = append(bad, r), append(why, err)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, 0, err
		}
	}
	res, err := t.ExecContext(ctx, `UPDATE receipts SET verified = 0, restored = 1, problems = '[]'`)
	if err != nil {
		return nil, 0, err
	}
	n, _ := res.RowsAffected()
	restored = int(n)
	for i, r := range bad {
		var problems []string
		json.Unmarshal([]byte(r.problems), &problems)
		problems = append(problems, why[i].Error())
		pj, _ := json.Marshal(problems)
		if _, err := t.ExecContext(ctx, `UPDATE receipts SET verified = 0, restored = 0, problems = ? WHERE user_id = ? AND id = ?`, string(pj), r.user, r.id); err != nil {
			return nil, 0, err
		}
		restored--
		left = append(left, fmt.Sprintf("the verdict on receipt %s: %v; it is kept as rejected", r.id[:min(len(r.id), 12)], why[i]))
	}
	res, err = t.ExecContext(ctx, `UPDATE turns SET receipt_verified = 0 WHERE receipt_id != '' AND receipt_verified
		AND NOT EXISTS (SELECT 1 FROM conversations c JOIN receipts r ON r.user_id = c.user_id AND r.id = turns.receipt_id
			WHERE c.id = turns.conversation_id)`)
	if err != nil {
		return nil, 0, err
	}
	if n, _ := res.RowsAffected(); n > 0 {
		left = append(left, fmt.Sprintf("the verdict on the receipts of %s: the backup does not hold those receipts, and they read as not verified", plural(int(n), "turn", "turns")))
	}
	return left, restored, t.Commit()
}

// copyRows copies the rows of table from the attached backup into main by
// the column list pact's schema gives (PRAGMA table_info of main, never of
// the file), refusing the file when a row holds a value of a type pact
// never writes there (an INTEGER column's text) or breaks a constraint.
func copyRows(ctx context.Context, t *sql.Tx, file, table string) error {
	rows, err := t.QueryContext(ctx, `SELECT name, upper(type), "notnull", pk FROM main.pragma_table_info(?)`, table)
	if err != nil {
		return err
	}
	var cols, conds []string
	for rows.Next() {
		var name, typ string
		var notNull, pk int
		if err := rows.Scan(&name, &typ, &notNull, &pk); err != nil {
			rows.Close()
			return err
		}
		q := `"` + name + `"`
		cols = append(cols, q)
		var types []string
		switch typ {
		case "INTEGER":
			types = []string{"integer"}
		case "TEXT", "BLOB":
			types = []string{"text", "blob"}
		}
		if types != nil {
			if notNull == 0 && pk == 0 {
				types = append(types, "null")
			}
			conds = append(conds, "typeof("+q+") IN ('"+strings.Join(types, "', '")+"')")
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if len(cols) == 0 {
		return fmt.Errorf("restoring: pact's table %s has no columns", table)
	}
	list := strings.Join(cols, ", ")
	where := "1"
	if len(conds) > 0 {
		where = strings.Join(conds, " AND ")
	}
	var total, bad int64
	if err := t.QueryRowContext(ctx, `SELECT count(*), count(*) FILTER (WHERE NOT (`+where+`)) FROM backup."`+table+`"`).Scan(&total, &bad); err != nil {
		return fmt.Errorf("%s: reading table %s: %w (nothing was changed)", file, table, err)
	}
	if bad > 0 {
		return fmt.Errorf("%s is not a backup pact wrote: %s of table %s %s values of a type pact never writes there; nothing was changed",
			file, plural(int(bad), "row", "rows"), table, map[bool]string{true: "holds", false: "hold"}[bad == 1])
	}
	if _, err := t.ExecContext(ctx, `INSERT INTO main."`+table+`" (`+list+`) SELECT `+list+` FROM backup."`+table+`"`); err != nil {
		return fmt.Errorf("%s is not a backup pact wrote: its table %s breaks pact's rules (%v); nothing was changed", file, table, err)
	}
	return nil
}

// checkRows checks grants and pins again (chk), deleting those that fail,
// and refuses rows that refer to rows the file does not hold (foreign
// keys). It returns what it left out. (Receipts: setAside, once the
// database is at this binary's schema.)
func checkRows(ctx context.Context, t *sql.Tx, chk RestoreChecks) ([]string, error) {
	var left []string
	if chk.Grant != nil {
		type grant struct{ iface, brand, data string }
		var bad []grant
		var why []error
		rows, err := t.QueryContext(ctx, `SELECT interface_url, brand, data FROM main.grants`)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var g grant
			if err := rows.Scan(&g.iface, &g.brand, &g.data); err != nil {
				rows.Close()
				return nil, err
			}
			if err := chk.Grant(g.iface, g.brand, []byte(g.data)); err != nil {
				bad, why = append(bad, g), append(why, err)
			}
		}
		rows.Close()
		for i, g := range bad {
			if _, err := t.ExecContext(ctx, `DELETE FROM main.grants WHERE interface_url = ?`, g.iface); err != nil {
				return nil, err
			}
			left = append(left, fmt.Sprintf("the grant for %s: %v; log in again", clip(g.iface, 120), why[i]))
		}
	}
	if chk.Pin != nil {
		var bad []Pin
		var why []error
		rows, err := t.QueryContext(ctx, `SELECT brand, provider_origin, interface_url, key_thumbprint, pinned_at FROM main.pins`)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var p Pin
			var at string
			if err := rows.Scan(&p.Brand, &p.ProviderOrigin, &p.InterfaceURL, &p.KeyThumbprint, &at); err != nil {
				rows.Close()
				return nil, err
			}
			p.PinnedAt = parseTime(at)
			if err := chk.Pin(p); err != nil {
				bad, why = append(bad, p), append(why, err)
			}
		}
		rows.Close()
		for i, p := range bad {
			if _, err := t.ExecContext(ctx, `DELETE FROM main.pins WHERE brand = ?`, p.Brand); err != nil {
				return nil, err
			}
			left = append(left, fmt.Sprintf("the pin of %s: %v; the Brand's card is accepted again on first contact", clip(p.Brand, 120), why[i]))
		}
	}
	rows, err := t.QueryContext(ctx, `SELECT "table", count(*) FROM main.pragma_foreign_key_check GROUP BY "table"`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var orphans []string
	for rows.Next() {
		var table string
		var n int
		if err := rows.Scan(&table, &n); err != nil {
			return nil, err
		}
		orphans = append(orphans, fmt.Sprintf("%s in %s", plural(n, "row", "rows"), table))
	}
	if len(orphans) > 0 {
		return nil, fmt.Errorf("the backup is not whole: %s refer to rows it does not hold; nothing was changed", strings.Join(orphans, ", "))
	}
	return left, rows.Err()
}

func lookupOpened(path string) (*DB, bool) {
	openMu.Lock()
	defer openMu.Unlock()
	db, ok := opened[path]
	return db, ok
}

// CheckBackupPath refuses a backup file of profile name inside that
// profile's data folder, which a restore replaces and a lost folder takes
// along.
func (d Dirs) CheckBackupPath(name, file string) error {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil
	}
	dir, _ := filepath.Abs(d.ProfileDataDir(name))
	if strings.HasPrefix(abs, dir+string(filepath.Separator)) {
		return fmt.Errorf("%s is inside the profile's data folder %s: keep the backup elsewhere (a lost or deleted data folder takes it along)", file, dir)
	}
	return nil
}
