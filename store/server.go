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
// versions 13 and 14); store/postgres in its database. The SQL is kept portable (ON CONFLICT, RETURNING, integer
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
	// ErrLeaseHeld: the lease is held by another holder and has not
	// expired.
	ErrLeaseHeld = errors.New("lease held by another holder")
	// ErrLeaseLost: the lease named is no longer this holder's: released,
	// or acquired by another since it expired.
	ErrLeaseLost = errors.New("lease lost")
)

// Lease is one named lease as acquired: a lock in the database that
// expires on its own, so that what a process holds is free again when the
// process dies (a turn in flight, a login being polled), and that any
// process sharing the database can take over.
//
// Name is free text chosen by the caller ("turn/USER/MESSAGE_ID"); Holder
// names who holds it and must be unique to the acquisition (a replica's
// id and a random suffix), so that an old holder can never act on a later
// acquisition. Token is the fencing token: it grows by one at every
// acquisition of the name, so that writes made under the lease can be
// checked against the holder of the moment. Expires is when it is free for
// another holder unless renewed.
type Lease struct {
	Name     string    `json:"name"`
	Holder   string    `json:"holder"`
	Token    int64     `json:"token"`
	Acquired time.Time `json:"acquired"`
	Expires  time.Time `json:"expires"`
}

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
	// PurgeServer forgets expired token ids, windows before windowsBefore,
	// and codes and leases expired (or released) for a day.
	PurgeServer(ctx context.Context, now, windowsBefore time.Time) error

	// PutRegistration records or replaces the registration of r.URL.
	PutRegistration(ctx context.Context, r ServerRegistration) error
	// Registrations lists the registrations by URL.
	Registrations(ctx context.Context) ([]ServerRegistration, error)
	// RemoveRegistration deletes one (ErrServerNotFound).
	RemoveRegistration(ctx context.Context, url string) error

	// AcquireLease takes the lease name for holder until now+ttl, if no
	// one holds it or its last holder's expired at or before now (then it
	// is taken over: the token grows by one). Held by anyone, this holder
	// too, and unexpired: ErrLeaseHeld, with the lease as held returned.
	// Of acquisitions racing for one name, in any number of processes,
	// exactly one wins. holder must not be empty, ttl must be positive.
	AcquireLease(ctx context.Context, name, holder string, now time.Time, ttl time.Duration) (Lease, error)
	// RenewLease extends l until now+ttl while it is still l's holder's
	// (same name, token and holder): even past its expiry if no one took
	// it in between, since no other holder can have acted. Released, or
	// taken by another: ErrLeaseLost.
	RenewLease(ctx context.Context, l Lease, now time.Time, ttl time.Duration) (Lease, error)
	// ReleaseLease frees l at once for the next holder; a lease no longer
	// l's holder's is ErrLeaseLost and is left as it is.
	ReleaseLease(ctx context.Context, l Lease) error
	// LeaseOf returns the lease name as it is (ok is false when it was
	// never taken, or was purged); a released lease has no Holder.
	LeaseOf(ctx context.Context, name string) (l Lease, ok bool, err error)

	// SharedValue is the value every process sharing the database agrees
	// on under key: proposed when none is recorded (it is recorded, now),
	// else the one recorded first. Replicas check with it that they share
	// what they must (the issuer, the pairwise-sub secret, the data key).
	SharedValue(ctx context.Context, key, proposed string, now time.Time) (string, error)

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
// began before windowsBefore, and enrolment codes and leases expired (or
// released) for a day.
func (db *DB) PurgeServer(ctx context.Context, now, windowsBefore time.Time) error {
	return db.tx(ctx, func(t *sql.Tx) error {
		if _, err := t.ExecContext(ctx, `DELETE FROM server_device_jtis WHERE expires_ns < ?`, ns(now)); err != nil {
			return err
		}
		if _, err := t.ExecContext(ctx, `DELETE FROM server_enrolment_codes WHERE expires_ns < ?`, ns(now.Add(-24*time.Hour))); err != nil {
			return err
		}
		if _, err := t.ExecContext(ctx, `DELETE FROM server_leases WHERE expires_ns < ?`, ns(now.Add(-24*time.Hour))); err != nil {
			return err
		}
		_, err := t.ExecContext(ctx, `DELETE FROM server_rate_counts WHERE window_ns < ?`, ns(windowsBefore))
		return err
	})
}

// The leases' SQL (store/postgres has the same with $1…): an acquisition
// is one INSERT … ON CONFLICT DO UPDATE whose WHERE takes the row over
// only when it has expired, so of acquisitions racing for a name exactly
// one returns a row; a release keeps the row (no holder, expired) so that
// the next token still grows.
const (
	leaseAcquireSQL = `INSERT INTO server_leases (name, holder, token, acquired_ns, expires_ns) VALUES (?, ?, 1, ?, ?)
ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, token = server_leases.token + 1,
	acquired_ns = excluded.acquired_ns, expires_ns = excluded.expires_ns
WHERE server_leases.expires_ns <= excluded.acquired_ns
RETURNING token`
	leaseRenewSQL   = `UPDATE server_leases SET expires_ns = ? WHERE name = ? AND token = ? AND holder = ? RETURNING acquired_ns`
	leaseReleaseSQL = `UPDATE server_leases SET holder = '', expires_ns = 0 WHERE name = ? AND token = ? AND holder = ?`
	leaseGetSQL     = `SELECT holder, token, acquired_ns, expires_ns FROM server_leases WHERE name = ?`
)

