package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// openTest opens a new database and returns LocalUser's Store in it.
func openTest(t testing.TB) *userDB {
	t.Helper()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), DBFileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return local(db)
}

// local is LocalUser's Store in db.
func local(db *DB) *userDB { return db.userDB(LocalUser) }

// searchHits is SearchTurns' hits.
func (db *userDB) searchHits(ctx context.Context, text string, limit int) ([]Hit, error) {
	res, err := db.SearchTurns(ctx, text, limit)
	return res.Hits, err
}

func TestOpen_WALForeignKeysBusyTimeoutAndMode(t *testing.T) {
	db := openTest(t)
	c, _ := db.conn(context.Background())
	var mode string
	var fk, busy, version int
	c.QueryRow("PRAGMA journal_mode").Scan(&mode)
	c.QueryRow("PRAGMA foreign_keys").Scan(&fk)
	c.QueryRow("PRAGMA busy_timeout").Scan(&busy)
	c.QueryRow("PRAGMA user_version").Scan(&version)
	if mode != "wal" || fk != 1 || busy != BusyTimeout || version != SchemaVersion {
		t.Fatalf("journal_mode=%s foreign_keys=%d busy_timeout=%d user_version=%d", mode, fk, busy, version)
	}
	if fi, err := os.Stat(db.Path()); err != nil || !isPrivate(fi) {
		t.Fatalf("database file: %v %v", fi, err)
	}
	var fts int
	if err := c.QueryRow("SELECT sqlite_compileoption_used('ENABLE_FTS5')").Scan(&fts); err != nil || fts != 1 {
		t.Fatalf("FTS5 not compiled in: %d %v", fts, err)
	}
}

// seed writes, at schema version v, a little of what that version holds.
func seed(t *testing.T, c *sql.DB, v int) {
	t.Helper()
	if v >= 1 {
		mustExec(t, c, `INSERT INTO conversations (id, brand, interface_url, context_id, last_message_at, last_message_ns) VALUES (1, 'card', 'iface', 'ctx-1', '2026-01-01T00:00:00Z', 1)`)
		mustExec(t, c, `INSERT INTO turns (conversation_id, message_id, role, text, at) VALUES (1, 'm1', 'user', 'where is my parcel', '2026-01-01T00:00:00Z')`)
		mustExec(t, c, `INSERT INTO current_conversations (brand, conversation_id) VALUES ('card', 1)`)
		mustExec(t, c, `INSERT INTO grants (interface_url, brand, data) VALUES ('iface', 'card', '{"grantId":"g1"}')`)
	}
	if v >= 2 {
		mustExec(t, c, `INSERT INTO receipts (id, jws, verified, ts, ts_ns) VALUES ('r1', 'a.b.c', 1, '2026-01-01T00:00:00Z', 1)`)
	}
}

func mustExec(t *testing.T, c *sql.DB, q string) {
	t.Helper()
	if _, err := c.Exec(q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// TestMigrations_FromEveryEarlierVersion builds a database at each earlier
// schema version, with rows, and opens it with this binary: it reaches the
// current version, keeps the rows, and the newer features work on them
// (search finds a turn written before FTS5 existed).
func TestMigrations_FromEveryEarlierVersion(t *testing.T) {
	ctx := context.Background()
	for v := 0; v < SchemaVersion; v++ {
		t.Run(fmt.Sprintf("from_v%d", v), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), DBFileName)
			c, err := sql.Open("sqlite", dsn(path))
			if err != nil {
				t.Fatal(err)
			}
			if err := migrate(ctx, c, v); err != nil {
				t.Fatal(err)
			}
			seed(t, c, v)
			c.Close()
			db, err := Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			sc, _ := db.conn(ctx)
			var got int
			sc.QueryRow("PRAGMA user_version").Scan(&got)
			if got != SchemaVersion {
				t.Fatalf("user_version %d, want %d", got, SchemaVersion)
			}
			if err := db.IntegrityCheck(ctx); err != nil {
				t.Fatal(err)
			}
			// The tables rebuilt by a migration (version 12) kept every
			// reference whole.
			var table string
			if err := sc.QueryRow("SELECT \"table\" FROM pragma_foreign_key_check").Scan(&table); err != sql.ErrNoRows {
				t.Fatalf("foreign_key_check after migrating: a row of %q refers to nothing (%v)", table, err)
			}
			if v >= 1 {
				db := local(db)
				hits, err := db.searchHits(ctx, "parcel", 0)
				if err != nil || len(hits) != 1 || hits[0].Conversation.ContextID != "ctx-1" {
					t.Fatalf("search after migrating: %+v %v", hits, err)
				}
				if g, ok, _ := db.Grant(ctx, "iface"); !ok || !strings.Contains(string(g), "g1") {
					t.Fatal("grant lost")
				}
			}
			if v >= 2 {
				if n, _ := local(db).ReceiptCount(ctx); n != 1 {
					t.Fatalf("%d receipts after migrating, want 1", n)
				}
			}
		})
	}
}

func TestOpen_DamagedFileIsRefusedAndKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), DBFileName)
	garbage := []byte(strings.Repeat("this is not a database ", 400))
	os.WriteFile(path, garbage, 0o600)
	_, err := Open(context.Background(), path)
	if err == nil || !strings.Contains(err.Error(), "damaged") || !strings.Contains(err.Error(), "move it aside") {
		t.Fatalf("opening a damaged file: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != string(garbage) {
		t.Fatal("the damaged file was changed")
	}
}

func TestMigrations_RefuseANewerDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), DBFileName)
	c, _ := sql.Open("sqlite", dsn(path))
	mustExec(t, c, fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion+1))
	c.Close()
	_, err := Open(context.Background(), path)
	if err == nil || !strings.Contains(err.Error(), "upgrade pact") {
		t.Fatalf("opening a newer database: %v", err)
	}
}

func TestAppendTurns_IdempotentOrderedAndCurrent(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	conv := Conversation{Brand: "card", InterfaceURL: "iface", ContextID: "c1", LastMessageAt: time.Unix(10, 0).UTC()}
	v := true
	for i := 0; i < 3; i++ {
		u := Turn{MessageID: fmt.Sprintf("u%d", i), Role: "user", Text: fmt.Sprintf("question %d", i), At: time.Unix(int64(i), 0).UTC()}
		a := Turn{MessageID: fmt.Sprintf("a%d", i), Role: "agent", Text: "answer", At: time.Unix(int64(i), 5).UTC(), ReceiptID: "r", ReceiptVerified: &v}
		if err := db.AppendTurns(ctx, conv, u, a); err != nil {
			t.Fatal(err)
		}
		if err := db.AppendTurns(ctx, conv, u); err != nil { // a retried send
			t.Fatal(err)
		}
	}
	turns, err := db.Turns(ctx, "iface", "c1")
	if err != nil || len(turns) != 6 || turns[0].MessageID != "u0" || turns[5].MessageID != "a2" || !*turns[5].ReceiptVerified || turns[0].ReceiptVerified != nil {
		t.Fatalf("turns = %+v %v", turns, err)
	}
	if !turns[1].At.Equal(time.Unix(0, 5)) {
		t.Fatalf("time not kept: %v", turns[1].At)
	}
	cur, ok, _ := db.CurrentConversation(ctx, "card")
	if !ok || cur.ContextID != "c1" {
		t.Fatal("not current")
	}
	db.SetConversationState(ctx, "iface", "c1", "closed")
	list, _ := db.Conversations(ctx)
	if len(list) != 1 || list[0].State != "closed" || list[0].Current {
		t.Fatalf("list = %+v", list)
	}
	db.ForgetCurrent(ctx, "card")
	if _, ok, _ := db.CurrentConversation(ctx, "card"); ok {
		t.Fatal("still current after ForgetCurrent")
	}
}

