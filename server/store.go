package server

import (
	"context"
	"time"

	"github.com/pact-cli/pact/store"
)

// Store is the server's own state: Users, devices, one-time enrolment
// codes, used device-token ids, rate-limit counters and Provider
// registrations. Every rule that must hold across processes sharing the
// database (a code used once, a jti used once, a count per minute, a
// revocation seen at once) is decided by the Store, in the database.
//
// store.ServerDB implements it on SQLite. It is the seam where the
// storage interface (store/storetest, SQLite and PostgreSQL) takes over.
type Store interface {
	AddUser(ctx context.Context, u store.ServerUser) error // store.ErrNameTaken
	Users(ctx context.Context) ([]store.ServerUser, error)
	User(ctx context.Context, idOrName string) (store.ServerUser, error) // store.ErrServerNotFound
	RemoveUser(ctx context.Context, id string) error

	AddEnrolmentCode(ctx context.Context, c store.EnrolmentCode) error
	// Enrol uses a code once (store.ErrCodeRefused) and records the device.
	Enrol(ctx context.Context, codeHash string, now time.Time, d store.ServerDevice) (store.ServerUser, store.ServerDevice, error)

	Device(ctx context.Context, id string) (store.ServerDevice, error)
	Devices(ctx context.Context, userID string) ([]store.ServerDevice, error)
	// RevokeDevice: a device of another User is store.ErrServerNotFound.
	RevokeDevice(ctx context.Context, userID, deviceID string, now time.Time) (store.ServerDevice, error)
	// Admit records one authenticated request: its jti (store.ErrReplay
	// when seen before) and its count in the rate-limit window.
	Admit(ctx context.Context, deviceID, jti string, jtiExpires, window, now time.Time) (int, error)
	Purge(ctx context.Context, now, windowsBefore time.Time) error

	PutRegistration(ctx context.Context, r store.ServerRegistration) error
	Registrations(ctx context.Context) ([]store.ServerRegistration, error)
	RemoveRegistration(ctx context.Context, url string) error // store.ErrServerNotFound

	// Ready: the database answers and its schema is current (/readyz).
	Ready(ctx context.Context) error
	Close() error
}

var _ Store = (*store.ServerDB)(nil)

// OpenStore opens the database a --database value names (ParseDatabase),
// creating and migrating it when needed.
func OpenStore(ctx context.Context, database string) (Store, error) {
	d, err := ParseDatabase(database)
	if err != nil {
		return nil, err
	}
	return store.OpenServerDB(ctx, d.Path)
}
