package store_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/pact-cli/pact/store"
	"github.com/pact-cli/pact/store/storetest"
)

// sqliteHarness is the conformance suite's harness for the SQLite store: a
// database is a file in the test's temporary folder.
var sqliteHarness = storetest.Harness{
	Name:  "sqlite",
	Empty: func(t testing.TB) string { return filepath.Join(t.TempDir(), store.DBFileName) },
	Open: func(ctx context.Context, addr string) (store.Backend, error) {
		db, err := store.Open(ctx, addr)
		if err != nil {
			return nil, err
		}
		return db, nil
	},
	CountRows: countRows,
	SetSchemaAhead: func(t testing.TB, addr string) {
		c, err := sql.Open("sqlite", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Exec(fmt.Sprintf("PRAGMA user_version = %d", store.SchemaVersion+1)); err != nil {
			t.Fatal(err)
		}
	},
	Contains: func(t testing.TB, addr, needle string) bool {
		for _, f := range []string{addr, addr + "-wal"} {
			b, err := os.ReadFile(f)
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			if bytes.Contains(b, []byte(needle)) {
				return true
			}
		}
		return false
	},
}

func TestMain(m *testing.M) { storetest.Main(m, sqliteHarness) }

// TestIssue28_ConformanceSQLite runs the storage interface's conformance
// suite against the SQLite store.
func TestIssue28_ConformanceSQLite(t *testing.T) { storetest.Run(t, sqliteHarness) }
