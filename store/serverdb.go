package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The server's own tables (`pact serve`): its Users, their devices, the
// one-time enrolment codes, the device-token ids already used, the
// per-device request counters of the rate limit, and the server's Provider
// registrations. Every rule that must hold for one server (a code used
// once, a jti used once, a count per minute) is decided here, in the
// database, by a unique key or a conditional update, never in a process's
// memory, so that it holds across processes sharing the database.
//
// ServerDB is the SQLite implementation (its own file, WAL, foreign keys,
// busy timeout, versioned migrations: ServerMigrations). The SQL is kept
// portable (ON CONFLICT, RETURNING, integer nanoseconds for times) for the
// PostgreSQL backend of the storage interface.

// ServerUser is one User of a server.
type ServerUser struct {
	ID      string    `json:"id"`
	Name    string    `json:"name"`
	Created time.Time `json:"created"`
}

// ServerDevice is one device enrolled for a User. JWK is its public key
// (JSON); KID its RFC 7638 thumbprint. LastSeen is when it last made an
// authenticated call (to the minute); Revoked when it was revoked.
type ServerDevice struct {
	ID       string
	UserID   string
	Name     string
	KID      string
	JWK      string
	Created  time.Time
	LastSeen *time.Time
	Revoked  *time.Time
}

// EnrolmentCode is a one-time enrolment code as stored: only its SHA-256
// (hex), the User it enrols a device for, when it expires, and who made it
// ("operator", or the device id that ran `pact devices add`).
type EnrolmentCode struct {
	Hash      string
	UserID    string
	Created   time.Time
	Expires   time.Time
	CreatedBy string
}

// ServerRegistration is one Provider registration of the server (PACT
// §3.1): the Provider's URL (normalised) and the audience it assigned.
type ServerRegistration struct {
	URL      string    `json:"url"`
	Audience string    `json:"audience"`
	Added    time.Time `json:"added"`
}

// Errors of ServerDB, matched with errors.Is.
var (
	// ErrServerNotFound: no such User, device or registration.
	ErrServerNotFound = errors.New("not found")
	// ErrNameTaken: a User with that name exists.
	ErrNameTaken = errors.New("the name is taken")
	// ErrCodeRefused: the enrolment code is unknown, expired or used.
	ErrCodeRefused = errors.New("enrolment code refused")
	// ErrReplay: the device-token id was used before.
	ErrReplay = errors.New("device token used before")
)

// ServerMigrations are the server database's schema versions, as
// Migrations are a profile's.
var ServerMigrations = []string{
	// 1: Users, devices, enrolment codes, used device-token ids, rate-limit
	// counters, Provider registrations.
	`CREATE TABLE server_users (
	id TEXT PRIMARY KEY,
	name TEXT NOT NULL UNIQUE,
	created_ns BIGINT NOT NULL
);
CREATE TABLE server_devices (
	id TEXT PRIMARY KEY,
	user_id TEXT NOT NULL REFERENCES server_users (id) ON DELETE CASCADE,
	name TEXT NOT NULL,
	kid TEXT NOT NULL,
	jwk TEXT NOT NULL,
	created_ns BIGINT NOT NULL,
	last_seen_ns BIGINT,
	revoked_ns BIGINT
);
CREATE INDEX server_devices_by_user ON server_devices (user_id, created_ns);
CREATE TABLE server_enrolment_codes (
	hash TEXT PRIMARY KEY,
	user_id TEXT NOT NULL REFERENCES server_users (id) ON DELETE CASCADE,
	created_ns BIGINT NOT NULL,
	expires_ns BIGINT NOT NULL,
	used_ns BIGINT,
	created_by TEXT NOT NULL
);
CREATE TABLE server_device_jtis (
	device_id TEXT NOT NULL REFERENCES server_devices (id) ON DELETE CASCADE,
	jti TEXT NOT NULL,
	expires_ns BIGINT NOT NULL,
	PRIMARY KEY (device_id, jti)
);
CREATE INDEX server_device_jtis_by_expiry ON server_device_jtis (expires_ns);
CREATE TABLE server_rate_counts (
	device_id TEXT NOT NULL REFERENCES server_devices (id) ON DELETE CASCADE,
	window_ns BIGINT NOT NULL,
	count INTEGER NOT NULL,
	PRIMARY KEY (device_id, window_ns)
);
CREATE TABLE server_registrations (
	url TEXT PRIMARY KEY,
	audience TEXT NOT NULL,
	added_ns BIGINT NOT NULL
);`,
}