// CheckLease refuses what no lease may be: an empty name or holder, a
// ttl that is not positive.
func CheckLease(name, holder string, ttl time.Duration) error {
	switch {
	case name == "":
		return errors.New("store: a lease needs a name")
	case holder == "":
		return errors.New("store: a lease needs a holder")
	case ttl <= 0:
		return fmt.Errorf("store: a lease's time to live must be positive, not %s", ttl)
	}
	return nil
}

// AcquireLease takes the lease name for holder until now+ttl when it is
// free or expired (ErrLeaseHeld, with the lease as held, otherwise).
func (db *DB) AcquireLease(ctx context.Context, name, holder string, now time.Time, ttl time.Duration) (Lease, error) {
	if err := CheckLease(name, holder, ttl); err != nil {
		return Lease{}, err
	}
	conn, err := db.server(ctx)
	if err != nil {
		return Lease{}, err
	}
	l := Lease{Name: name, Holder: holder, Acquired: fromNS(ns(now)), Expires: fromNS(ns(now.Add(ttl)))}
	for try := 0; ; try++ {
		err = conn.QueryRowContext(ctx, leaseAcquireSQL, name, holder, ns(now), ns(now.Add(ttl))).Scan(&l.Token)
		if err == nil {
			return l, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return Lease{}, db.wrap(err)
		}
		held, ok, err := db.LeaseOf(ctx, name)
		if err != nil {
			return Lease{}, err
		}
		if ok || try > 0 {
			return held, ErrLeaseHeld
		}
		// purged between the two statements: once more
	}
}

// RenewLease extends l until now+ttl while it is still its holder's
// (ErrLeaseLost otherwise).
func (db *DB) RenewLease(ctx context.Context, l Lease, now time.Time, ttl time.Duration) (Lease, error) {
	if err := CheckLease(l.Name, l.Holder, ttl); err != nil {
		return l, err
	}
	conn, err := db.server(ctx)
	if err != nil {
		return l, err
	}
	var acquired int64
	err = conn.QueryRowContext(ctx, leaseRenewSQL, ns(now.Add(ttl)), l.Name, l.Token, l.Holder).Scan(&acquired)
	if errors.Is(err, sql.ErrNoRows) {
		return l, ErrLeaseLost
	}
	if err != nil {
		return l, db.wrap(err)
	}
	l.Acquired, l.Expires = fromNS(acquired), fromNS(ns(now.Add(ttl)))
	return l, nil
}

// ReleaseLease frees l at once (ErrLeaseLost when it is no longer its
// holder's).
func (db *DB) ReleaseLease(ctx context.Context, l Lease) error {
	if l.Holder == "" {
		return ErrLeaseLost
	}
	conn, err := db.server(ctx)
	if err != nil {
		return err
	}
	res, err := conn.ExecContext(ctx, leaseReleaseSQL, l.Name, l.Token, l.Holder)
	if err != nil {
		return db.wrap(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrLeaseLost
	}
	return nil
}

// LeaseOf returns the lease name as it is (ok false: never taken, or
// purged).
func (db *DB) LeaseOf(ctx context.Context, name string) (Lease, bool, error) {
	conn, err := db.server(ctx)
	if err != nil {
		return Lease{}, false, err
	}
	l := Lease{Name: name}
	var acq, exp int64
	err = conn.QueryRowContext(ctx, leaseGetSQL, name).Scan(&l.Holder, &l.Token, &acq, &exp)
	if errors.Is(err, sql.ErrNoRows) {
		return Lease{}, false, nil
	}
	if err != nil {
		return Lease{}, false, db.wrap(err)
	}
	l.Acquired, l.Expires = fromNS(acq), fromNS(exp)
	return l, true, nil
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

// SharedValue records proposed under key unless a value is recorded there
// (INSERT … ON CONFLICT DO NOTHING), and returns the value recorded.
func (db *DB) SharedValue(ctx context.Context, key, proposed string, now time.Time) (string, error) {
	conn, err := db.server(ctx)
	if err != nil {
		return "", err
	}
	if _, err := conn.ExecContext(ctx, `INSERT INTO server_shared (key, value, set_ns) VALUES (?, ?, ?) ON CONFLICT (key) DO NOTHING`,
		key, proposed, ns(now)); err != nil {
		return "", db.wrap(err)
	}
	var v string
	if err := conn.QueryRowContext(ctx, `SELECT value FROM server_shared WHERE key = ?`, key).Scan(&v); err != nil {
		return "", db.wrap(err)
	}
	return v, nil
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
