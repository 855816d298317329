package discovery

import (
	"context"
	"time"

	"github.com/pact-cli/pact/store"
)

// ChangeMemory is implemented by Pins that remember a changed card once any
// command has seen it (store.Pins keeps it in the User's store), so
// that send, chat, card, doctor, MCP and the tour agree: nothing is sent to
// the Brand until the User accepts a card (SetPin ends it), even by a
// command holding an earlier card that is still fresh in the cache.
type ChangeMemory interface {
	NoteCardChange(ctx context.Context, brand string, next store.Pin, changes []string) error
	CardChange(ctx context.Context, brand string) (next store.Pin, changes []string, ok bool, err error)
}

// Judgement is how a card compares with its Brand's pin (Judge).
type Judgement struct {
	Old     store.Pin // what the User accepted (Had false: nothing yet)
	Had     bool
	Next    store.Pin // what accepting the card (or the change seen) records
	Updated bool      // a change CheckPin accepts by itself (a rotation announced by the pinned key)
	// Changes are the differences, in plain words, that stop sending:
	// this card's, or (Seen) those of a changed card an earlier command saw
	// and the User has not accepted.
	Changes []string
	Seen    bool
}

// Judge compares card with the Brand's pin as every command must (one card
// state): a card that differs is remembered as seen (when pins is a
// ChangeMemory; a failure to remember is not an error), and a card that
// matches while a changed card seen earlier has not been accepted is
// judged by that change. It records no pin.
func Judge(ctx context.Context, pins Pins, card *Card, now time.Time) (Judgement, error) {
	var j Judgement
	old, ok, err := LookupPin(ctx, pins, card.URL)
	if err != nil || !ok {
		return j, err
	}
	j.Old, j.Had = old, true
	j.Next, j.Updated, j.Changes = ComparePin(old, card, now)
	mem, remembers := pins.(ChangeMemory)
	if len(j.Changes) > 0 {
		if remembers {
			mem.NoteCardChange(ctx, card.URL, j.Next, j.Changes)
		}
		return j, nil
	}
	if remembers {
		if next, changes, seen, err := mem.CardChange(ctx, card.URL); err == nil && seen {
			j.Next, j.Updated, j.Changes, j.Seen = next, false, changes, true
		}
	}
	return j, nil
}
