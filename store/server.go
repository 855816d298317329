package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
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
// They are part of the storage interface: a Backend that can hold a pact
// serve also implements ServerState (ServerBackend), and the conformance
// suite (storetest: the Server… behaviours) checks it. The SQLite store
// implements it on *DB, in the same file as its Users' Stores (schema
// version 13). The SQL is kept portable (ON CONFLICT, RETURNING, integer
// nanoseconds for times).

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

// Errors of ServerState, matched with errors.Is.
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

// ServerState is the state of `pact serve` itself, beside its Users'
// Stores (ForUser, keyed by ServerUser.ID). Every method is safe for
// concurrent use, by several processes sharing the database too.
type ServerState interface {
	// AddServerUser records a User; a name already taken is ErrNameTaken.
	AddServerUser(ctx context.Context, u ServerUser) error
	// ServerUsers lists the Users, oldest first.
	ServerUsers(ctx context.Context) ([]ServerUser, error)
	// ServerUser finds a User by id or name (ErrServerNotFound).
	ServerUser(ctx context.Context, idOrName string) (ServerUser, error)
	// RemoveServerUser deletes a User with their devices, codes, used
	// token ids and counters (ErrServerNotFound when there is none).
	RemoveServerUser(ctx context.Context, id string) error

	// AddEnrolmentCode stores a code's hash.
	AddEnrolmentCode(ctx context.Context, c EnrolmentCode) error
	// Enrol uses the code whose hash is codeHash once, if unexpired at
	// now, and records the device for its User, in one transaction: of
	// enrolments racing with one code, in any number of processes,
	// exactly one wins. A code unknown, expired or used is ErrCodeRefused.
	Enrol(ctx context.Context, codeHash string, now time.Time, d ServerDevice) (ServerUser, ServerDevice, error)

	// Device returns a device by id (ErrServerNotFound).
	Device(ctx context.Context, id string) (ServerDevice, error)
	// Devices lists a User's devices, revoked ones too, oldest first.
	Devices(ctx context.Context, userID string) ([]ServerDevice, error)
	// RevokeDevice revokes a device of User userID; a device of another
	// User is ErrServerNotFound, as one that does not exist, and is left
	// as it was.
	RevokeDevice(ctx context.Context, userID, deviceID string, now time.Time) (ServerDevice, error)
	// Admit records one authenticated request of a device: its token id
	// jti, kept until jtiExpires (seen before: ErrReplay), and its count in
	// the rate-limit window starting at window (returned).
	Admit(ctx context.Context, deviceID, jti string, jtiExpires, window, now time.Time) (int, error)
	// PurgeServer forgets expired token ids, windows before windowsBefore
	// and codes expired for a day.
	PurgeServer(ctx context.Context, now, windowsBefore time.Time) error

	// PutRegistration records or replaces the registration of r.URL.
	PutRegistration(ctx context.Context, r ServerRegistration) error
	// Registrations lists the registrations by URL.
	Registrations(ctx context.Context) ([]ServerRegistration, error)
	// RemoveRegistration deletes one (ErrServerNotFound).
	RemoveRegistration(ctx context.Context, url string) error

	// ServerReady answers quickly whether the database answers with the
	// schema this binary writes (a server's /readyz, every few seconds).
	ServerReady(ctx context.Context) error
}

// ServerBackend is a database that can hold a pact serve: its Users'
// Stores and its own state.
type ServerBackend interface {
	Backend
	ServerState
}

var _ ServerBackend = (*DB)(nil)

// server is the connection of the server's state (the file's, opened and
// migrated on first use).
func (db *DB) server(ctx context.Context) (*sql.DB, error) { return db.conn(ctx) }

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

// AddServerUser records a User. A name already taken is ErrNameTaken.
func (db *DB) AddServerUser(ctx context.Context, u ServerUser) error {
	conn, err := db.server(ctx)
	if err != nil {
		return err
	}
	_, err = conn.ExecContext(ctx, `INSERT INTO server_users (id, name, created_ns) VALUES (?, ?, ?)`, u.ID, u.Name, ns(u.Created))
	if isUnique(err) {
		return ErrNameTaken
	}
	return err
}

