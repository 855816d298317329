package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"
)

// Pin returns the pin kept for brand; ok is false when there is none.
func (db *userDB) Pin(ctx context.Context, brand string) (Pin, bool, error) {
	c, err := db.conn(ctx)
	if err != nil {
		return Pin{}, false, err
	}
	var p Pin
	var at string
	err = c.QueryRowContext(ctx, `SELECT brand, provider_origin, interface_url, key_thumbprint, retired_keys, pinned_at FROM pins WHERE user_id = ? AND brand = ?`, db.user, brand).
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
func (db *userDB) SetPin(ctx context.Context, p Pin) error {
	if p.Brand == "" {
		return errors.New("a pin needs a brand")
	}
	if p.PinnedAt.IsZero() {
		p.PinnedAt = time.Now().UTC()
	}
	return db.tx(ctx, func(tx *sql.Tx) error {
		// Accepting a card ends any change seen for the Brand.
		if _, err := tx.ExecContext(ctx, `DELETE FROM card_changes WHERE user_id = ? AND brand = ?`, db.user, p.Brand); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO pins (user_id, brand, provider_origin, interface_url, key_thumbprint, retired_keys, pinned_at) VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (user_id, brand) DO UPDATE SET provider_origin = excluded.provider_origin, interface_url = excluded.interface_url,
				key_thumbprint = excluded.key_thumbprint, retired_keys = excluded.retired_keys, pinned_at = excluded.pinned_at`,
			db.user, p.Brand, p.ProviderOrigin, p.InterfaceURL, p.KeyThumbprint, p.RetiredKeys, fmtTime(p.PinnedAt))
		return err
	})
}

// NoteCardChange remembers that a card of brand was seen that differs from
// its pin (next: what accepting it would record; changes: in plain words),
// so that every command stops before sending until the User accepts a card
// (SetPin ends it). Noting it again keeps the first sighting's time.
func (db *userDB) NoteCardChange(ctx context.Context, brand string, next Pin, changes []string) error {
	pin, _ := json.Marshal(next)
	ch, _ := json.Marshal(changes)
	return db.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO card_changes (user_id, brand, pin, changes, seen_at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (user_id, brand) DO UPDATE SET pin = excluded.pin, changes = excluded.changes
			WHERE pin != excluded.pin OR changes != excluded.changes`, db.user, brand, string(pin), string(ch), fmtTime(time.Now().UTC()))
		return err
	})
}

// CardChange returns the changed card last seen for brand (NoteCardChange)
// while the User has not accepted a card since; ok is false when none.
func (db *userDB) CardChange(ctx context.Context, brand string) (next Pin, changes []string, ok bool, err error) {
	c, err := db.conn(ctx)
	if err != nil {
		return Pin{}, nil, false, err
	}
	var pin, ch string
	err = c.QueryRowContext(ctx, `SELECT pin, changes FROM card_changes WHERE user_id = ? AND brand = ?`, db.user, brand).Scan(&pin, &ch)
	if errors.Is(err, sql.ErrNoRows) {
		return Pin{}, nil, false, nil
	}
	if err != nil {
		return Pin{}, nil, false, err
	}
	if json.Unmarshal([]byte(pin), &next) != nil || json.Unmarshal([]byte(ch), &changes) != nil {
		return Pin{}, []string{"a changed card was seen (its record is damaged)"}, true, nil
	}
	return next, changes, true, nil
}
