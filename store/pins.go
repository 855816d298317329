package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Pin returns the pin kept for brand; ok is false when there is none.
func (db *DB) Pin(ctx context.Context, brand string) (Pin, bool, error) {
	c, err := db.conn(ctx)
	if err != nil {
		return Pin{}, false, err
	}
	var p Pin
	var at string
	err = c.QueryRowContext(ctx, `SELECT brand, provider_origin, interface_url, key_thumbprint, retired_keys, pinned_at FROM pins WHERE brand = ?`, brand).
		Scan(&p.Brand, &p.ProviderOrigin, &p.InterfaceURL, &p.KeyThumbprint, &p.RetiredKeys, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return Pin{}, false, nil
	}
	if err != nil {
		return Pin{}, false, err
	}
	p.PinnedAt = parseTime(at)
	return p, true, nil
}

// SetPin keeps p, replacing the pin kept for p.Brand. A zero PinnedAt is
// set to now.
func (db *DB) SetPin(ctx context.Context, p Pin) error {
	if p.Brand == "" {
		return errors.New("store: a pin needs a brand")
	}
	if p.PinnedAt.IsZero() {
		p.PinnedAt = time.Now().UTC()
	}
	return db.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO pins (brand, provider_origin, interface_url, key_thumbprint, retired_keys, pinned_at) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (brand) DO UPDATE SET provider_origin = excluded.provider_origin, interface_url = excluded.interface_url,
				key_thumbprint = excluded.key_thumbprint, retired_keys = excluded.retired_keys, pinned_at = excluded.pinned_at`,
			p.Brand, p.ProviderOrigin, p.InterfaceURL, p.KeyThumbprint, p.RetiredKeys, fmtTime(p.PinnedAt))
		return err
	})
}
