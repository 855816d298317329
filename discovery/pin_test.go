package discovery

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pact-cli/pact/store"
)

// pinCard is the test card with the given interface URL and verified
// signing-key thumbprints (none = unsigned).
func pinCard(t *testing.T, iface string, thumbs ...string) *Card {
	t.Helper()
	var m map[string]any
	json.Unmarshal(baseCard(t), &m)
	m["supportedInterfaces"] = []any{map[string]any{"url": iface, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}}
	delete(m, "provider")
	raw, _ := json.Marshal(m)
	c, err := Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	c.URL = "https://brand.example/.well-known/agent-card.json"
	c.Signature = &Signature{Verified: len(thumbs) > 0, Thumbprints: thumbs, Signed: len(thumbs) > 0, Problems: []string{}}
	return c
}

func pins(t *testing.T) Pins {
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), store.DBFileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db.ForUser(store.LocalUser)
}

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func check(t *testing.T, p Pins, c *Card) (PinStatus, error) {
	t.Helper()
	return CheckPin(context.Background(), p, c, "brand.example", t0.Add(time.Hour))
}

func changed(t *testing.T, err error, want string) *CardChangedError {
	t.Helper()
	var ce *CardChangedError
	if !errors.As(err, &ce) || !errors.Is(err, ErrCardChanged) {
		t.Fatalf("err = %v; want a CardChangedError", err)
	}
	if !slices.Contains(ce.Changes, want) {
		t.Fatalf("changes %v; want %q", ce.Changes, want)
	}
	return ce
}

func TestPin_FirstContactRecordsProviderInterfaceAndKey(t *testing.T) {
	p := pins(t)
	st, err := CheckPin(context.Background(), p, pinCard(t, "https://prov.example/a2a/b1", "K1"), "", t0)
	if err != nil || st != PinFirst {
		t.Fatalf("status %v, %v", st, err)
	}
	got, ok, err := p.Pin(context.Background(), "https://brand.example/.well-known/agent-card.json")
	want := store.Pin{Brand: "https://brand.example/.well-known/agent-card.json", ProviderOrigin: "https://prov.example",
		InterfaceURL: "https://prov.example/a2a/b1", KeyThumbprint: "K1", PinnedAt: t0}
	if err != nil || !ok || got != want {
		t.Fatalf("pin %+v, %v, %v; want %+v", got, ok, err, want)
	}
	if st, err := check(t, p, pinCard(t, "https://prov.example/a2a/b1", "K1")); err != nil || st != PinSame {
		t.Fatalf("same card again: %v, %v", st, err)
	}
}

func TestPin_ProviderMovedStops(t *testing.T) {
	p := pins(t)
	check(t, p, pinCard(t, "https://prov.example/a2a/b1", "K1"))
	ce := changed(t, second(check(t, p, pinCard(t, "https://evil.example/a2a/b1", "K1"))), "another Provider")
	if ce.Old.ProviderOrigin != "https://prov.example" || ce.New.ProviderOrigin != "https://evil.example" {
		t.Fatalf("old/new %+v %+v", ce.Old, ce.New)
	}
	msg := ce.Error()
	for _, w := range []string{"nothing was sent", "https://prov.example/a2a/b1", "https://evil.example/a2a/b1", "pact card brand.example --trust --expect " + ce.Fingerprint()} {
		if !strings.Contains(msg, w) {
			t.Errorf("message lacks %q:\n%s", w, msg)
		}
	}
	// The pin is not touched until the User accepts.
	if got, _, _ := p.Pin(context.Background(), ce.Old.Brand); got.ProviderOrigin != "https://prov.example" {
		t.Fatal("a refused card changed the pin")
	}
	if err := Accept(context.Background(), p, ce, t0); err != nil {
		t.Fatal(err)
	}
	if st, err := check(t, p, pinCard(t, "https://evil.example/a2a/b1", "K1")); err != nil || st != PinSame {
		t.Fatalf("after Accept: %v, %v", st, err)
	}
}

func second(_ PinStatus, err error) error { return err }

