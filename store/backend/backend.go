// Package backend chooses the database that holds a profile's state (the
// storage interface, store.Backend): the profile's own SQLite file by
// default, or a PostgreSQL database named by a postgres:// URL (the
// --database flag, PACT_DATABASE_URL or the config file's "database").
//
// Choose PostgreSQL when one machine is not enough: several machines, or
// a personal agent serving many Users, sharing one database.
package backend

import (
	"fmt"
	"sync"

	"github.com/pact-cli/pact/store"
	"github.com/pact-cli/pact/store/postgres"
)

// IsPostgres reports whether database names a PostgreSQL database.
func IsPostgres(database string) bool { return postgres.IsURL(database) }

// Check refuses a database setting that names neither backend: "" (the
// profile's SQLite file) or a postgres:// URL.
func Check(database string) error {
	if database == "" || IsPostgres(database) {
		return nil
	}
	return fmt.Errorf("%q is not a PostgreSQL URL: give postgres://USER@HOST:PORT/DATABASE, or nothing for the profile's own SQLite file", postgres.Redact(database))
}

// ProfileUser is the id of profile name's User in a PostgreSQL database
// that several profiles, machines or Users may share: "profile:NAME". (A
// profile's own SQLite file holds one User, store.LocalUser.)
func ProfileUser(name string) string { return "profile:" + name }

var (
	mu     sync.Mutex
	shared = map[string]*postgres.DB{}
)

// ForProfile returns the database that holds profile name's state and the
// id of its User there: the profile's SQLite file
// ({data}/profiles/NAME/pact.db, User store.LocalUser) when database is
// "", else the PostgreSQL database it names (User ProfileUser(name); one
// pool a process for each URL). Nothing is opened yet: the first call that
// needs the database connects and migrates it, and returns any error
// (Check refuses a setting that is neither).
func ForProfile(dirs store.Dirs, name, database string) (store.Backend, string) {
	if database == "" {
		return store.ProfileDB(dirs, name), store.LocalUser
	}
	mu.Lock()
	defer mu.Unlock()
	db, ok := shared[database]
	if !ok {
		db = postgres.New(database)
		shared[database] = db
	}
	return closer{db, database}, ProfileUser(name)
}

// closer forgets the shared pool when it is closed, so that the next
// ForProfile opens it again.
type closer struct {
	*postgres.DB
	url string
}

func (c closer) Close() error {
	mu.Lock()
	if shared[c.url] == c.DB {
		delete(shared, c.url)
	}
	mu.Unlock()
	return c.DB.Close()
}
