package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pact-cli/pact/store"
)

// The state of pact serve itself (store.ServerState) in the database
// (schema version 2): what must hold across the replicas of a server
// sharing it is decided here, by a unique key, a conditional UPDATE or an
// INSERT … ON CONFLICT, each in one statement or one transaction, never
// in a process's memory. The SQL is the SQLite store's (store/server.go),
// with PostgreSQL's placeholders; times are integer nanoseconds, as there.

var _ store.ServerBackend = (*DB)(nil)

func ns(t time.Time) int64 { return t.UnixNano() }

func fromNS(n int64) time.Time { return time.Unix(0, n).UTC() }

func optTime(n *int64) *time.Time {
	if n == nil {
		return nil
	}
	t := fromNS(*n)
	return &t
}

// isUnique reports a unique_violation.
func isUnique(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

// serverErrors are returned as they are (matched with errors.Is), not
// wrapped into a message.
var serverErrors = []error{store.ErrServerNotFound, store.ErrNameTaken, store.ErrCodeRefused, store.ErrReplay,
	store.ErrLeaseHeld, store.ErrLeaseLost}

func (db *DB) serverErr(err error, write bool) error {
	if err == nil {
		return nil
	}
	for _, e := range serverErrors {
		if errors.Is(err, e) {
			return err
		}
	}
	if write {
		return db.wrapWrite(err)
	}
	return db.wrap(err)
}

// serverTx runs fn in one transaction (READ COMMITTED) and commits it.
func (db *DB) serverTx(ctx context.Context, fn func(pgx.Tx) error) error {
	pool, err := db.conn(ctx)
	if err != nil {
		return err
	}
	return db.serverErr(pgx.BeginFunc(ctx, pool, fn), true)
}

// exec runs one statement; n is the rows it changed.
func (db *DB) serverExec(ctx context.Context, q string, args ...any) (n int64, err error) {
	pool, err := db.conn(ctx)
	if err != nil {
		return 0, err
	}
	tag, err := pool.Exec(ctx, q, cleanArgs(args)...)
	if err != nil {
		return 0, db.serverErr(err, true)
	}
	return tag.RowsAffected(), nil
}

// AddServerUser records a User. A name already taken is ErrNameTaken.
func (db *DB) AddServerUser(ctx context.Context, u store.ServerUser) error {
	pool, err := db.conn(ctx)
	if err != nil {
		return err
	}
	_, err = pool.Exec(ctx, `INSERT INTO server_users (id, name, created_ns) VALUES ($1, $2, $3)`, clean(u.ID), clean(u.Name), ns(u.Created))
	if isUnique(err) {
		return store.ErrNameTaken
	}
	return db.wrapWrite(err)
}

func scanUser(row pgx.Row) (store.ServerUser, error) {
	var u store.ServerUser
	var c int64
	err := row.Scan(&u.ID, &u.Name, &c)
	u.Created = fromNS(c)
	return u, err
}

// ServerUsers lists the Users, oldest first.
func (db *DB) ServerUsers(ctx context.Context) ([]store.ServerUser, error) {
	pool, err := db.conn(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := pool.Query(ctx, `SELECT id, name, created_ns FROM server_users ORDER BY created_ns, id`)
	if err != nil {
		return nil, db.wrap(err)
	}
	out, err := collect(rows, nil, func(r pgx.Rows) (store.ServerUser, error) { return scanUser(r) })
	if out == nil {
		out = []store.ServerUser{}
	}
	return out, db.wrap(err)
}

// ServerUser finds a User by id or by name (ErrServerNotFound).
func (db *DB) ServerUser(ctx context.Context, ref string) (store.ServerUser, error) {
	pool, err := db.conn(ctx)
	if err != nil {
		return store.ServerUser{}, err
	}
	u, err := scanUser(pool.QueryRow(ctx, `SELECT id, name, created_ns FROM server_users WHERE id = $1 OR name = $1
ORDER BY id = $1 DESC LIMIT 1`, clean(ref)))
	if errors.Is(err, pgx.ErrNoRows) {
		return store.ServerUser{}, store.ErrServerNotFound
	}
	return u, db.wrap(err)
}

// RemoveServerUser deletes a User with its devices, codes, used token ids
// and counters (ON DELETE CASCADE; ErrServerNotFound when there is none).
func (db *DB) RemoveServerUser(ctx context.Context, id string) error {
	n, err := db.serverExec(ctx, `DELETE FROM server_users WHERE id = $1`, id)
	if err == nil && n == 0 {
		return store.ErrServerNotFound
	}
	return err
}

// AddEnrolmentCode stores a code's hash.
func (db *DB) AddEnrolmentCode(ctx context.Context, c store.EnrolmentCode) error {
	_, err := db.serverExec(ctx, `INSERT INTO server_enrolment_codes (hash, user_id, created_ns, expires_ns, created_by) VALUES ($1, $2, $3, $4, $5)`,
		c.Hash, c.UserID, ns(c.Created), ns(c.Expires), c.CreatedBy)
	return err
}

// Enrol uses the code whose hash is codeHash once and records the device d
// for its User, in one transaction. The code is taken by one conditional
// UPDATE: of transactions racing for it, the first locks the row and the
// others, once it commits, find it used (READ COMMITTED re-reads the row),
// so exactly one wins. Unknown, expired or used: ErrCodeRefused.
func (db *DB) Enrol(ctx context.Context, codeHash string, now time.Time, d store.ServerDevice) (store.ServerUser, store.ServerDevice, error) {
	var u store.ServerUser
	d.Name, d.JWK = clean(d.Name), clean(d.JWK)
	err := db.serverTx(ctx, func(t pgx.Tx) error {
		err := t.QueryRow(ctx, `UPDATE server_enrolment_codes SET used_ns = $1
WHERE hash = $2 AND used_ns IS NULL AND expires_ns > $1 RETURNING user_id`, ns(now), clean(codeHash)).Scan(&d.UserID)
		if errors.Is(err, pgx.ErrNoRows) {
			return store.ErrCodeRefused
		}
		if err != nil {
			return err
		}
		if u, err = scanUser(t.QueryRow(ctx, `SELECT id, name, created_ns FROM server_users WHERE id = $1`, d.UserID)); err != nil {
			return err
		}
		_, err = t.Exec(ctx, `INSERT INTO server_devices (id, user_id, name, kid, jwk, created_ns) VALUES ($1, $2, $3, $4, $5, $6)`,
			d.ID, d.UserID, d.Name, d.KID, d.JWK, ns(d.Created))
		return err
	})
	return u, d, err
}

const deviceColumns = `id, user_id, name, kid, jwk, created_ns, last_seen_ns, revoked_ns`

func scanDevice(row pgx.Row) (store.ServerDevice, error) {
	var d store.ServerDevice
	var c int64
	var seen, rev *int64
	if err := row.Scan(&d.ID, &d.UserID, &d.Name, &d.KID, &d.JWK, &c, &seen, &rev); err != nil {
		return d, err
	}
	d.Created, d.LastSeen, d.Revoked = fromNS(c), optTime(seen), optTime(rev)
	return d, nil
}

// Device returns the device with this id (ErrServerNotFound).
func (db *DB) Device(ctx context.Context, id string) (store.ServerDevice, error) {
	pool, err := db.conn(ctx)
	if err != nil {
		return store.ServerDevice{}, err
	}
	d, err := scanDevice(pool.QueryRow(ctx, `SELECT `+deviceColumns+` FROM server_devices WHERE id = $1`, clean(id)))
	if errors.Is(err, pgx.ErrNoRows) {
		return store.ServerDevice{}, store.ErrServerNotFound
	}
	return d, db.wrap(err)
}

// Devices lists a User's devices (revoked ones too), oldest first.
func (db *DB) Devices(ctx context.Context, userID string) ([]store.ServerDevice, error) {
	pool, err := db.conn(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := pool.Query(ctx, `SELECT `+deviceColumns+` FROM server_devices WHERE user_id = $1 ORDER BY created_ns, id`, clean(userID))
	if err != nil {
		return nil, db.wrap(err)
	}
	out, err := collect(rows, nil, func(r pgx.Rows) (store.ServerDevice, error) { return scanDevice(r) })
	if out == nil {
		out = []store.ServerDevice{}
	}
	return out, db.wrap(err)
}

// RevokeDevice revokes the device deviceID of the User userID at now and
// returns it (another User's device: ErrServerNotFound, untouched). A
// revoked device keeps its first revocation time. Every replica reads the
// device on every request, so the revocation holds for all at once.
func (db *DB) RevokeDevice(ctx context.Context, userID, deviceID string, now time.Time) (store.ServerDevice, error) {
	var d store.ServerDevice
	err := db.serverTx(ctx, func(t pgx.Tx) error {
		if _, err := t.Exec(ctx, `UPDATE server_devices SET revoked_ns = $1 WHERE id = $2 AND user_id = $3 AND revoked_ns IS NULL`,
			ns(now), clean(deviceID), clean(userID)); err != nil {
			return err
		}
		var err error
		d, err = scanDevice(t.QueryRow(ctx, `SELECT `+deviceColumns+` FROM server_devices WHERE id = $1 AND user_id = $2`, clean(deviceID), clean(userID)))
		if errors.Is(err, pgx.ErrNoRows) {
			return store.ErrServerNotFound
		}
		return err
	})
	return d, err
}

// Admit records one authenticated request of a device in one
// transaction: its jti (seen before: ErrReplay, decided by the primary
// key), its count in the rate-limit window (one upsert, so that replicas
// counting at once lose no request), and last seen (at most once a
// minute).
func (db *DB) Admit(ctx context.Context, deviceID, jti string, jtiExpires, window, now time.Time) (int, error) {
	var count int
	deviceID, jti = clean(deviceID), clean(jti)
	err := db.serverTx(ctx, func(t pgx.Tx) error {
		tag, err := t.Exec(ctx, `INSERT INTO server_device_jtis (device_id, jti, expires_ns) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
			deviceID, jti, ns(jtiExpires))
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return store.ErrReplay
		}
		if err := t.QueryRow(ctx, `INSERT INTO server_rate_counts (device_id, window_ns, count) VALUES ($1, $2, 1)
ON CONFLICT (device_id, window_ns) DO UPDATE SET count = server_rate_counts.count + 1 RETURNING count`,
			deviceID, ns(window)).Scan(&count); err != nil {
			return err
		}
		_, err = t.Exec(ctx, `UPDATE server_devices SET last_seen_ns = $1 WHERE id = $2 AND (last_seen_ns IS NULL OR last_seen_ns < $3)`,
			ns(now), deviceID, ns(now.Add(-time.Minute)))
		return err
	})
	return count, err
}

// PurgeServer deletes the token ids that expired, the rate-limit windows
// that began before windowsBefore, and enrolment codes and leases expired
// (or released) for a day.
func (db *DB) PurgeServer(ctx context.Context, now, windowsBefore time.Time) error {
	day := ns(now.Add(-24 * time.Hour))
	return db.serverTx(ctx, func(t pgx.Tx) error {
		for _, q := range []struct {
			sql string
			arg int64
		}{
			{`DELETE FROM server_device_jtis WHERE expires_ns < $1`, ns(now)},
			{`DELETE FROM server_enrolment_codes WHERE expires_ns < $1`, day},
			{`DELETE FROM server_leases WHERE expires_ns < $1`, day},
			{`DELETE FROM server_rate_counts WHERE window_ns < $1`, ns(windowsBefore)},
		} {
			if _, err := t.Exec(ctx, q.sql, q.arg); err != nil {
				return err
			}
		}
		return nil
	})
}

// PutRegistration records (or replaces) the registration of r.URL.
func (db *DB) PutRegistration(ctx context.Context, r store.ServerRegistration) error {
	_, err := db.serverExec(ctx, `INSERT INTO server_registrations (url, audience, added_ns) VALUES ($1, $2, $3)
ON CONFLICT (url) DO UPDATE SET audience = excluded.audience, added_ns = excluded.added_ns`, r.URL, r.Audience, ns(r.Added))
	return err
}

// Registrations lists the registrations by URL.
func (db *DB) Registrations(ctx context.Context) ([]store.ServerRegistration, error) {
	pool, err := db.conn(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := pool.Query(ctx, `SELECT url, audience, added_ns FROM server_registrations ORDER BY url`)
	if err != nil {
		return nil, db.wrap(err)
	}
	out, err := collect(rows, nil, func(r pgx.Rows) (store.ServerRegistration, error) {
		var g store.ServerRegistration
		var a int64
		err := r.Scan(&g.URL, &g.Audience, &a)
		g.Added = fromNS(a)
		return g, err
	})
	if out == nil {
		out = []store.ServerRegistration{}
	}
	return out, db.wrap(err)
}

// RemoveRegistration deletes the registration of url (ErrServerNotFound).
func (db *DB) RemoveRegistration(ctx context.Context, url string) error {
	n, err := db.serverExec(ctx, `DELETE FROM server_registrations WHERE url = $1`, url)
	if err == nil && n == 0 {
		return store.ErrServerNotFound
	}
	return err
}

// AcquireLease takes the lease name for holder until now+ttl when no one
// holds it or its holder's expired (the token grows by one), in one
// INSERT … ON CONFLICT DO UPDATE … WHERE expired: of acquisitions racing
// for a name, the first locks the row and the others re-read it once it
// commits, find it unexpired and take nothing. Held: ErrLeaseHeld, with
// the lease as held.
func (db *DB) AcquireLease(ctx context.Context, name, holder string, now time.Time, ttl time.Duration) (store.Lease, error) {
	if err := store.CheckLease(name, holder, ttl); err != nil {
		return store.Lease{}, err
	}
	pool, err := db.conn(ctx)
	if err != nil {
		return store.Lease{}, err
	}
	name, holder = clean(name), clean(holder)
	l := store.Lease{Name: name, Holder: holder, Acquired: fromNS(ns(now)), Expires: fromNS(ns(now.Add(ttl)))}
	for try := 0; ; try++ {
		err := pool.QueryRow(ctx, `INSERT INTO server_leases (name, holder, token, acquired_ns, expires_ns) VALUES ($1, $2, 1, $3, $4)
ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, token = server_leases.token + 1,
	acquired_ns = excluded.acquired_ns, expires_ns = excluded.expires_ns
WHERE server_leases.expires_ns <= excluded.acquired_ns
RETURNING token`, name, holder, ns(now), ns(now.Add(ttl))).Scan(&l.Token)
		if err == nil {
			return l, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return store.Lease{}, db.wrapWrite(err)
		}
		held, ok, err := db.LeaseOf(ctx, name)
		if err != nil {
			return store.Lease{}, err
		}
		if ok || try > 0 {
			return held, store.ErrLeaseHeld
		}
		// purged between the two statements: once more
	}
}

// RenewLease extends l until now+ttl while it is still its holder's
// (name, token and holder unchanged; ErrLeaseLost otherwise).
func (db *DB) RenewLease(ctx context.Context, l store.Lease, now time.Time, ttl time.Duration) (store.Lease, error) {
	if err := store.CheckLease(l.Name, l.Holder, ttl); err != nil {
		return l, err
	}
	pool, err := db.conn(ctx)
	if err != nil {
		return l, err
	}
	var acquired int64
	err = pool.QueryRow(ctx, `UPDATE server_leases SET expires_ns = $1 WHERE name = $2 AND token = $3 AND holder = $4 RETURNING acquired_ns`,
		ns(now.Add(ttl)), clean(l.Name), l.Token, clean(l.Holder)).Scan(&acquired)
	if errors.Is(err, pgx.ErrNoRows) {
		return l, store.ErrLeaseLost
	}
	if err != nil {
		return l, db.wrapWrite(err)
	}
	l.Acquired, l.Expires = fromNS(acquired), fromNS(ns(now.Add(ttl)))
	return l, nil
}

// ReleaseLease frees l at once; the row stays (no holder, expired), so
// that the next acquisition's token still grows. ErrLeaseLost when it is
// no longer l's holder's.
func (db *DB) ReleaseLease(ctx context.Context, l store.Lease) error {
	if l.Holder == "" {
		return store.ErrLeaseLost
	}
	n, err := db.serverExec(ctx, `UPDATE server_leases SET holder = '', expires_ns = 0 WHERE name = $1 AND token = $2 AND holder = $3`,
		l.Name, l.Token, l.Holder)
	if err == nil && n == 0 {
		return store.ErrLeaseLost
	}
	return err
}

// LeaseOf returns the lease name as it is (ok false: never taken, or
// purged).
func (db *DB) LeaseOf(ctx context.Context, name string) (store.Lease, bool, error) {
	pool, err := db.conn(ctx)
	if err != nil {
		return store.Lease{}, false, err
	}
	l := store.Lease{Name: clean(name)}
	var acq, exp int64
	err = pool.QueryRow(ctx, `SELECT holder, token, acquired_ns, expires_ns FROM server_leases WHERE name = $1`, l.Name).Scan(&l.Holder, &l.Token, &acq, &exp)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Lease{}, false, nil
	}
	if err != nil {
		return store.Lease{}, false, db.wrap(err)
	}
	l.Acquired, l.Expires = fromNS(acq), fromNS(exp)
	return l, true, nil
}

// SharedValue records proposed under key unless a value is recorded there
// (INSERT … ON CONFLICT DO NOTHING: of processes racing, the first to
// commit wins, the others wait for it and find its row), and returns the
// value recorded.
func (db *DB) SharedValue(ctx context.Context, key, proposed string, now time.Time) (string, error) {
	if _, err := db.serverExec(ctx, `INSERT INTO server_shared (key, value, set_ns) VALUES ($1, $2, $3) ON CONFLICT (key) DO NOTHING`,
		key, proposed, ns(now)); err != nil {
		return "", err
	}
	pool, err := db.conn(ctx)
	if err != nil {
		return "", err
	}
	var v string
	if err := pool.QueryRow(ctx, `SELECT value FROM server_shared WHERE key = $1`, clean(key)).Scan(&v); err != nil {
		return "", db.wrap(err)
	}
	return v, nil
}

// ServerReady reads the schema version only: the database answers, with
// the schema this binary writes.
func (db *DB) ServerReady(ctx context.Context) error {
	pool, err := db.conn(ctx)
	if err != nil {
		return err
	}
	var v int
	if err := pool.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM pact_schema_migrations`).Scan(&v); err != nil {
		return fmt.Errorf("store: %s does not answer: %v", db.where, oneLine(err))
	}
	if v != SchemaVersion {
		return fmt.Errorf("store: %s has schema version %d, this pact writes %d", db.where, v, SchemaVersion)
	}
	return nil
}
