package profile

import (
	"errors"
	"strings"
	"testing"

	"github.com/pact-cli/pact/secrets"
)

// memStore is an in-memory secret store posing as the OS keyring.
type memStore struct {
	m       map[string]string
	failSet bool
}

func (s *memStore) Get(k string) (string, error) {
	v, ok := s.m[k]
	if !ok {
		return "", secrets.ErrNotFound
	}
	return v, nil
}
func (s *memStore) Set(k, v string) error {
	if s.failSet {
		return secrets.ErrUnavailable
	}
	s.m[k] = v
	return nil
}
func (s *memStore) Delete(k string) error { delete(s.m, k); return nil }
func (s *memStore) Kind() string          { return "os" }
func (s *memStore) Where() string         { return "memory" }

func TestKeyring_InitRecordsItAndAnExplicitConflictIsAnError(t *testing.T) {
	p := newProfile(t)
	if k, err := ResolveKeyring(p.Dirs, p.Name, KeyringChoice{Default: "file"}); err != nil || k != "file" {
		t.Fatalf("before init, the config default applies: %q %v", k, err)
	}
	if _, err := p.Init("https://pa.example.com", "", "", false); err != nil {
		t.Fatal(err)
	}
	if rec, _ := RecordedKeyring(p.Dirs, p.Name); rec != "file" {
		t.Fatalf("recorded keyring = %q, want file", rec)
	}
	// Unset, or a config default that differs: the record wins.
	for _, ch := range []KeyringChoice{{}, {Default: "os"}, {Explicit: "file", ExplicitSource: "PACT_KEYRING=file"}} {
		if k, err := ResolveKeyring(p.Dirs, p.Name, ch); err != nil || k != "file" {
			t.Fatalf("%+v: %q %v", ch, k, err)
		}
	}
	_, err := ResolveKeyring(p.Dirs, p.Name, KeyringChoice{Explicit: "os", ExplicitSource: "PACT_KEYRING=os"})
	if !errors.Is(err, ErrKeyringConflict) || !errors.Is(err, ErrInvalidInput) ||
		!strings.Contains(err.Error(), "PACT_KEYRING=os") || !strings.Contains(err.Error(), `"file"`) || !strings.Contains(err.Error(), "pact keyring move --to os") {
		t.Fatalf("conflict: %v", err)
	}
}

func TestKeyring_MoveSecretsCopiesRecordsThenDeletes(t *testing.T) {
	p := newProfile(t)
	if _, err := p.Init("https://pa.example.com", "", "", false); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Rotate(""); err != nil {
		t.Fatal(err)
	}
	src := p.Secrets
	src.Set("default/delegation/abc/access", "tok")
	sub, _ := p.Sub("aud")

	// A failing target changes nothing.
	bad := &memStore{m: map[string]string{}, failSet: true}
	if _, err := p.MoveSecrets(bad, nil); err == nil {
		t.Fatal("move to a failing keyring succeeded")
	}
	if rec, _ := RecordedKeyring(p.Dirs, p.Name); rec != "file" {
		t.Fatalf("failed move changed the record to %q", rec)
	}

	dst := &memStore{m: map[string]string{}}
	res, err := p.MoveSecrets(dst, []string{"default/delegation/abc/access", "default/delegation/abc/refresh"})
	if err != nil || res.Moved != 4 || res.From != "file" || res.To != "os" {
		t.Fatalf("move: %+v %v", res, err)
	}
	if rec, _ := RecordedKeyring(p.Dirs, p.Name); rec != "os" {
		t.Fatalf("recorded keyring after move = %q", rec)
	}
	if _, err := src.Get("default/delegation/abc/access"); !errors.Is(err, secrets.ErrNotFound) {
		t.Fatalf("old copy left behind: %v", err)
	}
	c, _ := p.Load()
	if s, err := p.Signer(c); err != nil || s.KID() != c.Active().KID {
		t.Fatalf("signing after the move: %v", err)
	}
	if got, _ := p.Sub("aud"); got != sub {
		t.Fatal("the pairwise sub changed with the move")
	}
	if _, err := p.MoveSecrets(dst, nil); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("moving to the same backend: %v", err)
	}
}

func TestCommand_NamesTheProfile(t *testing.T) {
	if got := Command("default", "init --issuer URL"); got != "pact init --issuer URL" {
		t.Fatal(got)
	}
	if got := Command("work", "init --issuer URL"); got != "pact --profile work init --issuer URL" {
		t.Fatal(got)
	}
	p := newProfile(t)
	p.Name = "work"
	if _, err := p.Load(); err == nil || !strings.Contains(err.Error(), "pact --profile work init") {
		t.Fatalf("not-initialised hint: %v", err)
	}
}

// Hostile re-review: a hint holding a card URL or a scope id from a card
// quotes each word, so a shell runs only the pact command.
func TestCommandWords_QuotesEachWord(t *testing.T) {
	got := CommandWords("my work", "login", "http://h/a&b;c/$(id)/agent-card.json", "--scope", "orders:read")
	if want := `pact --profile 'my work' login 'http://h/a&b;c/$(id)/agent-card.json' --scope orders:read`; got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}
