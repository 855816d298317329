// Package postgres is the storage interface (store.Backend) on a
// PostgreSQL database (pgx v5): many Users' state in one database that
// several processes and machines share. It passes the conformance suite
// of store/storetest, as the SQLite store does; store/backend chooses it
// for a postgres:// URL.
//
// Versioned migrations (Migrations, pact_schema_migrations) run under an
// advisory lock, so processes starting at once migrate once; a database
// with a newer schema is refused. Every query of a User's Store carries
// the User's id. PostgreSQL's text cannot hold a NUL character: a NUL in a
// string written (a Brand's text) is kept as U+FFFD, as are bytes that are
// not UTF-8.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pact-cli/pact/store"
)

// IsURL reports whether s names a PostgreSQL database: a postgres:// or
// postgresql:// URL.
func IsURL(s string) bool {
	l := strings.ToLower(s)
	return strings.HasPrefix(l, "postgres://") || strings.HasPrefix(l, "postgresql://")
}

// DB is a PostgreSQL database holding the state of any number of Users.
// It connects, and migrates the schema, on the first call that needs it,
// which returns any error. Safe for concurrent use.
type DB struct {
	url   string
	where string

	once sync.Once
	pool *pgxpool.Pool
	err  error
}

var _ store.Backend = (*DB)(nil)

// New returns the database at rawURL (postgres://USER:PASSWORD@HOST:PORT/DB?sslmode=…,
// any parameter pgx reads), without connecting.
func New(rawURL string) *DB {
	return &DB{url: rawURL, where: Redact(rawURL)}
}

