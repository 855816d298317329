package doctor

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/pact-cli/pact/httpx"
	"github.com/pact-cli/pact/store"
)

// Doctor fails (the report is not OK) when the profile's database is
// refused or damaged, and says how to restore it; a whole one is ok.
func TestDoctor_DatabaseCheckFailsOnAnUnusableHistory(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	db := store.ProfileDB(f.p.Dirs, f.p.Name)
	t.Cleanup(func() { db.Close() })
	if err := db.ForUser(store.LocalUser).SetPin(ctx, store.Pin{Brand: "https://brand.example/card"}); err != nil {
		t.Fatal(err)
	}
	run := func() *Report {
		return Run(ctx, Options{Profile: f.p, HTTP: httpx.NewClient(httpx.Options{}), Database: db.Check})
	}
	rep := run()
	if c := find(rep, CheckDatabase, ""); c == nil || c.Status != OK || !rep.OK {
		t.Fatalf("a whole database: %+v (report ok %v)", c, rep.OK)
	}
	db.Close()
	os.WriteFile(db.Path(), []byte(strings.Repeat("not a database ", 500)), 0o600)
	os.Remove(db.Path() + "-wal")
	os.Remove(db.Path() + "-shm")
	db = store.ProfileDB(f.p.Dirs, f.p.Name)
	rep = run()
	c := find(rep, CheckDatabase, "")
	if c == nil || c.Status != Fail || rep.OK || !strings.Contains(c.Fix, "restore") {
		t.Fatalf("a damaged database: %+v (report ok %v)", c, rep.OK)
	}
}

// Issue 28: a database that a newer pact migrated is refused, and the fix
// doctor gives is a newer pact, not a restore (the SQLite file) or the
// server's address (PostgreSQL): the database is whole.
func TestIssue28_DoctorSaysUpgradeForANewerSchema(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	newer := func(context.Context) (store.Health, error) {
		return store.Health{Path: "the database"}, fmt.Errorf("store: the database: %w", &store.NewerSchemaError{Version: 99, Known: 13})
	}
	for _, pg := range []bool{false, true} {
		rep := Run(ctx, Options{Profile: f.p, HTTP: httpx.NewClient(httpx.Options{}), Database: newer, Postgres: pg})
		c := find(rep, CheckDatabase, "")
		if c == nil || c.Status != Fail || rep.OK || !strings.Contains(c.Fix, "upgrade pact") || strings.Contains(c.Fix, "restore") || strings.Contains(c.Fix, "server runs") {
			t.Errorf("postgres %v: %+v (report ok %v)", pg, c, rep.OK)
		}
	}
}
