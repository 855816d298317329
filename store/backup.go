package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
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

// InspectBackup opens the file a backup wrote, read-only, and checks it:
// an SQLite database (PRAGMA integrity_check ok) with pact's tables, whose
// schema version is one this binary can migrate (1 to SchemaVersion). It
// returns what the file holds.
func InspectBackup(ctx context.Context, file string) (Contents, error) {
	fi, err := os.Stat(file)
	if err != nil {
		return Contents{}, err
	}
	if !fi.Mode().IsRegular() || fi.Size() == 0 {
		return Contents{}, fmt.Errorf("%s is not a backup pact wrote (empty, or not a file)", file)
	}
	if wi, err := os.Stat(file + "-wal"); err == nil && wi.Size() > 0 {
		return Contents{}, fmt.Errorf("%s has a write-ahead log beside it (%s-wal): it is a live database, not a backup; make one with `pact backup FILE`", file, file)
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return Contents{}, err
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: "mode=ro&immutable=1"}
	c, err := sql.Open("sqlite", u.String())
	if err != nil {
		return Contents{}, err
	}
	defer c.Close()
	if err := pragmaOK(ctx, c, "PRAGMA integrity_check"); err != nil {
		return Contents{}, fmt.Errorf("%s fails its integrity check (%v): it is not a usable backup", file, err)
	}
	var v int
	if err := c.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return Contents{}, fmt.Errorf("%s is not a backup pact wrote: %v", file, err)
	}
	if v > SchemaVersion {
		return Contents{}, fmt.Errorf("%s has schema version %d, newer than this pact knows (%d): upgrade pact", file, v, SchemaVersion)
	}
	if v < 3 { // conversations, receipts and pins are all there from version 3
		return Contents{}, fmt.Errorf("%s is not a backup pact wrote (schema version %d)", file, v)
	}
	n, err := contentsOf(ctx, c)
	if err != nil {
		return n, fmt.Errorf("%s is not a backup pact wrote: %v", file, err)
	}
	return n, nil
}

// Restored is what Restore did.
type Restored struct {
	Contents
	// Aside is where the database it replaced was kept (with "-wal" beside
	// it when it had one); "" when there was none.
	Aside string `json:"aside,omitempty"`
}

// Restore replaces the database of profile name with the backup file
// (InspectBackup checks it first; nothing changes when it fails). The
// current pact.db and its pact.db-wal, if any, are kept aside as
// pact.db.before-restore-TIME (and -wal), whatever their state (a refused,
// emptied or damaged database is what one restores over). The backup is
// copied beside pact.db, fsynced, renamed into place and migrated to this
// binary's schema. A database another process has open is refused
// (ErrInUse, on unix: its -shm lock), and nothing changes.
func Restore(ctx context.Context, d Dirs, name, file string) (Restored, error) {
	n, err := InspectBackup(ctx, file)
	if err != nil {
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
	if pid := inUseBy(path); pid != 0 {
		return Restored{}, fmt.Errorf("%s is open in another pact process (pid %d): %w; end it (a chat, `pact mcp`, a send) and restore again (nothing was changed)", path, pid, ErrInUse)
	}
	tmp := path + ".restore-tmp"
	if err := copyFile(file, tmp); err != nil {
		os.Remove(tmp)
		return Restored{}, fmt.Errorf("copying %s: %w (nothing was changed)", file, err)
	}
	res := Restored{Contents: n}
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
	c, err := db.conn(ctx) // migrates the backup to this binary's schema
	if err != nil {
		return res, err
	}
	if res.Contents, err = contentsOf(ctx, c); err != nil {
		return res, err
	}
	db.marked.Do(func() {})
	writeMarker(path)
	return res, nil
}

func lookupOpened(path string) (*DB, bool) {
	openMu.Lock()
	defer openMu.Unlock()
	db, ok := opened[path]
	return db, ok
}

// copyFile copies src to dst (created 0600, fsynced).
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// writeMarker writes the HistoryMarker beside the database at path.
func writeMarker(path string) {
	marker := filepath.Join(filepath.Dir(path), HistoryMarker)
	if _, err := os.Stat(marker); errors.Is(err, fs.ErrNotExist) {
		os.WriteFile(marker, []byte("this profile's history is in pact.db (with pact.db-wal and pact.db-shm)\n"), 0o600)
	}
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
