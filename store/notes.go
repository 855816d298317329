package store

import (
	"context"
	"database/sql"
	"errors"
)

// Note returns the value the User kept under key (notes about
// Brands and cards that outlive a cache entry, such as
// discovery.Cache.RememberNoStream); ok is false when there is none.
func (db *userDB) Note(ctx context.Context, key string) (value string, ok bool, err error) {
	c, err := db.conn(ctx)
	if err != nil {
		return "", false, err
	}
	err = c.QueryRowContext(ctx, `SELECT value FROM notes WHERE user_id = ? AND key = ?`, db.user, key).Scan(&value)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return value, true, nil
}

// SetNote keeps value under key (replacing it), in one transaction.
func (db *userDB) SetNote(ctx context.Context, key, value string) error {
	return db.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO notes (user_id, key, value) VALUES (?, ?, ?)
			ON CONFLICT (user_id, key) DO UPDATE SET value = excluded.value`, db.user, key, value)
		return err
	})
}