func TestPin_InterfaceChangedStops(t *testing.T) {
	p := pins(t)
	check(t, p, pinCard(t, "https://prov.example/a2a/b1"))
	changed(t, second(check(t, p, pinCard(t, "https://prov.example/a2a/b2"))), "another interface URL")
}

func TestPin_UnsignedAfterSignedStops(t *testing.T) {
	p := pins(t)
	check(t, p, pinCard(t, "https://prov.example/a2a/b1", "K1"))
	ce := changed(t, second(check(t, p, pinCard(t, "https://prov.example/a2a/b1"))), "no longer signed")
	if !strings.Contains(ce.Table(), "unsigned") {
		t.Fatalf("table:\n%s", ce.Table())
	}
}

func TestPin_AnotherKeyStops(t *testing.T) {
	p := pins(t)
	check(t, p, pinCard(t, "https://prov.example/a2a/b1", "K1"))
	changed(t, second(check(t, p, pinCard(t, "https://prov.example/a2a/b1", "K2"))), "signed by another key")
}

func TestPin_RotationAnnouncedByTheOldKeyIsAccepted(t *testing.T) {
	p := pins(t)
	check(t, p, pinCard(t, "https://prov.example/a2a/b1", "K1"))
	if st, err := check(t, p, pinCard(t, "https://prov.example/a2a/b1", "K2", "K1")); err != nil || st != PinUpdated {
		t.Fatalf("rotation: %v, %v", st, err)
	}
	got, _, _ := p.Pin(context.Background(), "https://brand.example/.well-known/agent-card.json")
	if got.KeyThumbprint != "K2" {
		t.Fatalf("pinned key %q after rotation; want K2", got.KeyThumbprint)
	}
	if st, err := check(t, p, pinCard(t, "https://prov.example/a2a/b1", "K2")); err != nil || st != PinSame {
		t.Fatalf("new key alone after rotation: %v, %v", st, err)
	}
	changed(t, second(check(t, p, pinCard(t, "https://prov.example/a2a/b1", "K1"))), "signed by a retired key")
}

// The reviewer's sequence: a card signed by the old key ED and the new key
// ED2, served again and again, moves the pin to ED2 once and never back;
// ED2 alone is then the Brand; the retired ED alone is a change.
func TestPin_RotationMovesThePinForGoodNoFlapping(t *testing.T) {
	ctx := context.Background()
	p := pins(t)
	const brand = "https://brand.example/.well-known/agent-card.json"
	check(t, p, pinCard(t, "https://prov.example/a2a/b1", "ED"))
	for i, order := range [][]string{{"ED", "ED2"}, {"ED", "ED2"}, {"ED2", "ED"}, {"ED", "ED2"}} {
		st, err := check(t, p, pinCard(t, "https://prov.example/a2a/b1", order...))
		want := PinSame
		if i == 0 {
			want = PinUpdated
		}
		if err != nil || st != want {
			t.Fatalf("run %d: %v, %v; want %v", i+1, st, err, want)
		}
		got, _, _ := p.Pin(ctx, brand)
		if got.KeyThumbprint != "ED2" || got.RetiredKeys != "ED" {
			t.Fatalf("run %d: pinned %q retired %q; want ED2, ED", i+1, got.KeyThumbprint, got.RetiredKeys)
		}
	}
	if st, err := check(t, p, pinCard(t, "https://prov.example/a2a/b1", "ED2")); err != nil || st != PinSame {
		t.Fatalf("ED2 alone: %v, %v", st, err)
	}
	ce := changed(t, second(check(t, p, pinCard(t, "https://prov.example/a2a/b1", "ED"))), "signed by a retired key")
	if ce.New.KeyThumbprint != "ED" || ce.New.RetiredKeys != "ED2" {
		t.Fatalf("accepting the retired key would pin %+v", ce.New)
	}
	// The change seen stops every command, a rotation announced by the
	// pinned key included, until the User accepts a card (one card state,
	// issue 20): here the one pinned, signed by ED2.
	changed(t, second(check(t, p, pinCard(t, "https://prov.example/a2a/b1", "ED2", "ED3"))), "signed by a retired key")
	if _, _, err := Trust(ctx, p, pinCard(t, "https://prov.example/a2a/b1", "ED2"), t0); err != nil {
		t.Fatal(err)
	}
	// A later rotation from ED2 to ED3 retires ED2 as well.
	if st, err := check(t, p, pinCard(t, "https://prov.example/a2a/b1", "ED2", "ED3")); err != nil || st != PinUpdated {
		t.Fatalf("second rotation: %v, %v", st, err)
	}
	if got, _, _ := p.Pin(ctx, brand); got.KeyThumbprint != "ED3" || got.RetiredKeys != "ED ED2" {
		t.Fatalf("after the second rotation %+v", got)
	}
}

