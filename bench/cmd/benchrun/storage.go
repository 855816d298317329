package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pact-cli/pact/store"
	"github.com/pact-cli/pact/store/backend"
	"github.com/pact-cli/pact/store/postgres"
)

// Issue 28: the storage interface on both backends, side by side in one
// run (rows 10–13, each for SQLite then PostgreSQL):
//
//	10. turn append at 100,000 vs 10 turns (in process)      target ≤ 1.25×
//	11. 50 concurrent writers, each its own connection        every write kept (info: sends/s)
//	12. `pact conversations search` over 1,000,000 turns     target < 0.3 s a query
//	13. `pact receipts list --json` over 100,000 receipts    target < 1 s, < 60 MB RSS
//
// PostgreSQL is a throwaway cluster .ci/postgres starts with PostgreSQL's
// own defaults (--durable: every commit fsynced), or the server
// PACT_BENCH_POSTGRES_URL names. SQLite is the profile's file as pact
// opens it (WAL, synchronous=NORMAL).

// benchBackend is one backend under measurement.
type benchBackend struct {
	name string
	// open opens the database of the profile under home (a new handle, as
	// a new process would) and returns it with the profile's User.
	open func(home string) (store.Backend, string, error)
	// env is what a pact process needs to use that database.
	env func(home string) []string
	// cleanup frees what open made.
	cleanup func()
}

func sqliteBackend() benchBackend {
	return benchBackend{
		name: "SQLite",
		open: func(home string) (store.Backend, string, error) {
			db, err := store.Open(context.Background(), profileDirs(home).DBPath("default"))
			if err != nil {
				return nil, "", err
			}
			return db, store.LocalUser, nil
		},
		env:     func(home string) []string { return nil },
		cleanup: func() {},
	}
}

func profileDirs(home string) store.Dirs {
	return store.Dirs{Config: filepath.Join(home, "config"), Data: filepath.Join(home, "data")}
}

// postgresBackend gives every home a database of its own on the server.
func postgresBackend(server string) benchBackend {
	var mu sync.Mutex
	dbs := map[string]string{}
	var made []string
	url := func(home string) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		if u, ok := dbs[home]; ok {
			return u, nil
		}
		name := fmt.Sprintf("pact_bench_%d_%d", os.Getpid(), len(dbs))
		c, err := pgx.Connect(context.Background(), server)
		if err != nil {
			return "", err
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(context.Background(), "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
			return "", err
		}
		made = append(made, name)
		u := strings.Replace(server, "/postgres?", "/"+name+"?", 1)
		dbs[home] = u
		return u, nil
	}
	return benchBackend{
		name: "PostgreSQL",
		open: func(home string) (store.Backend, string, error) {
			u, err := url(home)
			if err != nil {
				return nil, "", err
			}
			db, err := postgres.Open(context.Background(), u)
			if err != nil {
				return nil, "", err
			}
			return db, backend.ProfileUser("default"), nil
		},
		env: func(home string) []string {
			u, _ := url(home)
			return []string{"PACT_DATABASE_URL=" + u}
		},
		cleanup: func() {
			c, err := pgx.Connect(context.Background(), server)
			if err != nil {
				return
			}
			defer c.Close(context.Background())
			for _, name := range made {
				c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
			}
		},
	}
}

// startPostgres returns the server to measure against: PACT_BENCH_POSTGRES_URL,
// or a throwaway cluster (stopped by the returned function).
func startPostgres() (string, func(), error) {
	if u := os.Getenv("PACT_BENCH_POSTGRES_URL"); u != "" {
		return u, func() {}, nil
	}
	out, err := exec.Command("./.ci/postgres", "start", "--durable").Output()
	if err != nil {
		return "", nil, fmt.Errorf(".ci/postgres start: %v (is Debian's postgresql installed?)", err)
	}
	vars := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "="); ok {
			vars[k] = strings.Trim(v, "'")
		}
	}
	dir := vars["PACT_TEST_POSTGRES_DIR"]
	return vars["PACT_TEST_POSTGRES_URL"], func() { exec.Command("./.ci/postgres", "stop", dir).Run() }, nil
}

