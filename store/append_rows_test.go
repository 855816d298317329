package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"modernc.org/sqlite"

	"github.com/pact-cli/pact/store"
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
func countRows(t *testing.T, path string, fn func()) map[string]int {
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

func describe(rows map[string]int) string {
	var parts []string
	for k, v := range rows {
		parts = append(parts, fmt.Sprintf("%s=%d", k, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

// TestAppendTurnsTouchesConstantRows: appending a turn pair to a
// conversation writes the same rows, table by table, whether the
// conversation has 10 turns or 2,000 (counted by SQLite's pre-update hook,
// not timed), and only a handful of them. An append that rewrites or
// renumbers the conversation's earlier turns fails here; `make bench` row 7
// measures the time.
func TestAppendTurnsTouchesConstantRows(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), store.DBFileName)
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	t0 := time.Date(2026, 9, 30, 12, 0, 0, 0, time.UTC)
	conv := func(ctxID string, n int) store.Conversation {
		return store.Conversation{Brand: "https://brand.example/.well-known/agent-card.json", BrandName: "Brand",
			InterfaceURL: "https://provider.example/a2a/b1", ContextID: ctxID, LastMessageAt: t0.Add(time.Duration(n) * time.Second)}
	}
	turns := func(from, n int) []store.Turn {
		out := make([]store.Turn, 0, n)
		for i := from; i < from+n; i++ {
			role := "user"
			if i%2 == 1 {
				role = "agent"
			}
			out = append(out, store.Turn{MessageID: fmt.Sprintf("m-%06d", i), Role: role, Text: fmt.Sprintf("turn %d about order 1234", i), At: t0.Add(time.Duration(i) * time.Second)})
		}
		return out
	}
	appendPair := func(ctxID string, have int) map[string]int {
		return countRows(t, path, func() {
			if err := db.ForUser(store.LocalUser).AppendTurns(ctx, conv(ctxID, have+2), turns(have, 2)...); err != nil {
				t.Fatal(err)
			}
		})
	}
	for _, c := range []struct {
		ctxID string
		n     int
	}{{"small", 10}, {"large", 2000}} {
		if err := db.ForUser(store.LocalUser).AppendTurns(ctx, conv(c.ctxID, c.n), turns(0, c.n)...); err != nil {
			t.Fatal(err)
		}
	}
	// The Brand's current conversation is "large" now; make each append
	// below switch it the same way, so the comparison is like for like.
	appendPair("small", 10)
	appendPair("large", 2000)
	small := appendPair("small", 12)
	large := appendPair("large", 2002)
	if small["turns"] != 2 {
		t.Fatalf("appending 2 turns wrote %d rows of turns (%s); want 2", small["turns"], describe(small))
	}
	total := 0
	for _, v := range large {
		total += v
	}
	if describe(small) != describe(large) || total > 16 {
		t.Fatalf("appending 2 turns wrote\n  %s to a conversation of 12 turns,\n  %s to one of 2,002;\nwant the same few rows whatever the conversation's length", describe(small), describe(large))
	}
	if got, err := db.ForUser(store.LocalUser).Turns(ctx, "https://provider.example/a2a/b1", "large"); err != nil || len(got) != 2004 {
		t.Fatalf("turns stored: %d, %v", len(got), err)
	}
}