// A card signed by the pinned key and two new ones pins both new keys at
// once: served again it stays, and either new key alone is the Brand.
func TestPin_RotationToSeveralKeysIsStable(t *testing.T) {
	p := pins(t)
	check(t, p, pinCard(t, "https://prov.example/a2a/b1", "K1"))
	for i := 0; i < 3; i++ {
		st, err := check(t, p, pinCard(t, "https://prov.example/a2a/b1", "K1", "A", "B"))
		if err != nil || (i == 0) != (st == PinUpdated) {
			t.Fatalf("run %d: %v, %v", i, st, err)
		}
	}
	for _, k := range []string{"A", "B"} {
		if st, err := check(t, p, pinCard(t, "https://prov.example/a2a/b1", k)); err != nil || st != PinSame {
			t.Fatalf("%s alone: %v, %v", k, st, err)
		}
	}
	changed(t, second(check(t, p, pinCard(t, "https://prov.example/a2a/b1", "K1"))), "signed by a retired key")
}

// The fingerprint names the new values: it differs when any pinned value
// differs, not with the key order or the time.
func TestPin_FingerprintOfTheNewValues(t *testing.T) {
	a := store.Pin{ProviderOrigin: "https://p.example", InterfaceURL: "https://p.example/a", KeyThumbprint: "K1 K2", PinnedAt: t0}
	fp := PinFingerprint(a)
	if len(fp) != 19 || strings.Count(fp, "-") != 3 {
		t.Fatalf("fingerprint %q", fp)
	}
	b := a
	b.KeyThumbprint, b.PinnedAt, b.RetiredKeys = "K2 K1", t0.Add(time.Hour), "K0"
	if PinFingerprint(b) != fp {
		t.Fatal("key order, time or retired keys changed the fingerprint")
	}
	for _, c := range []store.Pin{{ProviderOrigin: "https://q.example", InterfaceURL: a.InterfaceURL, KeyThumbprint: a.KeyThumbprint},
		{ProviderOrigin: a.ProviderOrigin, InterfaceURL: "https://p.example/b", KeyThumbprint: a.KeyThumbprint},
		{ProviderOrigin: a.ProviderOrigin, InterfaceURL: a.InterfaceURL, KeyThumbprint: "K1"}} {
		if PinFingerprint(c) == fp {
			t.Fatalf("%+v has the fingerprint of %+v", c, a)
		}
	}
	if !SameFingerprint(strings.ToUpper(strings.ReplaceAll(fp, "-", "")), fp) || SameFingerprint("", fp) || SameFingerprint(fp[:10], fp) {
		t.Fatal("SameFingerprint")
	}
}

// The provider pinned is the origin of the interface URL pact talks to,
// not the provider.url the card declares about itself.
func TestPin_ProviderIsTheInterfaceOrigin(t *testing.T) {
	c := pinCard(t, "https://prov.example:8443/a2a/b1", "K1")
	c.Card.Provider = &a2a.AgentProvider{Org: "Evil", URL: "https://innocent.example"}
	if got := PinOf(c, t0).ProviderOrigin; got != "https://prov.example:8443" {
		t.Fatalf("provider %q", got)
	}
	// A pin an earlier build recorded with provider.url reads as the
	// interface's origin (no change reported for it).
	p := pins(t)
	legacy := PinOf(c, t0)
	legacy.ProviderOrigin = "https://innocent.example"
	p.SetPin(context.Background(), legacy)
	if st, err := check(t, p, c); err != nil || st != PinSame {
		t.Fatalf("legacy pin: %v, %v", st, err)
	}
}