// storageRows measures rows 10–13 on both backends.
func storageRows(tmp, pact string) ([]row, error) {
	server, stop, err := startPostgres()
	if err != nil {
		return nil, err
	}
	defer stop()
	backends := []benchBackend{sqliteBackend(), postgresBackend(server)}
	defer backends[1].cleanup()
	var rows []row
	for _, step := range []func(string, string, benchBackend) ([]row, error){appendRows, writerRows, searchRows, listRows} {
		for _, b := range backends {
			r, err := step(tmp, pact, b)
			rows = append(rows, r...)
			if err != nil {
				return rows, fmt.Errorf("%s: %w", b.name, err)
			}
		}
	}
	return rows, nil
}

func benchTurns(prefix string, from, n int, text func(i int) string) []store.Turn {
	out := make([]store.Turn, 0, n)
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := from; i < from+n; i++ {
		role := "user"
		if i%2 == 1 {
			role = "agent"
		}
		out = append(out, store.Turn{MessageID: fmt.Sprintf("%s-%07d", prefix, i), Role: role, Text: text(i), At: at.Add(time.Duration(i) * time.Second)})
	}
	return out
}

func benchConv(ctxID string) store.Conversation {
	return store.Conversation{Brand: "https://brand.example/.well-known/agent-card.json", BrandName: "Brand",
		InterfaceURL: "https://p.example/a2a/b1", ContextID: ctxID, LastMessageAt: time.Now()}
}

// appendRows is row 10: a send's turn pair appended to a conversation of
// 100,000 turns vs one of 10, alternately, 300 times each; the medians.
func appendRows(tmp, pact string, b benchBackend) ([]row, error) {
	home := filepath.Join(tmp, "append-"+b.name)
	db, user, err := b.open(home)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	st := db.ForUser(user)
	ctx := context.Background()
	text := func(i int) string {
		return fmt.Sprintf("turn %d: where is my order A-%05d? it was due on Monday", i, i%99991)
	}
	if err := st.AppendTurns(ctx, benchConv("small"), benchTurns("s", 0, 10, text)...); err != nil {
		return nil, err
	}
	for i := 0; i < 100_000; i += 2000 {
		if err := st.AppendTurns(ctx, benchConv("large"), benchTurns("l", i, 2000, text)...); err != nil {
			return nil, err
		}
	}
	var small, large []float64
	for i := 0; i < 300; i++ {
		for _, c := range []struct {
			ctxID string
			into  *[]float64
		}{{"small", &small}, {"large", &large}} {
			start := time.Now()
			if err := st.AppendTurns(ctx, benchConv(c.ctxID), benchTurns("x"+c.ctxID, 200_000+2*i, 2, text)...); err != nil {
				return nil, err
			}
			*c.into = append(*c.into, float64(time.Since(start)))
		}
	}
	a, s := median(large), median(small)
	return []row{{name: "10. turn append, 100,000 vs 10 turns, " + b.name, value: fmt.Sprintf("%.0f µs vs %.0f µs", a/1e3, s/1e3), ratio: a / s, target: 1.25}}, nil
}

