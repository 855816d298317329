package store

import (
	"context"
	"errors"
)

// PinFile keeps Brand pins in one JSON file (brand → Pin), written
// atomically under a lock (Update), so concurrent pact processes never lose
// a pin or leave a torn file.
type PinFile struct {
	Path string
}

type pinDoc struct {
	Pins map[string]Pin `json:"pins"`
}

// Pin returns the pin of brand (a card URL) and whether there is one.
func (f PinFile) Pin(ctx context.Context, brand string) (Pin, bool, error) {
	if err := ctx.Err(); err != nil {
		return Pin{}, false, err
	}
	var d pinDoc
	if _, err := ReadJSON(f.Path, &d); err != nil {
		return Pin{}, false, err
	}
	p, ok := d.Pins[brand]
	return p, ok, nil
}

// SetPin records p, replacing any pin of p.Brand.
func (f PinFile) SetPin(ctx context.Context, p Pin) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if p.Brand == "" {
		return errors.New("a pin needs a brand")
	}
	return Update(f.Path, 0o600, func(d *pinDoc) error {
		if d.Pins == nil {
			d.Pins = map[string]Pin{}
		}
		d.Pins[p.Brand] = p
		return nil
	})
}
