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
	return db
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
	for _, w := range []string{"nothing was sent", "https://prov.example/a2a/b1", "https://evil.example/a2a/b1", "pact card brand.example --trust"} {
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
	changed(t, second(check(t, p, pinCard(t, "https://prov.example/a2a/b1", "K1"))), "signed by another key")
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
	var d struct{ Old, New store.Pin }
	json.Unmarshal(b, &d)
	if d.Old.InterfaceURL != "https://prov.example/a2a/b1" || d.New.InterfaceURL != "https://evil.example/x" {
		t.Fatalf("details %s", b)
	}
}