// writerRows is row 11: 50 writers at once, each with its own connection
// (as 50 pact processes), each recording and settling 20 sends with their
// turn pairs; every write must be there afterwards.
func writerRows(tmp, pact string, b benchBackend) ([]row, error) {
	const writers, sends = 50, 20
	home := filepath.Join(tmp, "writers-"+b.name)
	first, user, err := b.open(home) // creates and migrates the database
	if err != nil {
		return nil, err
	}
	defer first.Close()
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, writers)
	lat := make([][]float64, writers)
	start := time.Now()
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, _, err := b.open(home)
			if err != nil {
				errs[w] = err
				return
			}
			defer db.Close()
			st := db.ForUser(user)
			for i := 0; i < sends; i++ {
				id := fmt.Sprintf("w%02d-%03d", w, i)
				t0 := time.Now()
				err := st.RecordSend(ctx, store.Send{MessageID: id, Brand: "https://brand.example/.well-known/agent-card.json", InterfaceURL: "https://p.example/a2a/b1",
					ContextID: fmt.Sprint("ctx-", w), Text: "where is my order?", At: time.Now()})
				if err == nil {
					err = st.AppendTurns(ctx, benchConv(fmt.Sprint("ctx-", w)), benchTurns(id, 0, 2, func(int) string { return "where is my order?" })...)
				}
				if err == nil {
					err = st.SetSendState(ctx, id, store.SendDelivered, "")
				}
				if err != nil {
					errs[w] = err
					return
				}
				lat[w] = append(lat[w], float64(time.Since(t0)))
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	st := first.ForUser(user)
	lost := 0
	for w := 0; w < writers; w++ {
		ts, err := st.Turns(ctx, "https://p.example/a2a/b1", fmt.Sprint("ctx-", w))
		if err != nil {
			return nil, err
		}
		lost += 2*sends - len(ts)
	}
	var all []float64
	for _, l := range lat {
		all = append(all, l...)
	}
	sort.Float64s(all)
	p99 := all[len(all)*99/100]
	return []row{
		{name: fmt.Sprintf("11. %d concurrent writers × %d sends, %s", writers, sends, b.name),
			value: fmt.Sprintf("%.2f s, %.0f sends/s, p99 %.0f ms", wall.Seconds(), writers*sends/wall.Seconds(), p99/1e6)},
		{name: "11'. turns lost, " + b.name, value: fmt.Sprintf("%d of %d", lost, writers*sends*2), measured: float64(lost), target: 0.5, strictLT: true},
	}, nil
}

// searchWord is what the search corpus holds, so that the queries find a
// known share of the turns.
var searchVocab = strings.Fields(`order parcel delivery refund invoice status tracking address payment card shipping return
	exchange warranty discount coupon account password email phone basket checkout stock size colour model price tax receipt
	courier depot label box damaged late early monday tuesday wednesday thursday friday weekend morning evening today tomorrow`)

// searchText is turn i of the corpus: words from the vocabulary and an
// order number; one turn in 100 mentions headphones, one in 50 is in
// Japanese, a few hold the order Z-424242 (rare counts them).
func searchText(r *rand.Rand, i int, rare *int) string {
	if i%50 == 7 {
		return fmt.Sprintf("注文番号 A-%05d の配送状況を確認しています。明日お届けの予定です。", r.IntN(100000))
	}
	var sb strings.Builder
	for k := 0; k < 8+r.IntN(8); k++ {
		sb.WriteString(searchVocab[r.IntN(len(searchVocab))])
		sb.WriteByte(' ')
	}
	fmt.Fprintf(&sb, "A-%05d", r.IntN(100000))
	if i%100 == 3 {
		sb.WriteString(" with the wireless headphones")
	}
	if i%142857 == 0 {
		sb.WriteString(" about order Z-424242")
		*rare++
	}
	return sb.String()
}

