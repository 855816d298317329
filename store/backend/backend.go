// Package backend chooses the database that holds a profile's state (the
// storage interface, store.Backend): the profile's own SQLite file by
// default, or a PostgreSQL database named by a postgres:// URL (the
// --database flag, PACT_DATABASE_URL or the config file's "database").
package backend

import (
	"github.com/pact-cli/pact/store"
)

// ForProfile returns the database that holds profile name's state and the
// id of its User there: the profile's SQLite file
// ({data}/profiles/NAME/pact.db, one User, store.LocalUser) when database
// is "". Nothing is opened yet: the first call that needs the database
// opens and migrates it, and returns any error.
func ForProfile(dirs store.Dirs, name, database string) (store.Backend, string) {
	return store.ProfileDB(dirs, name), store.LocalUser
}
