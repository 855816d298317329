package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/pact-cli/pact/seal"
	"github.com/pact-cli/pact/secrets"
	"github.com/pact-cli/pact/store/backend"
	"github.com/pact-cli/pact/store/postgres"
	"github.com/pact-cli/pact/store/storetest"
)

// The stories on PostgreSQL run against the server PACT_TEST_POSTGRES_URL
// names ([postgres]); without it they are skipped, except under CI, where
// that is a failure (storetest.PostgresURL).
func condPostgres() (bool, error) {
	_, run, _, err := storetest.PostgresURL()
	return run, err
}

var pgDatabases atomic.Int64

// pg-database creates an empty database for the script (dropped when it
// ends) and sets PACT_DATABASE_URL to it.
func cmdPGDatabase(ts *testscript.TestScript, neg bool, args []string) {
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, os.Getenv("PACT_TEST_POSTGRES_URL"))
	if err != nil {
		ts.Fatalf("%v", err)
	}
	defer admin.Close(ctx)
	name := fmt.Sprintf("pact_script_%d_%d", os.Getpid(), pgDatabases.Add(1))
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		ts.Fatalf("%v", err)
	}
	ts.Defer(func() {
		if c, err := pgx.Connect(context.Background(), os.Getenv("PACT_TEST_POSTGRES_URL")); err == nil {
			c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
			c.Close(context.Background())
		}
	})
	u, _ := url.Parse(os.Getenv("PACT_TEST_POSTGRES_URL"))
	u.Path = "/" + name
	ts.Setenv("PACT_DATABASE_URL", u.String())
}

// pg-tokens-sealed N opens the delegation tokens the default profile keeps
// in $PACT_DATABASE_URL with the data key of its file keyring, and checks
// that there are N, that none is in the database as plaintext, and that
// neither the keyring file nor any other file under PACT_HOME holds one.
func cmdPGTokensSealed(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: pg-tokens-sealed N")
	}
	ctx := context.Background()
	dbURL := ts.Getenv("PACT_DATABASE_URL")
	db, err := postgres.Open(ctx, dbURL)
	if err != nil {
		ts.Fatalf("%v", err)
	}
	defer db.Close()
	keys, err := secrets.Open("file", filepath.Join(ts.Getenv("PACT_HOME"), "data"), 0)
	if err != nil {
		ts.Fatalf("%v", err)
	}
	st := db.ForUser(backend.ProfileUser("default"))
	v := seal.Vault{Store: st, Sealer: &seal.Keyring{Secrets: keys, Prefix: "default/"}}
	names, err := st.SecretNames(ctx)
	if err != nil {
		ts.Fatalf("%v", err)
	}
	if fmt.Sprint(len(names)) != args[0] {
		ts.Fatalf("%d sealed secrets (%v), want %s", len(names), names, args[0])
	}
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		ts.Fatalf("%v", err)
	}
	defer conn.Close(ctx)
	for _, name := range names {
		if !strings.Contains(name, "delegation/") {
			ts.Fatalf("sealed secret %q is not a delegation token", name)
		}
		tok, err := v.Get(name)
		if err != nil || len(tok) < 16 {
			ts.Fatalf("opening %s: %q %v", name, tok, err)
		}
		var found bool
		if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM secrets s WHERE position(convert_to($1, 'UTF8') in s.ciphertext) > 0)
			OR EXISTS (SELECT 1 FROM grants g WHERE strpos(g.data, $1) > 0)
			OR EXISTS (SELECT 1 FROM receipts r WHERE strpos(r.claims || r.jws || r.expect, $1) > 0)`, tok).Scan(&found); err != nil {
			ts.Fatalf("%v", err)
		}
		if found {
			ts.Fatalf("the token %s is in the database as plaintext", name)
		}
		filepath.WalkDir(ts.Getenv("PACT_HOME"), func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if b, _ := os.ReadFile(path); strings.Contains(string(b), tok) {
					ts.Fatalf("the token %s is in %s", name, path)
				}
			}
			return nil
		})
	}
	ts.Logf("%d tokens sealed in the database, none as plaintext anywhere", len(names))
}
