package store_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"modernc.org/sqlite"
)

// rowCounter counts the rows SQLite inserts, updates and deletes, per
// table, on connections to one database file: a pre-update hook that
// the driver's connection hook installs on every connection of the test
// binary (it counts only connections whose DSN names watch).
var rowCounter struct {
	mu    sync.Mutex
	watch string
	rows  map[string]int
}

func init() {
	sqlite.RegisterConnectionHook(func(c sqlite.ExecQuerierContext, dsn string) error {
		h, ok := c.(sqlite.HookRegisterer)
		if !ok {
			return fmt.Errorf("the sqlite driver connection has no pre-update hook")
		}
		h.RegisterPreUpdateHook(func(d sqlite.SQLitePreUpdateData) {
			rowCounter.mu.Lock()
			defer rowCounter.mu.Unlock()
			if rowCounter.rows != nil && rowCounter.watch != "" && strings.HasPrefix(dsn, rowCounter.watch) {
				rowCounter.rows[d.TableName]++
			}
		})
		return nil
	})
}

// countRows runs fn and returns the rows it wrote, per table.
func countRows(t testing.TB, path string, fn func()) map[string]int {
	t.Helper()
	rowCounter.mu.Lock()
	rowCounter.watch, rowCounter.rows = path, map[string]int{}
	rowCounter.mu.Unlock()
	fn()
	rowCounter.mu.Lock()
	defer rowCounter.mu.Unlock()
	got := rowCounter.rows
	rowCounter.watch, rowCounter.rows = "", nil
	return got
}
