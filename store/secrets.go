package store

import (
	"context"
	"database/sql"
	"errors"
)

// PutSecret keeps the sealed secret s under name, replacing any.
func (db *userDB) PutSecret(ctx context.Context, name string, s SealedSecret) error {
	return db.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO secrets (user_id, name, key_version, ciphertext) VALUES (?, ?, ?, ?)
			ON CONFLICT (user_id, name) DO UPDATE SET key_version = excluded.key_version, ciphertext = excluded.ciphertext`,
			db.user, name, s.KeyVersion, s.Ciphertext)
		return err
	})
}

// Secret returns the sealed secret kept under name; ok is false when none.
func (db *userDB) Secret(ctx context.Context, name string) (SealedSecret, bool, error) {
	c, err := db.conn(ctx)
	if err != nil {
		return SealedSecret{}, false, err
	}
	var s SealedSecret
	err = c.QueryRowContext(ctx, `SELECT key_version, ciphertext FROM secrets WHERE user_id = ? AND name = ?`, db.user, name).Scan(&s.KeyVersion, &s.Ciphertext)
	if errors.Is(err, sql.ErrNoRows) {
		return SealedSecret{}, false, nil
	}
	if err != nil {
		return SealedSecret{}, false, err
	}
	return s, true, nil
}

// DeleteSecret removes the secret kept under name (absent is no error).
func (db *userDB) DeleteSecret(ctx context.Context, name string) error {
	return db.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM secrets WHERE user_id = ? AND name = ?`, db.user, name)
		return err
	})
}

// SecretNames lists the names of the User's sealed secrets, sorted.
func (db *userDB) SecretNames(ctx context.Context) ([]string, error) {
	c, err := db.conn(ctx)
	if err != nil {
		return nil, err
	}
	return queryAll(ctx, c, func(sc scanner) (string, error) {
		var n string
		return n, sc.Scan(&n)
	}, `SELECT name FROM secrets WHERE user_id = ? ORDER BY name`, db.user)
}
