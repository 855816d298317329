package discovery

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/pact-cli/pact/httpx"
	"github.com/pact-cli/pact/iostreams"
	"github.com/pact-cli/pact/store"
)

// Pins is where Brand pins are kept (as SSH keeps known_hosts). Brand is
// the card URL. Pin reports false when the Brand has none.
type Pins interface {
	Pin(ctx context.Context, brand string) (store.Pin, bool, error)
	SetPin(ctx context.Context, p store.Pin) error
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
	// Expected is the fingerprint the User passed to `--trust --expect`
	// when the card now has another one ("" otherwise).
	Expected string
}

// Is makes errors.Is(err, ErrCardChanged) true.
func (e *CardChangedError) Is(target error) bool { return target == ErrCardChanged }

// Fingerprint is the short fingerprint of the new pin values (PinFingerprint
// of New): `pact card BRAND --trust --expect FINGERPRINT` accepts the card
// only while it still says exactly this.
func (e *CardChangedError) Fingerprint() string { return PinFingerprint(e.New) }

// TrustCommand is the command that accepts exactly this card, the Brand
// shell-quoted (iostreams.CommandHint): the Brand is what the User typed or
// a card URL, and a URL may hold $(…), ; or & that a shell would run.
func (e *CardChangedError) TrustCommand() string {
	return iostreams.CommandHint("pact", "card", e.Brand, "--trust", "--expect", e.Fingerprint())
}

// Error shows old and new side by side and the command that accepts exactly
// this change.
func (e *CardChangedError) Error() string {
	var b strings.Builder
	if e.Expected != "" {
		fmt.Fprintf(&b, "the Agent Card of %s is not the card you were shown: its fingerprint is now %s, not %s; nothing was accepted.\n",
			e.Brand, e.Fingerprint(), e.Expected)
		b.WriteString(e.Table())
		fmt.Fprintf(&b, "Check the values above; if the Brand really changed this, accept exactly this card with:\n  %s",
			e.TrustCommand())
		return b.String()
	}
	fmt.Fprintf(&b, "the Agent Card of %s changed since you accepted it on %s (%s); nothing was sent.\n",
		e.Brand, e.Old.PinnedAt.Local().Format("2006-01-02 15:04 MST"), strings.Join(e.Changes, ", "))
	b.WriteString(e.Table())
	fmt.Fprintf(&b, "If the Brand really changed this, accept exactly this card (fingerprint %s) with:\n  %s",
		e.Fingerprint(), e.TrustCommand())
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
		ks := strings.Fields(t)
		switch len(ks) {
		case 0:
			return "unsigned"
		case 1:
			return "key " + ks[0]
		}
		return "keys " + strings.Join(ks, ", ")
	}
	return [][3]string{
		{"provider", old.ProviderOrigin, cur.ProviderOrigin},
		{"interface", old.InterfaceURL, cur.InterfaceURL},
		{"signed by", key(old.KeyThumbprint), key(cur.KeyThumbprint)},
	}
}

// ErrorDetails is the --json detail of the error: {"old": pin, "new": pin,
// "changes": [...], "fingerprint": PinFingerprint(new)}.
func (e *CardChangedError) ErrorDetails() map[string]any {
	d := map[string]any{"old": e.Old, "new": e.New, "changes": e.Changes, "fingerprint": e.Fingerprint()}
	if e.Changes == nil {
		d["changes"] = []string{}
	}
	if e.Expected != "" {
		d["expected"] = e.Expected
	}
	return d
}

// PinFingerprint is a short fingerprint of what a pin accepts: its Provider
// origin, interface URL and signing keys (not when it was pinned, not the
// retired keys). 80 bits of SHA-256, base32, in four groups
// ("abcd-efgh-ijkl-mnop"); SameFingerprint compares one the User typed.
func PinFingerprint(p store.Pin) string {
	keys := strings.Fields(p.KeyThumbprint)
	slices.Sort(keys)
	sum := sha256.Sum256([]byte("pact pin 1\n" + p.ProviderOrigin + "\n" + p.InterfaceURL + "\n" + strings.Join(keys, " ")))
	s := strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:10]))
	return s[0:4] + "-" + s[4:8] + "-" + s[8:12] + "-" + s[12:16]
}

