package backend

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/pact-cli/pact/store"
)

// Issue 28: no database setting is the profile's own SQLite file, one User
// ("local"); a postgres:// URL is that PostgreSQL database, shared by the
// process's profiles (one pool a URL), each profile a User of its own.
func TestIssue28_ForProfileChoosesTheBackend(t *testing.T) {
	dirs := store.Dirs{Config: filepath.Join(t.TempDir(), "config"), Data: filepath.Join(t.TempDir(), "data")}
	b, user := ForProfile(dirs, "work", "")
	if db, ok := b.(*store.DB); !ok || user != store.LocalUser || db.Where() != dirs.DBPath("work") {
		t.Fatalf("no setting: %T %q", b, user)
	}
	const u = "postgres://pact:s3cret@db.example/pact"
	b1, u1 := ForProfile(dirs, "work", u)
	b2, u2 := ForProfile(dirs, "home", u)
	if u1 != "profile:work" || u2 != "profile:home" {
		t.Fatalf("users %q %q", u1, u2)
	}
	c1, ok1 := b1.(closer)
	c2, ok2 := b2.(closer)
	if !ok1 || !ok2 || c1.DB != c2.DB || strings.Contains(b1.Where(), "s3cret") {
		t.Fatalf("postgres: %T %T, where %q", b1, b2, b1.Where())
	}
	b1.Close()
	if b3, _ := ForProfile(dirs, "work", u); b3.(closer).DB == c1.DB {
		t.Fatal("a closed pool was handed out again")
	}
	for _, bad := range []string{"mysql://u:s3cret@db/pact", "/var/lib/pact.db", "sqlite:pact.db",
		"host=db user=u password=s3cret dbname=pact", "u:s3cret@db:5432/pact"} {
		if err := Check(bad); err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("Check(%q) = %v", bad, err)
		}
	}
	for _, good := range []string{"", "postgres://db/pact", "POSTGRESQL://db/pact"} {
		if err := Check(good); err != nil {
			t.Errorf("Check(%q) = %v", good, err)
		}
	}
}
