package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/discovery"
	"github.com/pact-cli/pact/iostreams"
	"github.com/pact-cli/pact/store"
)

// Start says which conversation a turn continues: the stored one (zero
// value), a new one (New, `--new`) or the one with contextId Context
// (`--context`).
type Start struct {
	New     bool   `json:"new,omitempty"`
	Context string `json:"context,omitempty"`
}

// ErrNewAndContext is a Start with both New and Context.
var ErrNewAndContext = errors.New("--new and --context cannot be used together")

// Err is the Start's own error, before anything is opened:
// ErrNewAndContext, or nil. Front-ends check it first (a usage error) and
// word it for their input; Open returns it too.
func (st Start) Err() error {
	if st.New && st.Context != "" {
		return ErrNewAndContext
	}
	return nil
}

// Open opens the Brand named brand (a domain, an origin or a card URL,
// discovery.CardURL) for a turn: the card is fetched or taken from the
// cache, checked, its signature verified and compared with the Brand's pin
// before anything reaches the Provider (conversation.Open); then the
// conversation st names is chosen. Errors: ErrNewAndContext (before any
// request), conversation.Open's (*discovery.CardChangedError for a changed
// card), the store's.
func Open(ctx context.Context, opts conversation.Options, brand string, st Start) (*conversation.Session, error) {
	if err := st.Err(); err != nil {
		return nil, err
	}
	s, err := conversation.Open(ctx, opts, brand)
	if err != nil {
		return nil, err
	}
	switch {
	case st.New:
		if err := s.StartNew(); err != nil {
			return nil, err
		}
	case st.Context != "":
		s.UseContext(st.Context)
	}
	return s, nil
}

// PinNote compares card with its Brand's pin as a turn would (recording
// the pin on first contact, and a key rotation the accepted key announced)
// and says in plain words what it found. A changed card is a
// *discovery.CardChangedError (CARD_CHANGED) naming the Brand as arg.
func PinNote(ctx context.Context, pins discovery.Pins, arg string, card *discovery.Card, now time.Time) (string, error) {
	status, err := discovery.CheckPin(ctx, pins, card, arg, now)
	switch {
	case err != nil:
		return "", err
	case status == discovery.PinFirst:
		return "first contact: Provider, interface and key remembered", nil
	case status == discovery.PinUpdated:
		return "the Brand's key changed, announced by the key you accepted; remembered", nil
	}
	return "matches what you accepted", nil
}

// Trusted is what Trust recorded.
type Trusted struct {
	// Note says it in plain words, for the card's table.
	Note string `json:"note"`
	// Fingerprint is the short fingerprint of the pin recorded.
	Fingerprint string `json:"fingerprint"`
	// Changed is set when the card differed from the pin it replaced
	// (old and new side by side: Changed.Table()).
	Changed *discovery.CardChangedError `json:"changed,omitempty"`
}

// NotAcceptedError is a changed card the User was shown and did not
// accept: nothing was recorded or sent. It unwraps to
// discovery.ErrCardChanged.
type NotAcceptedError struct {
	Brand string `json:"brand"`
}

func (e *NotAcceptedError) Error() string {
	return fmt.Sprintf("you did not accept the changed card of %s; nothing was changed or sent", iostreams.SanitizeLine(e.Brand))
}
func (e *NotAcceptedError) Unwrap() error { return discovery.ErrCardChanged }

// Trust records card (the one fetched in this request, never one fetched
// again) as the pin of its Brand, and only a card the User saw: a card that
// matches the pin, or changed only as CheckPin would accept, is recorded as
// is; a changed card needs expect, the fingerprint the CARD_CHANGED error
// gave (another card is refused with that error, Expected set), else it is
// refused (*discovery.CardChangedError). arg is the Brand as the User named
// it. TrustCard asks the User about a changed card.
func Trust(ctx context.Context, pins discovery.Pins, arg string, card *discovery.Card, expect string, now time.Time) (*Trusted, error) {
	old, had, err := discovery.LookupPin(ctx, pins, card.URL)
	if err != nil {
		return nil, err
	}
	next := discovery.Proposed(old, had, card, now)
	fp := discovery.PinFingerprint(next)
	var changes []string
	if had {
		_, _, changes = discovery.ComparePin(old, card, now)
	}
	changed := &discovery.CardChangedError{Brand: arg, Old: old, New: next, Changes: changes}
	switch {
	case expect != "":
		if !discovery.SameFingerprint(expect, fp) {
			changed.Expected = expect
			return nil, changed
		}
	case len(changes) > 0:
		return nil, changed
	}
	if err := pins.SetPin(ctx, next); err != nil {
		return nil, err
	}
	t := &Trusted{Note: "accepted now (--trust, fingerprint " + fp + ")", Fingerprint: fp}
	if had && len(changes) > 0 {
		t.Changed = changed
	}
	return t, nil
}

// Pin states reported by LookPin.
const (
	PinNew     = "new"     // no pin yet: the first turn records it
	PinSame    = "same"    // matches what the User accepted
	PinUpdated = "updated" // a key rotation the accepted key announced, or a Brand that started signing: accepted on the next turn
	PinChanged = "changed" // turns refuse the card until the User accepts it (Trust)
)

// PinLook is how a card compares with its Brand's pin.
type PinLook struct {
	State       string     `json:"state"`       // PinNew, PinSame, PinUpdated or PinChanged
	Changes     []string   `json:"changes"`     // what differs, in plain words (PinChanged only)
	Old         *store.Pin `json:"old"`         // what the User accepted; nil for PinNew
	New         store.Pin  `json:"new"`         // what accepting this card records
	Fingerprint string     `json:"fingerprint"` // short fingerprint of New (Trust's expect)
}

// LookPin compares card with its Brand's pin as a turn would, recording no
// pin (MCP get_agent_card); as every command, it remembers a changed card
// it sees, and a change another command saw is PinChanged here too (one
// card state, discovery.Judge). pins nil looks like a first contact.
func LookPin(ctx context.Context, pins discovery.Pins, card *discovery.Card, now time.Time) (PinLook, error) {
	l := PinLook{State: PinNew, Changes: []string{}, New: discovery.PinOf(card, now)}
	if pins != nil {
		j, err := discovery.Judge(ctx, pins, card, now)
		if err != nil {
			return l, err
		}
		if j.Had {
			old := j.Old
			l.Old, l.New, l.State = &old, j.Next, PinSame
			switch {
			case len(j.Changes) > 0:
				l.State, l.Changes = PinChanged, j.Changes
			case j.Updated:
				l.State = PinUpdated
			}
		}
	}
	l.Fingerprint = discovery.PinFingerprint(l.New)
	return l, nil
}