// SameFingerprint reports whether typed (case and dashes ignored) is fp.
func SameFingerprint(typed, fp string) bool {
	norm := func(s string) string { return strings.ToLower(strings.NewReplacer("-", "", " ", "").Replace(s)) }
	return norm(typed) != "" && norm(typed) == norm(fp)
}

// PinOf is the pin a card would get on first contact: the origin of the
// Provider its interface URL is on (the card's self-declared provider.url
// is not what pact talks to, so it is not pinned), its interface URL and
// the thumbprints of every key that verified it.
func PinOf(card *Card, now time.Time) store.Pin {
	var keys []string
	if card.Signature != nil {
		for _, t := range card.Signature.Thumbprints {
			if !slices.Contains(keys, t) {
				keys = append(keys, t)
			}
		}
	}
	return store.Pin{Brand: card.URL, ProviderOrigin: interfaceOrigin(card.InterfaceURL), InterfaceURL: card.InterfaceURL,
		KeyThumbprint: strings.Join(keys, " "), PinnedAt: now.UTC()}
}

// interfaceOrigin is the origin of an interface URL ("" when it has none).
func interfaceOrigin(iface string) string {
	if u, err := url.Parse(iface); err == nil && u.Host != "" {
		return originOf(u)
	}
	return ""
}

