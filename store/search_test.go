package store

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func searchDB(t *testing.T, texts ...string) *userDB {
	t.Helper()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), DBFileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	conv := Conversation{Brand: "card", InterfaceURL: "iface", ContextID: "c1", LastMessageAt: time.Now()}
	for i, text := range texts {
		if err := local(db).AppendTurns(context.Background(), conv, Turn{MessageID: fmt.Sprint("m", i), Role: "user", Text: text, At: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	return local(db)
}

func found(t *testing.T, db *userDB, q string) []string {
	t.Helper()
	hits, err := db.searchHits(context.Background(), q, 0)
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	var out []string
	for _, h := range hits {
		out = append(out, h.Turn.Text)
	}
	return out
}

// Words of scripts written without spaces are found inside longer runs
// (trigrams), as are one- and two-character words (LIKE); every word must
// be there; the newest turn comes first; query syntax is never read.
func TestSearch_FindsSubstringsInEveryScriptNewestFirst(t *testing.T) {
	db := searchDB(t, "漢字テスト", "สวัสดีครับ ผมต้องการคืนสินค้า", "Where is my PARCEL?", "parcel 42 arrived", `a "quoted" OR NOT *`)
	for q, want := range map[string]string{
		"テスト":       "[漢字テスト]",
		"漢字":        "[漢字テスト]", // two characters: LIKE
		"字":         "[漢字テスト]",
		"คืนสินค้า": "[สวัสดีครับ ผมต้องการคืนสินค้า]",
		"parcel":    "[parcel 42 arrived Where is my PARCEL?]", // newest first, any case
		"parcel 42": "[parcel 42 arrived]",
		"arc":       "[parcel 42 arrived Where is my PARCEL?]",
		`"quoted"`:  `[a "quoted" OR NOT *]`,
		"OR NOT":    `[a "quoted" OR NOT *]`,
		"%":         "[]",
		"nothing":   "[]",
	} {
		if got := fmt.Sprint(found(t, db, q)); got != want {
			t.Errorf("search %q: %s, want %s", q, got, want)
		}
	}
}

// A database of the version before trigrams is migrated in place: its
// turns are found by substring after the migration.
func TestSearch_MigratedInPlaceToTrigrams(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), DBFileName)
	c, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		t.Fatal(err)
	}
	before := slices.IndexFunc(Migrations, func(m string) bool { return strings.Contains(m, "tokenize = 'trigram'") })
	if before < 0 {
		t.Fatal("no trigram migration")
	}
	if err := migrate(ctx, c, before); err != nil {
		t.Fatal(err)
	}
	mustExec(t, c, `INSERT INTO conversations (brand, interface_url, context_id, last_message_at, last_message_ns) VALUES ('card', 'iface', 'c1', '', 0)`)
	mustExec(t, c, `INSERT INTO turns (conversation_id, message_id, role, text, at) VALUES (1, 'm1', 'user', '漢字テスト', '')`)
	c.Close()
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := fmt.Sprint(found(t, local(db), "テスト")); got != "[漢字テスト]" {
		t.Fatalf("after migrating: %s", got)
	}
}

// The migration that adds replays counts, from the turns already stored,
// the turns past the first that carried the same receipt.
func TestMigration_ReplaysCountedFromStoredTurns(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), DBFileName)
	c, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		t.Fatal(err)
	}
	before := slices.IndexFunc(Migrations, func(m string) bool { return strings.Contains(m, "CREATE TABLE receipt_turns") })
	if err := migrate(ctx, c, before); err != nil {
		t.Fatal(err)
	}
	rid := strings.Repeat("ab", 32)
	mustExec(t, c, `INSERT INTO conversations (brand, interface_url, context_id, last_message_at, last_message_ns) VALUES ('card', 'iface', 'c1', '', 0), ('card', 'iface', 'c2', '', 0)`)
	mustExec(t, c, `INSERT INTO turns (conversation_id, message_id, role, text, at, receipt_id) VALUES
		(1, 'u1', 'user', 'a', '', ''), (1, 'a1', 'agent', 'b', '', '`+rid+`'),
		(1, 'u2', 'user', 'c', '', ''), (1, 'a2', 'agent', 'd', '', '`+rid+`'),
		(2, 'u3', 'user', 'e', '', ''), (2, 'a3', 'agent', 'f', '', '`+rid+`')`)
	mustExec(t, c, `INSERT INTO receipts (id, jws, verified) VALUES ('`+rid+`', 'x.y.z', 1)`)
	c.Close()
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var got []Receipt
	local(db).EachReceipt(ctx, ReceiptFilter{}, func(r Receipt) error { got = append(got, r); return nil })
	if len(got) != 1 || got[0].Replays != 2 {
		t.Fatalf("after migrating: %+v", got)
	}
	// The first turn archiving it again is that same turn: no replay more.
	if others, err := local(db).PutTurnReceipt(ctx, Receipt{ID: rid, JWS: "x.y.z", Verified: true}, "iface u1"); err != nil || others != 2 {
		t.Fatalf("the first turn again: %d others, %v", others, err)
	}
}