// searchRows is row 12: `pact conversations search --json` over 1,000,000
// turns (1,000 conversations of 1,000), as processes: a rare order number
// (a handful of turns), a word in 1 % of the turns, a Japanese word in 2 %, a word in
// most turns; the median of five runs each, after one search that brings
// SQLite's index up to date (its time given apart).
func searchRows(tmp, pact string, b benchBackend) ([]row, error) {
	home := filepath.Join(tmp, "search-"+b.name)
	db, user, err := b.open(home)
	if err != nil {
		return nil, err
	}
	st := db.ForUser(user)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(28, 1))
	rare := 0
	seedStart := time.Now()
	for c := 0; c < 1000; c++ {
		if err := st.AppendTurns(ctx, benchConv(fmt.Sprintf("ctx-%04d", c)), benchTurns(fmt.Sprint("c", c), c*1000, 1000, func(i int) string { return searchText(r, i, &rare) })...); err != nil {
			db.Close()
			return nil, err
		}
	}
	seeded := time.Since(seedStart)
	db.Close()
	env := append(os.Environ(), "PACT_HOME="+home, "PACT_KEYRING=file", "NO_COLOR=1")
	env = append(env, b.env(home)...)
	search := func(q string) (timing, int, error) {
		t, err := timedCPU(env, pact, "conversations", "search", q, "--json")
		if err != nil {
			return t, 0, err
		}
		var hits []json.RawMessage
		if err := json.Unmarshal(t.out, &hits); err != nil {
			return t, 0, fmt.Errorf("search %q: %v", q, err)
		}
		return t, len(hits), nil
	}
	warm, _, err := search("warm-up")
	if err != nil {
		return nil, err
	}
	rows := []row{{name: "12. seeding 1,000,000 turns; first search, " + b.name,
		value: fmt.Sprintf("%.0f s; %.1f s", seeded.Seconds(), warm.wall)}}
	for _, q := range []struct {
		what, q string
		hits    int
	}{{"a rare order number", "Z-424242", rare}, {"a word in 1 %", "headphones", 100}, {"Japanese, 2 %", "配送状況", 100}, {"two common words", "order status", 100}} {
		var walls, cpus []float64
		var kb int
		for i := 0; i < 5; i++ {
			t, n, err := search(q.q)
			if err != nil {
				return rows, err
			}
			if n != q.hits {
				return rows, fmt.Errorf("search %q found %d turns, want %d", q.q, n, q.hits)
			}
			walls, cpus = append(walls, t.wall), append(cpus, t.cpu)
			kb = max(kb, t.kb)
		}
		w := median(walls)
		rows = append(rows, row{name: fmt.Sprintf("12'. search, %s, %s (s)", q.what, b.name),
			value:    fmt.Sprintf("%.3f s (CPU %.3f s), %.0f MB RSS", w, median(cpus), float64(kb)*1024/1e6),
			measured: w, target: 0.3, strictLT: true})
	}
	return rows, nil
}

// listRows is row 13: `pact receipts list --json` over 100,000 receipts,
// as a process (wall time and peak RSS).
func listRows(tmp, pact string, b benchBackend) ([]row, error) {
	const n = 100_000
	home := filepath.Join(tmp, "receipts-"+b.name)
	db, user, err := b.open(home)
	if err != nil {
		return nil, err
	}
	err = seedReceiptsInto(db.ForUser(user), n, false)
	db.Close()
	if err != nil {
		return nil, err
	}
	env := append(os.Environ(), "PACT_HOME="+home, "PACT_KEYRING=file", "NO_COLOR=1")
	env = append(env, b.env(home)...)
	var walls, cpus []float64
	var kb int
	for i := 0; i < 3; i++ {
		t, err := timedCPU(env, pact, "receipts", "list", "--json")
		if err != nil {
			return nil, err
		}
		var items []json.RawMessage
		if err := json.Unmarshal(t.out, &items); err != nil || len(items) != n {
			return nil, fmt.Errorf("receipts list --json gave %d items (%v), want %d", len(items), err, n)
		}
		walls, cpus = append(walls, t.wall), append(cpus, t.cpu)
		kb = max(kb, t.kb)
	}
	w, mb := median(walls), float64(kb)*1024/1e6
	return []row{
		{name: "13. receipts list --json, 100,000, " + b.name + " (s)", value: fmt.Sprintf("%.2f s (%.2f s of CPU)", w, median(cpus)), measured: w, target: 1, strictLT: true},
		{name: "13'. its peak RSS, " + b.name + " (MB)", value: fmt.Sprintf("%.1f MB", mb), measured: mb, target: 60, strictLT: true},
	}, nil
}
