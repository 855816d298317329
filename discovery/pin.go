package discovery

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/pact-cli/pact/store"
)

// Pins is where Brand pins are kept (as SSH keeps known_hosts). Brand is
// the card URL. Pin reports false when the Brand has none.
type Pins interface {
	Pin(ctx context.Context, brand string) (store.Pin, bool, error)
	SetPin(ctx context.Context, p store.Pin) error
}

// NewPins returns the pins of profile name, kept in its database
// (store.ProfileDB; the pins.json an earlier build kept for every profile
// is imported into it once).
func NewPins(dirs store.Dirs, name string) Pins {
	return store.ProfileDB(dirs, name)
}

// ErrCardChanged is matched by *CardChangedError (exit 1, CARD_CHANGED).
var ErrCardChanged = errors.New("the Brand's Agent Card changed")

// CardChangedError reports a card that no longer matches its Brand's pin:
// another Provider, another interface URL, another signing key, or no
// signature where there was one. Nothing has been sent to the Provider.
type CardChangedError struct {
	Brand    string    // the argument the User gave, for the --trust hint
	Old, New store.Pin // what was accepted, what the card says now
	Changes  []string  // the fields that differ, in plain words
}

// Is makes errors.Is(err, ErrCardChanged) true.
func (e *CardChangedError) Is(target error) bool { return target == ErrCardChanged }

// Error shows old and new side by side and the command that accepts the
// change.
func (e *CardChangedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the Agent Card of %s changed since you accepted it on %s (%s); nothing was sent.\n",
		e.Brand, e.Old.PinnedAt.Local().Format("2006-01-02 15:04 MST"), strings.Join(e.Changes, ", "))
	b.WriteString(e.Table())
	fmt.Fprintf(&b, "If the Brand really changed this, accept it with:\n  pact card %s --trust", e.Brand)
	return b.String()
}

// Table renders the pinned and the new values side by side, one row per
// field, rows that changed marked with "≠".
func (e *CardChangedError) Table() string {
	rows := PinRows(e.Old, e.New)
	w0, w1 := 0, len("accepted")
	for _, r := range rows {
		w0, w1 = max(w0, len(r[0])), max(w1, len(r[1]))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "  %-*s  %-*s  %s\n", w0, "", w1, "accepted", "now")
	for _, r := range rows {
		mark := " "
		if r[1] != r[2] {
			mark = "≠"
		}
		fmt.Fprintf(&b, "%s %-*s  %-*s  %s\n", mark, w0, r[0], w1, r[1], r[2])
	}
	return b.String()
}

// PinRows are (label, old, new) for provider, interface and signing key.
func PinRows(old, cur store.Pin) [][3]string {
	key := func(t string) string {
		if t == "" {
			return "unsigned"
		}
		return "key " + t
	}
	return [][3]string{
		{"provider", old.ProviderOrigin, cur.ProviderOrigin},
		{"interface", old.InterfaceURL, cur.InterfaceURL},
		{"signed by", key(old.KeyThumbprint), key(cur.KeyThumbprint)},
	}
}

// ErrorDetails is the --json detail of the error: {"old": pin, "new": pin}.
func (e *CardChangedError) ErrorDetails() map[string]any {
	return map[string]any{"old": e.Old, "new": e.New, "changes": e.Changes}
}

// PinOf is the pin a card would get now: its Provider origin (the card's
// provider.url, or the interface URL's origin when it names none), its
// interface URL and the thumbprint of the first key that verified it.
func PinOf(card *Card, now time.Time) store.Pin {
	p := store.Pin{Brand: card.URL, InterfaceURL: card.InterfaceURL, KeyThumbprint: card.Signature.Thumbprint(), PinnedAt: now.UTC()}
	if card.Card != nil && card.Card.Provider != nil {
		if u, err := url.Parse(strings.TrimSpace(card.Card.Provider.URL)); err == nil && u.Host != "" {
			p.ProviderOrigin = originOf(u)
		}
	}
	if p.ProviderOrigin == "" {
		if u, err := url.Parse(card.InterfaceURL); err == nil && u.Host != "" {
			p.ProviderOrigin = originOf(u)
		}
	}
	return p
}

// PinStatus is what CheckPin did.
type PinStatus int

const (
	// PinFirst: first contact, the card was pinned.
	PinFirst PinStatus = iota + 1
	// PinSame: the card matches its pin.
	PinSame
	// PinUpdated: the pin followed a key rotation announced by the pinned
	// key, or a Brand that started signing.
	PinUpdated
)

// CheckPin compares card with its Brand's pin before anything is sent to
// the Provider. On first contact it records the pin. It accepts silently
// (and updates the pin) a card that is
//   - signed by the pinned key and by one new key: a rotation the old key
//     announced;
//   - signed where the pinned card was unsigned.
//
// Any other difference returns a *CardChangedError (arg is the brand as the
// User named it, for the hint); the pin is left alone until Trust.
func CheckPin(ctx context.Context, pins Pins, card *Card, arg string, now time.Time) (PinStatus, error) {
	cur := PinOf(card, now)
	old, ok, err := pins.Pin(ctx, card.URL)
	if err != nil {
		return 0, fmt.Errorf("reading what was accepted for %s: %w", card.URL, err)
	}
	if !ok {
		return PinFirst, pins.SetPin(ctx, cur)
	}
	var thumbs []string
	if card.Signature != nil {
		thumbs = card.Signature.Thumbprints
	}
	var changes []string
	if old.ProviderOrigin != cur.ProviderOrigin {
		changes = append(changes, "another Provider")
	}
	if old.InterfaceURL != cur.InterfaceURL {
		changes = append(changes, "another interface URL")
	}
	update := false
	switch {
	case old.KeyThumbprint == "" && cur.KeyThumbprint != "":
		update = true // now signed: nothing to lose
	case old.KeyThumbprint == "":
	case len(thumbs) == 0:
		changes = append(changes, "no longer signed")
	case slices.Contains(thumbs, old.KeyThumbprint):
		// Signed by the pinned key; a second key it vouches for is a
		// rotation: pin the new one.
		for _, t := range thumbs {
			if t != old.KeyThumbprint {
				cur.KeyThumbprint, update = t, true
				break
			}
		}
		if !update {
			cur.KeyThumbprint = old.KeyThumbprint
		}
	default:
		changes = append(changes, "signed by another key")
	}
	if len(changes) > 0 {
		if arg == "" {
			arg = card.URL
		}
		return 0, &CardChangedError{Brand: arg, Old: old, New: cur, Changes: changes}
	}
	if update {
		return PinUpdated, pins.SetPin(ctx, cur)
	}
	return PinSame, nil
}

// Trust records card as its Brand's pin (`pact card BRAND --trust`) and
// returns the pin it replaces (ok false when there was none).
func Trust(ctx context.Context, pins Pins, card *Card, now time.Time) (old store.Pin, ok bool, err error) {
	old, ok, err = pins.Pin(ctx, card.URL)
	if err != nil {
		return old, ok, err
	}
	return old, ok, pins.SetPin(ctx, PinOf(card, now))
}

// Accept records the card a CardChangedError describes (the User said yes
// to the change in the TUI).
func Accept(ctx context.Context, pins Pins, e *CardChangedError, now time.Time) error {
	p := e.New
	p.PinnedAt = now.UTC()
	return pins.SetPin(ctx, p)
}