// ServerDB is the server's database on SQLite. Safe for concurrent use.
type ServerDB struct {
	path string
	db   *sql.DB
}

// OpenServerDB opens (creating it, mode 0600, when absent) the server
// database at path and migrates it to the current schema.
func OpenServerDB(ctx context.Context, path string) (*ServerDB, error) {
	if strings.ContainsRune(path, '?') {
		return nil, fmt.Errorf("store: the database path %s contains '?'", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("store: creating %s: %w", filepath.Dir(path), err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: opening %s: %w", path, err)
	}
	f.Close()
	c, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		return nil, fmt.Errorf("store: opening %s: %w", path, err)
	}
	s := &ServerDB{path: path, db: c}
	if err := s.migrate(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("store: %s: %w", path, err)
	}
	return s, nil
}

// Path is the database file.
func (s *ServerDB) Path() string { return s.path }

// Close closes the database.
func (s *ServerDB) Close() error { return s.db.Close() }

// migrate applies ServerMigrations in one transaction per step (BEGIN
// IMMEDIATE: two processes opening a new database apply each step once).
// A database newer than this binary is refused, not touched.
func (s *ServerDB) migrate(ctx context.Context) error {
	for {
		var v int
		if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
			return fmt.Errorf("reading the schema version: %w", err)
		}
		if v > len(ServerMigrations) {
			return fmt.Errorf("the database has schema version %d, newer than this pact knows (%d): upgrade pact", v, len(ServerMigrations))
		}
		if v == len(ServerMigrations) {
			return nil
		}
		err := s.tx(ctx, func(t *sql.Tx) error {
			var now int
			if err := t.QueryRowContext(ctx, "PRAGMA user_version").Scan(&now); err != nil || now != v {
				return err
			}
			if _, err := t.ExecContext(ctx, ServerMigrations[v]); err != nil {
				return fmt.Errorf("migrating the schema from version %d to %d: %w", v, v+1, err)
			}
			_, err := t.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v+1))
			return err
		})
		if err != nil {
			return err
		}
	}
}

// Ready reports whether the database answers and its schema is the one
// this binary writes (for /readyz).
func (s *ServerDB) Ready(ctx context.Context) error {
	var v int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("the database does not answer: %w", err)
	}
	if v != len(ServerMigrations) {
		return fmt.Errorf("the database has schema version %d, not %d", v, len(ServerMigrations))
	}
	return nil
}

func (s *ServerDB) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	t, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(t); err != nil {
		t.Rollback()
		return err
	}
	return t.Commit()
}

func ns(t time.Time) int64 { return t.UnixNano() }

func fromNS(n int64) time.Time { return time.Unix(0, n).UTC() }

func optTime(n sql.NullInt64) *time.Time {
	if !n.Valid {
		return nil
	}
	t := fromNS(n.Int64)
	return &t
}

func isUnique(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "UNIQUE constraint") || strings.Contains(err.Error(), "PRIMARY KEY"))
}

// AddUser records a User. A name already taken is ErrNameTaken.
func (s *ServerDB) AddUser(ctx context.Context, u ServerUser) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO server_users (id, name, created_ns) VALUES (?, ?, ?)`, u.ID, u.Name, ns(u.Created))
	if isUnique(err) {
		return ErrNameTaken
	}
	return err
}

// Users lists the Users, oldest first.
func (s *ServerDB) Users(ctx context.Context) ([]ServerUser, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, name, created_ns FROM server_users ORDER BY created_ns, id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []ServerUser{}
	for rows.Next() {
		var u ServerUser
		var c int64
		if err := rows.Scan(&u.ID, &u.Name, &c); err != nil {
			return nil, err
		}
		u.Created = fromNS(c)
		out = append(out, u)
	}
	return out, rows.Err()
}

// User finds a User by id or by name (ErrServerNotFound).
func (s *ServerDB) User(ctx context.Context, ref string) (ServerUser, error) {
	var u ServerUser
	var c int64
	err := s.db.QueryRowContext(ctx, `SELECT id, name, created_ns FROM server_users WHERE id = ? OR name = ? ORDER BY id = ? DESC LIMIT 1`,
		ref, ref, ref).Scan(&u.ID, &u.Name, &c)
	if errors.Is(err, sql.ErrNoRows) {
		return u, ErrServerNotFound
	}
	u.Created = fromNS(c)
	return u, err
}

// RemoveUser deletes a User with its devices, codes, used token ids and
// counters (ErrServerNotFound when there is none).
func (s *ServerDB) RemoveUser(ctx context.Context, id string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM server_users WHERE id = ?`, id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrServerNotFound
	}
	return nil
}

