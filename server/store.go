package server

import (
	"context"

	"github.com/pact-cli/pact/store"
	"github.com/pact-cli/pact/store/postgres"
)

// The server's database is a store.ServerBackend (the storage interface):
// its Users' Stores (ForUser, by User id) and the server's own state
// (store.ServerState: Users, devices, one-time enrolment codes, used
// device-token ids, rate-limit counters, Provider registrations). Every rule
// that must hold across processes sharing the database (a code used once,
// a jti used once, a count per minute, a revocation seen at once, a
// lease held by one replica) is decided there, in the database.

// OpenStore opens the database a --database value names (ParseDatabase),
// creating and migrating it when needed: a SQLite file (one process), or
// a PostgreSQL database, which several replicas of the server share.
func OpenStore(ctx context.Context, database string) (store.ServerBackend, error) {
	d, err := ParseDatabase(database)
	if err != nil {
		return nil, err
	}
	if d.Kind == "postgres" {
		return postgres.Open(ctx, d.URL)
	}
	return store.Open(ctx, d.Path)
}