func TestSearchTurns_FTS5WordsNotSyntax(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	conv := Conversation{Brand: "card", InterfaceURL: "iface", ContextID: "c1", LastMessageAt: time.Now()}
	db.AppendTurns(ctx, conv,
		Turn{MessageID: "1", Role: "user", Text: "Where is my order A-88213?"},
		Turn{MessageID: "2", Role: "agent", Text: "Your ORDER ships tomorrow"},
		Turn{MessageID: "3", Role: "user", Text: "cancel it"})
	hits, err := db.searchHits(ctx, "order", 0)
	if err != nil || len(hits) != 2 {
		t.Fatalf("order: %+v %v", hits, err)
	}
	if hits, _ := db.searchHits(ctx, "order A-88213", 0); len(hits) != 1 || hits[0].Turn.MessageID != "1" {
		t.Fatalf("two words: %+v", hits)
	}
	// Turns appended after a search are found by the next one (the index
	// catches up), and nothing is indexed twice.
	db.AppendTurns(ctx, conv, Turn{MessageID: "4", Role: "agent", Text: "the order is cancelled"})
	if hits, _ := db.searchHits(ctx, "cancelled", 0); len(hits) != 1 || hits[0].Turn.MessageID != "4" {
		t.Fatalf("a turn appended after a search: %+v", hits)
	}
	if hits, _ := db.searchHits(ctx, "order", 0); len(hits) != 3 {
		t.Fatalf("order after catching up: %d hits, want 3", len(hits))
	}
	for _, q := range []string{`"`, `NOT order`, `order*`, `a AND (`, "  "} {
		if _, err := db.searchHits(ctx, q, 0); err != nil {
			t.Errorf("search %q: %v", q, err)
		}
	}
}

func TestPins_SetAndGet(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	if _, ok, err := db.Pin(ctx, "https://brand.example"); ok || err != nil {
		t.Fatal("a pin before any was set")
	}
	p := Pin{Brand: "https://brand.example", ProviderOrigin: "https://p.example", InterfaceURL: "https://p.example/a2a/1", KeyThumbprint: "tp1", PinnedAt: time.Unix(100, 0).UTC()}
	if err := db.SetPin(ctx, p); err != nil {
		t.Fatal(err)
	}
	p.KeyThumbprint, p.RetiredKeys = "tp2 tp3", "tp1"
	db.SetPin(ctx, p)
	got, ok, err := db.Pin(ctx, p.Brand)
	if err != nil || !ok || got != p {
		t.Fatalf("pin = %+v %v %v, want %+v", got, ok, err, p)
	}
}