// ServerUsers lists the Users, oldest first.
func (db *DB) ServerUsers(ctx context.Context) ([]ServerUser, error) {
	conn, err := db.server(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := conn.QueryContext(ctx, `SELECT id, name, created_ns FROM server_users ORDER BY created_ns, id`)
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

// ServerUser finds a User by id or by name (ErrServerNotFound).
func (db *DB) ServerUser(ctx context.Context, ref string) (ServerUser, error) {
	conn, err := db.server(ctx)
	if err != nil {
		return ServerUser{}, err
	}
	var u ServerUser
	var c int64
	err = conn.QueryRowContext(ctx, `SELECT id, name, created_ns FROM server_users WHERE id = ? OR name = ? ORDER BY id = ? DESC LIMIT 1`,
		ref, ref, ref).Scan(&u.ID, &u.Name, &c)
	if errors.Is(err, sql.ErrNoRows) {
		return u, ErrServerNotFound
	}
	u.Created = fromNS(c)
	return u, err
}

// RemoveServerUser deletes a User with its devices, codes, used token ids and
// counters (ErrServerNotFound when there is none).
func (db *DB) RemoveServerUser(ctx context.Context, id string) error {
	conn, err := db.server(ctx)
	if err != nil {
		return err
	}
	res, err := conn.ExecContext(ctx, `DELETE FROM server_users WHERE id = ?`, id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrServerNotFound
	}
	return nil
}

// AddEnrolmentCode stores a code's hash.
func (db *DB) AddEnrolmentCode(ctx context.Context, c EnrolmentCode) error {
	conn, err := db.server(ctx)
	if err != nil {
		return err
	}
	_, err = conn.ExecContext(ctx, `INSERT INTO server_enrolment_codes (hash, user_id, created_ns, expires_ns, created_by) VALUES (?, ?, ?, ?, ?)`,
		c.Hash, c.UserID, ns(c.Created), ns(c.Expires), c.CreatedBy)
	return err
}

// Enrol uses the code whose hash is codeHash, once, and records the device
// d for its User, in one transaction: the code is marked used only if it
// exists, is unused and expires after now (one conditional UPDATE, so two
// enrolments racing with one code cannot both win). An unknown, expired
// or used code is ErrCodeRefused. d.UserID is set from the code.
func (db *DB) Enrol(ctx context.Context, codeHash string, now time.Time, d ServerDevice) (ServerUser, ServerDevice, error) {
	var u ServerUser
	err := db.tx(ctx, func(t *sql.Tx) error {
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
func (db *DB) Device(ctx context.Context, id string) (ServerDevice, error) {
	conn, err := db.server(ctx)
	if err != nil {
		return ServerDevice{}, err
	}
	d, err := scanDevice(conn.QueryRowContext(ctx, `SELECT `+deviceColumns+` FROM server_devices WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return d, ErrServerNotFound
	}
	return d, err
}

// Devices lists a User's devices (revoked ones too), oldest first.
func (db *DB) Devices(ctx context.Context, userID string) ([]ServerDevice, error) {
	conn, err := db.server(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := conn.QueryContext(ctx, `SELECT `+deviceColumns+` FROM server_devices WHERE user_id = ? ORDER BY created_ns, id`, userID)
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
func (db *DB) RevokeDevice(ctx context.Context, userID, deviceID string, now time.Time) (ServerDevice, error) {
	var d ServerDevice
	err := db.tx(ctx, func(t *sql.Tx) error {
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
func (db *DB) Admit(ctx context.Context, deviceID, jti string, jtiExpires, window, now time.Time) (int, error) {
	var count int
	err := db.tx(ctx, func(t *sql.Tx) error {
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

// PurgeServer deletes the token ids that expired, the rate-limit windows that
// began before windowsBefore, and enrolment codes expired for a day.
func (db *DB) PurgeServer(ctx context.Context, now, windowsBefore time.Time) error {
	return db.tx(ctx, func(t *sql.Tx) error {
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
func (db *DB) PutRegistration(ctx context.Context, r ServerRegistration) error {
	conn, err := db.server(ctx)
	if err != nil {
		return err
	}
	_, err = conn.ExecContext(ctx, `INSERT INTO server_registrations (url, audience, added_ns) VALUES (?, ?, ?)
ON CONFLICT (url) DO UPDATE SET audience = excluded.audience, added_ns = excluded.added_ns`, r.URL, r.Audience, ns(r.Added))
	return err
}

// Registrations lists the registrations by URL.
func (db *DB) Registrations(ctx context.Context) ([]ServerRegistration, error) {
	conn, err := db.server(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := conn.QueryContext(ctx, `SELECT url, audience, added_ns FROM server_registrations ORDER BY url`)
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
func (db *DB) RemoveRegistration(ctx context.Context, url string) error {
	conn, err := db.server(ctx)
	if err != nil {
		return err
	}
	res, err := conn.ExecContext(ctx, `DELETE FROM server_registrations WHERE url = ?`, url)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrServerNotFound
	}
	return nil
}

// ServerReady reads the schema version only: the database answers, and
// with the schema this binary writes.
func (db *DB) ServerReady(ctx context.Context) error {
	conn, err := db.server(ctx)
	if err != nil {
		return err
	}
	var v int
	if err := conn.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("store: %s does not answer: %w", db.path, err)
	}
	if v != SchemaVersion {
		return fmt.Errorf("store: %s has schema version %d, this pact writes %d", db.path, v, SchemaVersion)
	}
	return nil
}