func TestPin_StartingToSignIsAccepted(t *testing.T) {
	p := pins(t)
	check(t, p, pinCard(t, "https://prov.example/a2a/b1"))
	if st, err := check(t, p, pinCard(t, "https://prov.example/a2a/b1", "K1")); err != nil || st != PinUpdated {
		t.Fatalf("%v, %v", st, err)
	}
	changed(t, second(check(t, p, pinCard(t, "https://prov.example/a2a/b1", "K9"))), "signed by another key")
}

func TestPin_TrustReplacesThePin(t *testing.T) {
	p := pins(t)
	check(t, p, pinCard(t, "https://prov.example/a2a/b1", "K1"))
	old, had, err := Trust(context.Background(), p, pinCard(t, "https://new.example/a2a/b1", "K3"), t0)
	if err != nil || !had || old.KeyThumbprint != "K1" {
		t.Fatalf("Trust: %+v %v %v", old, had, err)
	}
	if st, err := check(t, p, pinCard(t, "https://new.example/a2a/b1", "K3")); err != nil || st != PinSame {
		t.Fatalf("after trust: %v, %v", st, err)
	}
}

func TestPin_ErrorDetailsCarryOldAndNew(t *testing.T) {
	p := pins(t)
	check(t, p, pinCard(t, "https://prov.example/a2a/b1", "K1"))
	ce := changed(t, second(check(t, p, pinCard(t, "https://evil.example/x", "K1"))), "another Provider")
	b, _ := json.Marshal(ce.ErrorDetails())
	var d struct {
		Old, New    store.Pin
		Fingerprint string
	}
	json.Unmarshal(b, &d)
	if d.Old.InterfaceURL != "https://prov.example/a2a/b1" || d.New.InterfaceURL != "https://evil.example/x" || d.Fingerprint != PinFingerprint(d.New) {
		t.Fatalf("details %s", b)
	}
}

// Hostile re-review: the command that accepts a changed card holds the
// Brand as the User typed it (a card URL may hold $(…), ; and &): it is
// shell-quoted, so copying it runs exactly pact card and nothing else.
func TestPin_TrustCommandQuotesTheBrand(t *testing.T) {
	brand := "http://127.0.0.1:1/a&b;c/$(id)/agent-card.json"
	for _, expected := range []string{"", "ZZZZ-ZZZZ"} {
		ce := &CardChangedError{Brand: brand, Expected: expected, Old: store.Pin{PinnedAt: t0}, New: store.Pin{ProviderOrigin: "https://b.example"}, Changes: []string{"another Provider"}}
		want := "pact card '" + brand + "' --trust --expect " + ce.Fingerprint()
		if !strings.Contains(ce.Error(), want) || ce.TrustCommand() != want {
			t.Errorf("the hint is not quoted (want %q):\n%s", want, ce.Error())
		}
	}
}

// Hostile re-review: a card signed by a retired key plus a key never
// accepted is refused, and labelled by what matters: the retired key.
func TestPin_RetiredKeyWithANewKeyIsLabelledRetired(t *testing.T) {
	p := pins(t)
	check(t, p, pinCard(t, "https://prov.example/a2a/b1", "ED"))
	if st, err := check(t, p, pinCard(t, "https://prov.example/a2a/b1", "ED", "ED2")); err != nil || st != PinUpdated {
		t.Fatalf("rotation: %v, %v", st, err)
	}
	changed(t, second(check(t, p, pinCard(t, "https://prov.example/a2a/b1", "ED", "EVIL"))), "signed by a retired key")
	changed(t, second(check(t, p, pinCard(t, "https://prov.example/a2a/b1", "EVIL"))), "signed by another key")
}