// AddEnrolmentCode stores a code's hash.
func (s *ServerDB) AddEnrolmentCode(ctx context.Context, c EnrolmentCode) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO server_enrolment_codes (hash, user_id, created_ns, expires_ns, created_by) VALUES (?, ?, ?, ?, ?)`,
		c.Hash, c.UserID, ns(c.Created), ns(c.Expires), c.CreatedBy)
	return err
}

// Enrol uses the code whose hash is codeHash, once, and records the device
// d for its User, in one transaction: the code is marked used only if it
// exists, is unused and expires after now (one conditional UPDATE, so two
// enrolments racing with one code cannot both win). An unknown, expired
// or used code is ErrCodeRefused. d.UserID is set from the code.
func (s *ServerDB) Enrol(ctx context.Context, codeHash string, now time.Time, d ServerDevice) (ServerUser, ServerDevice, error) {
	var u ServerUser
	err := s.tx(ctx, func(t *sql.Tx) error {
		err := t.QueryRowContext(ctx, `UPDATE server_enrolment_codes SET used_ns = ?
WHERE hash = ? AND used_ns IS NULL AND expires_ns > ? RETURNING user_id`, ns(now), codeHash, ns(now)).Scan(&d.UserID)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrCodeRefused
		}
		if err != nil {
			return err
		}
		var c int64
		if err := t.QueryRowContext(ctx, `SELECT id, name, created_ns FROM server_users WHERE id = ?`, d.UserID).Scan(&u.ID, &u.Name, &c); err != nil {
			return err
		}
		u.Created = fromNS(c)
		_, err = t.ExecContext(ctx, `INSERT INTO server_devices (id, user_id, name, kid, jwk, created_ns) VALUES (?, ?, ?, ?, ?, ?)`,
			d.ID, d.UserID, d.Name, d.KID, d.JWK, ns(d.Created))
		return err
	})
	return u, d, err
}

const deviceColumns = `id, user_id, name, kid, jwk, created_ns, last_seen_ns, revoked_ns`

func scanDevice(sc interface{ Scan(...any) error }) (ServerDevice, error) {
	var d ServerDevice
	var c int64
	var seen, rev sql.NullInt64
	if err := sc.Scan(&d.ID, &d.UserID, &d.Name, &d.KID, &d.JWK, &c, &seen, &rev); err != nil {
		return d, err
	}
	d.Created, d.LastSeen, d.Revoked = fromNS(c), optTime(seen), optTime(rev)
	return d, nil
}

// Device returns the device with this id (ErrServerNotFound).
func (s *ServerDB) Device(ctx context.Context, id string) (ServerDevice, error) {
	d, err := scanDevice(s.db.QueryRowContext(ctx, `SELECT `+deviceColumns+` FROM server_devices WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return d, ErrServerNotFound
	}
	return d, err
}