func TestReceipts_FiltersFromIndexesAndDamagedRowsListed(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	var rs []Receipt
	for i := 0; i < 10; i++ {
		brand := "https://p.example/a2a/A"
		if i%2 == 1 {
			brand = "https://p.example/a2a/B"
		}
		claims, _ := json.Marshal(map[string]any{"brand": brand, "scopesUsed": []string{fmt.Sprintf("s%d", i%3)}, "actions": []any{}, "ts": fmt.Sprintf("2026-01-01T00:00:%02dZ", i)})
		r := Receipt{ID: fmt.Sprintf("%064d", i), JWS: "x.y.z", Claims: claims, Verified: true}
		r.SetListing(claims, "", "https://card.example/"+brand[len(brand)-1:])
		rs = append(rs, r)
	}
	if err := db.PutReceipts(ctx, rs); err != nil {
		t.Fatal(err)
	}
	count := func(f ReceiptFilter) (ids []string) {
		db.EachReceipt(ctx, f, func(r Receipt) error { ids = append(ids, r.ID[62:]); return nil })
		return ids
	}
	if got := count(ReceiptFilter{Brand: "https://p.example/a2a/B"}); len(got) != 5 {
		t.Errorf("brand: %v", got)
	}
	if got := count(ReceiptFilter{Brand: "https://card.example/A"}); len(got) != 5 {
		t.Errorf("card URL: %v", got)
	}
	if got := count(ReceiptFilter{Scope: "s0"}); len(got) != 4 {
		t.Errorf("scope: %v", got)
	}
	since, _ := time.Parse(time.RFC3339, "2026-01-01T00:00:03Z")
	until, _ := time.Parse(time.RFC3339, "2026-01-01T00:00:05Z")
	if got := count(ReceiptFilter{Since: since, Until: until}); fmt.Sprint(got) != "[03 04 05]" {
		t.Errorf("since/until: %v", got)
	}
	if got := count(ReceiptFilter{Limit: 3}); fmt.Sprint(got) != "[07 08 09]" {
		t.Errorf("limit keeps the most recent, oldest first: %v", got)
	}
	// A damaged row is listed with a problem, and the walk goes on.
	if err := db.Exec(ctx, `UPDATE receipts SET problems = 'not json' WHERE id = ?`, rs[4].ID); err != nil {
		t.Fatal(err)
	}
	n, damaged := 0, 0
	db.EachReceipt(ctx, ReceiptFilter{}, func(r Receipt) error {
		n++
		if len(r.Problems) > 0 {
			damaged++
		}
		return nil
	})
	if n != 10 || damaged != 1 {
		t.Fatalf("listed %d (damaged %d), want 10 (1)", n, damaged)
	}
	// Deleting a receipt removes its index rows (foreign keys).
	db.Exec(ctx, `DELETE FROM receipts WHERE id = ?`, rs[1].ID)
	if got := count(ReceiptFilter{Brand: "https://p.example/a2a/B"}); len(got) != 4 {
		t.Errorf("after delete: %v", got)
	}
}

func TestCards_KeepReplaceForget(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	cc := CachedCard{URL: "u", FinalURL: "f", Body: []byte("{}"), Expires: time.Unix(100, 0), ETag: `"e"`, FetchedAt: time.Unix(1, 0)}
	db.PutCard(ctx, cc)
	cc.Expires, cc.Signature = time.Unix(200, 0), []byte(`{"signed":false}`)
	db.PutCard(ctx, cc)
	got, ok, err := db.Card(ctx, "u")
	if err != nil || !ok || !got.Expires.Equal(time.Unix(200, 0)) || got.ETag != `"e"` || string(got.Body) != "{}" || string(got.Signature) != `{"signed":false}` {
		t.Fatalf("%+v %v %v", got, ok, err)
	}
	db.ForgetCard(ctx, "u")
	if _, ok, _ := db.Card(ctx, "u"); ok {
		t.Fatal("forgotten card still kept")
	}
}

