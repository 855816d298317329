package store

import (
	"context"
	"database/sql"
	"errors"
)

// Grants keep delegation grants' non-secret metadata (the tokens stay in
// the keyring, or sealed in Secrets) as JSON documents keyed by interface URL, so fields the
// delegation package adds need no migration.

// Grant returns the JSON document stored for interfaceURL.
func (db *userDB) Grant(ctx context.Context, interfaceURL string) ([]byte, bool, error) {
	c, err := db.conn(ctx)
	if err != nil {
		return nil, false, err
	}
	var data string
	err = c.QueryRowContext(ctx, `SELECT data FROM grants WHERE user_id = ? AND interface_url = ?`, db.user, interfaceURL).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return []byte(data), true, nil
}

// PutGrant adds or replaces the document for interfaceURL.
func (db *userDB) PutGrant(ctx context.Context, interfaceURL, brand string, data []byte) error {
	return db.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO grants (user_id, interface_url, brand, data) VALUES (?, ?, ?, ?)
			ON CONFLICT (user_id, interface_url) DO UPDATE SET brand = excluded.brand, data = excluded.data`, db.user, interfaceURL, brand, string(data))
		return err
	})
}

// DeleteGrant removes the document for interfaceURL (absent is no error).
func (db *userDB) DeleteGrant(ctx context.Context, interfaceURL string) error {
	return db.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM grants WHERE user_id = ? AND interface_url = ?`, db.user, interfaceURL)
		return err
	})
}

// Grants returns every stored document, by brand then interface URL.
func (db *userDB) Grants(ctx context.Context) ([][]byte, error) {
	c, err := db.conn(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := c.QueryContext(ctx, `SELECT data FROM grants WHERE user_id = ? ORDER BY brand, interface_url`, db.user)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][]byte
	for rows.Next() {
		var d string
		if err := rows.Scan(&d); err != nil {
			return nil, err
		}
		out = append(out, []byte(d))
	}
	return out, rows.Err()
}
