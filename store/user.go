package store

// userDB is one User's Store in a profile's SQLite file: every query it
// runs carries user. It embeds the file's *DB for its connection and
// transactions.
type userDB struct {
	*DB
	user string
}

var (
	_ Backend = (*DB)(nil)
	_ Store   = (*userDB)(nil)
)

// ForUser returns the Store of User user in this file (a profile's own
// file holds LocalUser). It panics on an empty id.
func (db *DB) ForUser(user string) Store { return db.userDB(user) }

func (db *DB) userDB(user string) *userDB {
	if user == "" {
		panic("store: ForUser needs a User id")
	}
	return &userDB{DB: db, user: user}
}

// User is the id of the User this Store reads and writes.
func (db *userDB) User() string { return db.user }

// Where is the database file.
func (db *DB) Where() string { return db.path }
