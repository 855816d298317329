package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/demoprovider"
	"github.com/pact-cli/pact/store/backend"
	"github.com/pact-cli/pact/store/postgres"
	"github.com/pact-cli/pact/store/storetest"
)

var pgDatabases atomic.Int64

// postgresDatabase creates an empty database on the test server for one
// test (dropped when it ends) and returns its URL.
func postgresDatabase(t *testing.T) string {
	t.Helper()
	server := storetest.RequirePostgres(t)
	ctx := context.Background()
	c, err := pgx.Connect(ctx, server)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	name := fmt.Sprintf("pact_e2e_%d_%d", os.Getpid(), pgDatabases.Add(1))
	if _, err := c.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if c, err := pgx.Connect(context.Background(), server); err == nil {
			c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
			c.Close(context.Background())
		}
	})
	u, _ := url.Parse(server)
	u.Path = "/" + name
	return u.String()
}

// Issue 28: 20 `pact send` processes at once into one conversation of a
// profile whose state is in PostgreSQL: every one succeeds, every message
// and reply is stored once, in that conversation, and nothing of it is in
// a file.
func TestIssue28_TwentyConcurrentSendsOnPostgres(t *testing.T) {
	t.Parallel()
	dbURL := postgresDatabase(t)
	d := newDemoEnv(t, demoprovider.Config{}, nil)
	d.extra = append(d.extra, "PACT_DATABASE_URL="+dbURL)
	concurrentSends(t, d, func(t *testing.T) map[string][]conversation.Turn {
		db, err := postgres.Open(context.Background(), dbURL)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		st := conversation.NewStore(db.ForUser(backend.ProfileUser("default")))
		sums, err := st.List()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string][]conversation.Turn{}
		for _, s := range sums {
			if out[s.ContextID], err = st.Turns(s.InterfaceURL, s.ContextID); err != nil {
				t.Fatal(err)
			}
		}
		r := d.run("conversations", "--json")
		var list []conversation.Summary
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &list) != nil || len(list) != len(sums) {
			t.Fatalf("pact conversations --json: exit %d, %d vs %d entries\n%s\n%s", r.code, len(list), len(sums), r.stdout, r.stderr)
		}
		return out
	})
	if _, err := os.Stat(d.home + "/data/profiles/default/pact.db"); err == nil {
		t.Error("a profile on PostgreSQL wrote pact.db")
	}
}