// Open connects to the database at rawURL and migrates it now.
func Open(ctx context.Context, rawURL string) (*DB, error) {
	db := New(rawURL)
	if _, err := db.conn(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// Redact is rawURL without its password (in the user part or a password
// parameter), for messages. A value that is not a URL (a keyword/value
// string such as "host=h password=p", a URL without its scheme such as
// "user:pass@host/db", or one that does not parse) is shown with every
// password=… value and everything between the user's ':' and the last
// '@' hidden.
func Redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme == "" || u.Opaque != "" {
		return redactLoose(rawURL)
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return passwordParam.ReplaceAllString(u.Redacted(), "${1}xxxxx")
}

// passwordParam is a password=… of a keyword/value string or a query.
var passwordParam = regexp.MustCompile(`(?i)(password\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&]*)`)

// redactLoose hides the passwords of a value that may not parse: every
// password=… value, and a user part's password (from the first ':' after
// the scheme to the last '@'), hiding more rather than less.
func redactLoose(s string) string {
	s = passwordParam.ReplaceAllString(s, "${1}xxxxx")
	if at := strings.LastIndexByte(s, '@'); at >= 0 {
		start := 0
		if i := strings.Index(s, "://"); i >= 0 && i < at {
			start = i + len("://")
		}
		if c := strings.IndexByte(s[start:at], ':'); c >= 0 {
			s = s[:start+c+1] + "xxxxx" + s[at:]
		}
	}
	return s
}

// Where names the database for people: its URL without the password.
func (db *DB) Where() string { return db.where }

// conn returns the pool, connecting and migrating on first use.
func (db *DB) conn(ctx context.Context) (*pgxpool.Pool, error) {
	db.once.Do(func() { db.pool, db.err = db.open(ctx) })
	return db.pool, db.err
}

func (db *DB) open(ctx context.Context) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(db.url)
	if err != nil {
		return nil, fmt.Errorf("store: the database URL %s: %v", db.where, oneLine(err))
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: connecting to %s: %v", db.where, oneLine(err))
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, fmt.Errorf("store: %s: %w", db.where, err)
	}
	return pool, nil
}

// Close closes the database's connections (a DB never used has none).
func (db *DB) Close() error {
	db.once.Do(func() { db.err = errors.New("store: database closed") })
	if db.pool != nil {
		db.pool.Close()
	}
	return nil
}

// ForUser returns the Store of User user in this database. It panics on
// an empty id.
func (db *DB) ForUser(user string) store.Store {
	if user == "" {
		panic("postgres: ForUser needs a User id")
	}
	return &userDB{DB: db, user: user}
}

// Check connects as every command does (migrating), and compares the
// schema version with this binary's.
func (db *DB) Check(ctx context.Context) (store.Health, error) {
	h := store.Health{Path: db.where}
	pool, err := db.conn(ctx)
	if err != nil {
		return h, err
	}
	if err := pool.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM pact_schema_migrations`).Scan(&h.SchemaVersion); err != nil {
		return h, db.wrap(err)
	}
	if h.SchemaVersion != SchemaVersion {
		return h, fmt.Errorf("store: %s has schema version %d, this pact writes %d", db.where, h.SchemaVersion, SchemaVersion)
	}
	if err := db.CanWrite(ctx); err != nil {
		h.ReadOnly = err
	}
	return h, nil
}

// CanWrite reports whether a write could be saved now: an error matching
// store.ErrCannotWrite on a database that only reads (a standby, or
// default_transaction_read_only).
func (db *DB) CanWrite(ctx context.Context) error {
	pool, err := db.conn(ctx)
	if err != nil {
		return err
	}
	var ro string
	if err := pool.QueryRow(ctx, `SHOW transaction_read_only`).Scan(&ro); err != nil {
		return db.wrap(err)
	}
	if ro == "on" {
		return fmt.Errorf("%w: %s only reads (a standby, or default_transaction_read_only): point pact at the primary", store.ErrCannotWrite, db.where)
	}
	return nil
}

// migrationLock is the key of the advisory lock migrations run under
// (per database: PostgreSQL's advisory locks are).
const migrationLock = 0x7061637473636865 // "pactsche"

// migrate brings the schema to SchemaVersion, in one transaction under the
// advisory lock, so that processes starting at once migrate once. A
// schema newer than this binary's is refused, not touched.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	var v int
	err := pool.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM pact_schema_migrations`).Scan(&v)
	if err == nil && v == SchemaVersion {
		return nil // the common case: no lock taken
	}
	if err == nil && v > SchemaVersion {
		return newerSchema(v)
	}
	var pe *pgconn.PgError
	if err != nil && !(errors.As(err, &pe) && pe.Code == "42P01") { // undefined_table: a new database
		return oneLineErr(err)
	}
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrationLock)); err != nil {
			return oneLineErr(err)
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS pact_schema_migrations (
			version integer PRIMARY KEY,
			applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
			return fmt.Errorf("creating pact_schema_migrations: %v", oneLine(err))
		}
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM pact_schema_migrations`).Scan(&v); err != nil {
			return oneLineErr(err)
		}
		if v > SchemaVersion {
			return newerSchema(v)
		}
		for ; v < SchemaVersion; v++ {
			if _, err := tx.Exec(ctx, Migrations[v]); err != nil {
				return fmt.Errorf("migrating the schema from version %d to %d: %v", v, v+1, oneLine(err))
			}
			if _, err := tx.Exec(ctx, `INSERT INTO pact_schema_migrations (version) VALUES ($1)`, v+1); err != nil {
				return oneLineErr(err)
			}
		}
		return nil
	})
}

func newerSchema(v int) error { return &store.NewerSchemaError{Version: v, Known: SchemaVersion} }

func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }

func oneLineErr(err error) error { return errors.New(oneLine(err)) }

// wrap names the database in an error.
func (db *DB) wrap(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("store: %s: %v", db.where, oneLine(err))
}

// wrapWrite names the database in the error of a write, which changed
// nothing (its transaction rolled back).
func (db *DB) wrapWrite(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("store: %s: %v (nothing was changed)", db.where, oneLine(err))
}

// clean makes a string PostgreSQL text can hold: NUL and bytes that are
// not UTF-8 become U+FFFD.
func clean(s string) string {
	if strings.IndexByte(s, 0) < 0 && utf8.ValidString(s) {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// cleanArgs cleans every string argument of a query (see clean).
func cleanArgs(args []any) []any {
	for i, a := range args {
		if s, ok := a.(string); ok {
			args[i] = clean(s)
		}
	}
	return args
}
