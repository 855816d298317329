package store

import (
	"context"
	"database/sql"
	"errors"
)

// Note returns the value kept under key in the meta table (notes about
// Brands and cards that outlive a cache entry, such as
// discovery.Cache.RememberNoStream); ok is false when there is none.
func (db *DB) Note(ctx context.Context, key string) (value string, ok bool, err error) {
	c, err := db.conn(ctx)
	if err != nil {
		return "", false, err
	}
	err = c.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, "note:"+key).Scan(&value)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return value, true, nil
}

// SetNote keeps value under key (replacing it), in one transaction.
func (db *DB) SetNote(ctx context.Context, key, value string) error {
	return db.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)`, "note:"+key, value)
		return err
	})
}