// BenchmarkAppendTurn measures one AppendTurns (a user and an agent turn,
// as one send stores) in a conversation that already has N turns: the
// cost must not grow with N (the target: 10,000 within 1.1x of 100).
func BenchmarkAppendTurn(b *testing.B) {
	for _, n := range []int{100, 10000} {
		b.Run(fmt.Sprintf("turns=%d", n), func(b *testing.B) {
			ctx := context.Background()
			db := openTest(b)
			conv := Conversation{Brand: "card", InterfaceURL: "iface", ContextID: "c1", LastMessageAt: time.Now()}
			batch := make([]Turn, 0, 1000)
			for i := 0; i < n; i += 2 {
				batch = append(batch, Turn{MessageID: fmt.Sprintf("u%d", i), Role: "user", Text: "a question of some length about an order", At: time.Now()},
					Turn{MessageID: fmt.Sprintf("a%d", i), Role: "agent", Text: "an answer of some length about the order and its delivery", At: time.Now()})
				if len(batch) >= 1000 {
					db.AppendTurns(ctx, conv, batch...)
					batch = batch[:0]
				}
			}
			db.AppendTurns(ctx, conv, batch...)
			b.ResetTimer()
			i := 0
			for b.Loop() {
				i++
				if err := db.AppendTurns(ctx, conv,
					Turn{MessageID: fmt.Sprintf("bu%d", i), Role: "user", Text: "a question of some length about an order", At: time.Now()},
					Turn{MessageID: fmt.Sprintf("ba%d", i), Role: "agent", Text: "an answer of some length about the order and its delivery", At: time.Now()}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSendStoreCost is what the database costs one `pact send`
// process: open the profile's database (a new handle, as a new process
// does: connection, pragmas, schema check), read the card cache, the
// grant and the current conversation, and append the two turns. (The
// handles are left open, as a process exit leaves them; run it with a
// small -benchtime.)
func BenchmarkSendStoreCost(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), DBFileName)
	db, err := Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	local(db).PutCard(ctx, CachedCard{URL: "card", FinalURL: "card", Body: []byte(`{"name":"x"}`), Expires: time.Now().Add(time.Hour)})
	local(db).PutGrant(ctx, "iface", "card", []byte(`{"grantId":"g"}`))
	db.Close()
	i := 0
	for b.Loop() {
		i++
		db, err := Open(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		local(db).Card(ctx, "card")
		local(db).Grant(ctx, "iface")
		local(db).CurrentConversation(ctx, "card")
		conv := Conversation{Brand: "card", InterfaceURL: "iface", ContextID: "c1", LastMessageAt: time.Now()}
		if err := local(db).AppendTurns(ctx, conv,
			Turn{MessageID: fmt.Sprintf("u%d", i), Role: "user", Text: "status of A-88213?", At: time.Now()},
			Turn{MessageID: fmt.Sprintf("a%d", i), Role: "agent", Text: "It ships tomorrow.", At: time.Now()}); err != nil {
			b.Fatal(err)
		}
		// Not closed: a process exits without closing (closing the last
		// connection would checkpoint, which a send does not do).
	}
}

// An emptied pact.db (truncate -s 0, a failed copy) of a profile that had
// history is refused like a damaged file, not taken as a new profile.
func TestOpen_EmptiedDatabaseOfAProfileWithHistoryIsRefused(t *testing.T) {
	home := t.TempDir()
	dirs := Dirs{Config: filepath.Join(home, "config"), Data: filepath.Join(home, "data")}
	ctx := context.Background()
	db := ProfileDB(dirs, "p")
	conv := Conversation{Brand: "card", InterfaceURL: "iface", ContextID: "c1", LastMessageAt: time.Now()}
	if err := local(db).AppendTurns(ctx, conv, Turn{MessageID: "m1", Role: "user", Text: "hello", At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	path := dirs.DBPath("p")
	for _, f := range []string{path + "-wal", path + "-shm"} {
		os.Remove(f)
	}
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	db = ProfileDB(dirs, "p")
	_, err := local(db).ReceiptCount(ctx)
	db.Close()
	if err == nil || !strings.Contains(err.Error(), "is empty, but this profile had history") || !strings.Contains(err.Error(), "backup") {
		t.Fatalf("opening an emptied database: %v", err)
	}
	if fi, _ := os.Stat(path); fi.Size() != 0 {
		t.Fatal("the emptied file was written to")
	}
	// The old files kept aside after an import are a sign of history too.
	os.Remove(filepath.Join(dirs.ProfileDataDir("p"), HistoryMarker))
	os.MkdirAll(filepath.Join(dirs.ProfileDataDir("p"), ImportedDir), 0o700)
	db = ProfileDB(dirs, "p")
	_, err = local(db).ReceiptCount(ctx)
	db.Close()
	if err == nil || !strings.Contains(err.Error(), "is empty") {
		t.Fatalf("opening an emptied database beside %s: %v", ImportedDir, err)
	}
	// A new profile's file, empty and with no history, is a new database.
	os.RemoveAll(filepath.Join(dirs.ProfileDataDir("p"), ImportedDir))
	db = ProfileDB(dirs, "p")
	defer db.Close()
	if _, err := local(db).ReceiptCount(ctx); err != nil {
		t.Fatal(err)
	}
}