// Devices lists a User's devices (revoked ones too), oldest first.
func (s *ServerDB) Devices(ctx context.Context, userID string) ([]ServerDevice, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+deviceColumns+` FROM server_devices WHERE user_id = ? ORDER BY created_ns, id`, userID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []ServerDevice{}
	for rows.Next() {
		d, err := scanDevice(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// RevokeDevice revokes the device deviceID of the User userID at now and
// returns it. A device of another User is ErrServerNotFound, exactly as
// one that does not exist. Revoking a revoked device keeps its first
// revocation time.
func (s *ServerDB) RevokeDevice(ctx context.Context, userID, deviceID string, now time.Time) (ServerDevice, error) {
	var d ServerDevice
	err := s.tx(ctx, func(t *sql.Tx) error {
		if _, err := t.ExecContext(ctx, `UPDATE server_devices SET revoked_ns = ? WHERE id = ? AND user_id = ? AND revoked_ns IS NULL`,
			ns(now), deviceID, userID); err != nil {
			return err
		}
		var err error
		d, err = scanDevice(t.QueryRowContext(ctx, `SELECT `+deviceColumns+` FROM server_devices WHERE id = ? AND user_id = ?`, deviceID, userID))
		if errors.Is(err, sql.ErrNoRows) {
			return ErrServerNotFound
		}
		return err
	})
	return d, err
}

// Admit records one authenticated request of a device, in one
// transaction: the token id jti, kept until jtiExpires (a jti seen before
// is ErrReplay, decided by the table's primary key); the request counted
// in the device's rate-limit window starting at window (the count after
// this request is returned); last seen = now, written at most once a
// minute.
func (s *ServerDB) Admit(ctx context.Context, deviceID, jti string, jtiExpires, window, now time.Time) (int, error) {
	var count int
	err := s.tx(ctx, func(t *sql.Tx) error {
		if _, err := t.ExecContext(ctx, `INSERT INTO server_device_jtis (device_id, jti, expires_ns) VALUES (?, ?, ?)`,
			deviceID, jti, ns(jtiExpires)); err != nil {
			if isUnique(err) {
				return ErrReplay
			}
			return err
		}
		if err := t.QueryRowContext(ctx, `INSERT INTO server_rate_counts (device_id, window_ns, count) VALUES (?, ?, 1)
ON CONFLICT (device_id, window_ns) DO UPDATE SET count = server_rate_counts.count + 1 RETURNING count`,
			deviceID, ns(window)).Scan(&count); err != nil {
			return err
		}
		_, err := t.ExecContext(ctx, `UPDATE server_devices SET last_seen_ns = ? WHERE id = ? AND (last_seen_ns IS NULL OR last_seen_ns < ?)`,
			ns(now), deviceID, ns(now.Add(-time.Minute)))
		return err
	})
	return count, err
}

// Purge deletes the token ids that expired, the rate-limit windows that
// began before windowsBefore, and enrolment codes expired for a day.
func (s *ServerDB) Purge(ctx context.Context, now, windowsBefore time.Time) error {
	return s.tx(ctx, func(t *sql.Tx) error {
		if _, err := t.ExecContext(ctx, `DELETE FROM server_device_jtis WHERE expires_ns < ?`, ns(now)); err != nil {
			return err
		}
		if _, err := t.ExecContext(ctx, `DELETE FROM server_enrolment_codes WHERE expires_ns < ?`, ns(now.Add(-24*time.Hour))); err != nil {
			return err
		}
		_, err := t.ExecContext(ctx, `DELETE FROM server_rate_counts WHERE window_ns < ?`, ns(windowsBefore))
		return err
	})
}

// PutRegistration records (or replaces) the registration of r.URL.
func (s *ServerDB) PutRegistration(ctx context.Context, r ServerRegistration) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO server_registrations (url, audience, added_ns) VALUES (?, ?, ?)
ON CONFLICT (url) DO UPDATE SET audience = excluded.audience, added_ns = excluded.added_ns`, r.URL, r.Audience, ns(r.Added))
	return err
}

// Registrations lists the registrations by URL.
func (s *ServerDB) Registrations(ctx context.Context) ([]ServerRegistration, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT url, audience, added_ns FROM server_registrations ORDER BY url`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []ServerRegistration{}
	for rows.Next() {
		var r ServerRegistration
		var a int64
		if err := rows.Scan(&r.URL, &r.Audience, &a); err != nil {
			return nil, err
		}
		r.Added = fromNS(a)
		out = append(out, r)
	}
	return out, rows.Err()
}

// RemoveRegistration deletes the registration of url (ErrServerNotFound).
func (s *ServerDB) RemoveRegistration(ctx context.Context, url string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM server_registrations WHERE url = ?`, url)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrServerNotFound
	}
	return nil
}