// LookupPin is the pin kept for brand (a card URL). A pin recorded by an
// earlier build, whose provider was the card's provider.url, reads as the
// origin of its interface URL.
func LookupPin(ctx context.Context, pins Pins, brand string) (store.Pin, bool, error) {
	p, ok, err := pins.Pin(ctx, brand)
	if err != nil || !ok {
		return p, ok, err
	}
	if o := interfaceOrigin(p.InterfaceURL); o != "" {
		p.ProviderOrigin = o
	}
	return p, true, nil
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

// ComparePin compares card with the pin old and records nothing. It
// returns the pin the card leads to (next), whether that is an update
// accepted without asking, and the changes that need the User (none when
// the card is accepted as is). The rule for signing keys, with P the
// pinned keys, R the retired ones and T the keys that verified the card:
//   - T shares a key with P: the card is vouched for by a key the User
//     accepted. The keys of T in neither P nor R are new: if there are any,
//     the pinned key announced a rotation; they become the pin and every key
//     of P is retired for good. Otherwise the pin stays as it is.
//   - P is empty (the card was unsigned): a signed card is accepted and
//     its keys pinned.
//   - T is empty while P is not: "no longer signed".
//   - otherwise: "signed by a retired key" when a key of T is retired
//     (alone or with keys never accepted), else "signed by another key".
//
// So a card signed by the old and the new key moves the pin to the new key
// once, stays there however often it is served, and a card signed only by
// the old key afterwards is a change. Accepting a change (next, when there
// are changes) pins T and retires the other keys the pin knew.
func ComparePin(old store.Pin, card *Card, now time.Time) (next store.Pin, updated bool, changes []string) {
	cur := PinOf(card, now)
	if o := interfaceOrigin(old.InterfaceURL); o != "" {
		old.ProviderOrigin = o
	}
	if old.ProviderOrigin != cur.ProviderOrigin {
		changes = append(changes, "another Provider")
	}
	if old.InterfaceURL != cur.InterfaceURL {
		changes = append(changes, "another interface URL")
	}
	P, R, T := strings.Fields(old.KeyThumbprint), strings.Fields(old.RetiredKeys), strings.Fields(cur.KeyThumbprint)
	without := func(a []string, drop ...[]string) []string {
		var out []string
		for _, k := range a {
			if !slices.ContainsFunc(drop, func(d []string) bool { return slices.Contains(d, k) }) && !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
		return out
	}
	keys, retired := P, R
	keyChange := ""
	switch {
	case len(P) == 0 && len(T) == 0:
	case len(P) == 0:
		keys, retired, updated = T, without(R, T), true // now signed: nothing to lose
	case len(T) == 0:
		keyChange = "no longer signed"
	case slices.ContainsFunc(T, func(k string) bool { return slices.Contains(P, k) }):
		if fresh := without(T, P, R); len(fresh) > 0 {
			keys, retired, updated = fresh, without(append(slices.Clone(R), P...)), true
		}
	case slices.ContainsFunc(T, func(k string) bool { return slices.Contains(R, k) }):
		// A retired key among the signers (alone or with a key the User
		// never accepted) is named: it is what the User should look at.
		keyChange = "signed by a retired key"
	default:
		keyChange = "signed by another key"
	}
	if keyChange != "" {
		// Accepting the change pins the card's keys as they are.
		changes = append(changes, keyChange)
		keys, retired, updated = T, without(append(slices.Clone(R), P...), T), false
	}
	if len(changes) > 0 {
		updated = false
	}
	next = cur
	next.KeyThumbprint, next.RetiredKeys = strings.Join(keys, " "), strings.Join(retired, " ")
	if len(changes) == 0 && !updated {
		next.PinnedAt = old.PinnedAt
	}
	return next, updated, changes
}

// CheckPin compares card with its Brand's pin (ComparePin) before anything
// is sent to the Provider. On first contact it records the pin; it records
// silently a key rotation announced by the pinned key and a Brand that
// started signing. Any other difference returns a *CardChangedError (arg is
// the brand as the User named it, for the hint); the pin is left alone
// until the User accepts. A changed card is remembered as seen (Judge), and
// a change seen earlier by any command stops this one too, whatever card
// it holds, until the User accepts a card.
func CheckPin(ctx context.Context, pins Pins, card *Card, arg string, now time.Time) (PinStatus, error) {
	j, err := Judge(ctx, pins, card, now)
	if err != nil {
		return 0, fmt.Errorf("reading what was accepted for %s: %w", card.URL, err)
	}
	if !j.Had {
		return PinFirst, pins.SetPin(ctx, PinOf(card, now))
	}
	if len(j.Changes) > 0 {
		if arg == "" {
			arg = card.URL
		}
		return 0, &CardChangedError{Brand: arg, Old: j.Old, New: j.Next, Changes: j.Changes}
	}
	if j.Updated {
		return PinUpdated, pins.SetPin(ctx, j.Next)
	}
	return PinSame, nil
}

// Trust records card as its Brand's pin (`pact card BRAND --trust`) and
// returns the pin it replaces (ok false when there was none).
func Trust(ctx context.Context, pins Pins, card *Card, now time.Time) (old store.Pin, ok bool, err error) {
	old, ok, err = LookupPin(ctx, pins, card.URL)
	if err != nil {
		return old, ok, err
	}
	return old, ok, pins.SetPin(ctx, Proposed(old, ok, card, now))
}

// Proposed is the pin that accepting card records, given the pin old (had
// false on first contact): what CardChangedError.New shows.
func Proposed(old store.Pin, had bool, card *Card, now time.Time) store.Pin {
	if !had {
		return PinOf(card, now)
	}
	next, _, _ := ComparePin(old, card, now)
	next.PinnedAt = now.UTC()
	return next
}

// Accept records the card a CardChangedError describes (the User said yes
// to the change in the TUI).
func Accept(ctx context.Context, pins Pins, e *CardChangedError, now time.Time) error {
	p := e.New
	p.PinnedAt = now.UTC()
	return pins.SetPin(ctx, p)
}

// CheckPinRecord checks a pin kept elsewhere (a restored backup) as
// pinning makes them (PinOf): the Brand's card URL and the interface URL
// acceptable URLs (https, or http on loopback; httpx.CheckURL), and each
// signing key an RFC 7638 SHA-256 thumbprint (43 base64url characters). A
// pin that fails it would stop the Brand's every command, or let a key
// nobody saw sign its card.
func CheckPinRecord(p store.Pin) error {
	for _, u := range []struct{ what, url string }{{"its card URL", p.Brand}, {"its interface URL", p.InterfaceURL}} {
		pu, err := url.Parse(u.url)
		if err != nil || pu.Host == "" {
			return fmt.Errorf("%s %q is not a URL", u.what, iostreams.SanitizeLine(u.url))
		}
		if err := httpx.CheckURL(pu); err != nil {
			return fmt.Errorf("%s: %v", u.what, err)
		}
	}
	for _, tp := range strings.Fields(p.KeyThumbprint) {
		if b, err := base64.RawURLEncoding.DecodeString(tp); err != nil || len(b) != sha256.Size {
			return fmt.Errorf("its signing key %q is not a key thumbprint", iostreams.SanitizeLine(tp))
		}
	}
	return nil
}
