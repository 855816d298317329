package server

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/secrets"
	"github.com/pact-cli/pact/store"
)

func profileAt(t *testing.T, home string) *profile.Profile {
	t.Helper()
	dirs := store.Dirs{Config: filepath.Join(home, "config"), Data: filepath.Join(home, "data")}
	sec, err := secrets.Open("file", dirs.Data, 0)
	if err != nil {
		t.Fatal(err)
	}
	return &profile.Profile{Name: "serve", Dirs: dirs, Secrets: sec}
}

// copyHome copies a profile's files, as an operator copies them to
// another machine.
func copyHome(t *testing.T, from string) string {
	t.Helper()
	to := t.TempDir()
	err := filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o700)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	return to
}

// replicaOn is a Server of the profile at home on the database db.
func replicaOn(t *testing.T, home, issuer string, db store.ServerBackend) *Server {
	t.Helper()
	p := profileAt(t, home)
	id, err := NewIdentity(p, issuer, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Settings: Settings{}.WithDefaults(""), Identity: id, Store: db, DataKeys: conversation.DataKeys(p)})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestIssue30_ReplicasMustShareTheIdentity: a replica started from a copy
// of the first one's profile, made after the first started, shares its
// issuer, pairwise-sub secret and data key, and starts. One with a
// profile of its own (another sub secret), another issuer, or a copy made
// before the first replica made the data key, is refused in one sentence
// that says what to copy.
func TestIssue30_ReplicasMustShareTheIdentity(t *testing.T) {
	ctx := context.Background()
	const issuer = "https://pa.example"
	db, err := OpenStore(ctx, filepath.Join(t.TempDir(), "serve.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	first := t.TempDir()
	if _, err := profileAt(t, first).Init(issuer, "", "ES256", false); err != nil {
		t.Fatal(err)
	}
	early := copyHome(t, first) // before the first replica made the data key
	if err := replicaOn(t, first, "", db).CheckShared(ctx); err != nil {
		t.Fatalf("the first replica: %v", err)
	}
	if err := replicaOn(t, first, "", db).CheckShared(ctx); err != nil {
		t.Fatalf("the first replica, restarted: %v", err)
	}
	if err := replicaOn(t, copyHome(t, first), "", db).CheckShared(ctx); err != nil {
		t.Fatalf("a copy of the first replica's profile: %v", err)
	}

	own := t.TempDir()
	if _, err := profileAt(t, own).Init(issuer, "", "ES256", false); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	if _, err := profileAt(t, other).Init("https://other.example", "", "ES256", false); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, home, want string
	}{
		{"a profile of its own", own, "serve/sub-secret"},
		{"another issuer", other, "served under https://pa.example"},
		{"a copy made before the data key", early, "serve/data-key/"},
	} {
		err := replicaOn(t, c.home, "", db).CheckShared(ctx)
		if !errors.Is(err, ErrNotShared) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
