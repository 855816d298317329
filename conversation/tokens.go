package conversation

import (
	"path/filepath"

	"github.com/pact-cli/pact/delegation"
	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/seal"
	"github.com/pact-cli/pact/store"
)

// TokenStore is where profile p's delegation tokens live (PACT §5): its
// secret store, the OS keyring or the 0600 file, for a profile in its own
// SQLite file (as before); sealed in the database (seal.Vault) for a
// profile on PostgreSQL, under a data key its secret store holds
// (DataKeys), so that the database never holds them as plaintext. nil
// when the profile has no secret store.
func TokenStore(p *profile.Profile, db store.Store) delegation.Secrets {
	if p.Secrets == nil {
		return nil
	}
	if p.Database == "" {
		return p.Secrets
	}
	return seal.Vault{Store: db, Sealer: DataKeys(p)}
}

// DataKeys are the data keys that seal profile p's tokens in a database,
// kept in its secret store under "NAME/data-key/…" (`pact keyring move`
// carries them); the first is made, under a lock in the profile's data
// folder, by the first token sealed.
func DataKeys(p *profile.Profile) *seal.Keyring {
	lock := filepath.Join(p.Dirs.ProfileDataDir(p.Name), "data-key")
	return &seal.Keyring{Secrets: p.Secrets, Prefix: p.Name + "/", Lock: func() (func(), error) { return store.Lock(lock) }}
}

// tokens is where the Session's delegation tokens live (Options.Tokens).
func (o Options) tokens() delegation.Secrets {
	if o.Tokens != nil {
		return o.Tokens
	}
	return o.Profile.Secrets
}
