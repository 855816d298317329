package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// restoreProfile is a profile with history (two turns, a verified
// receipt, a grant and a pin) and a backup of it; it returns the profile's
// Dirs and the backup file.
func restoreProfile(t *testing.T) (Dirs, string) {
	t.Helper()
	ctx := context.Background()
	home := t.TempDir()
	dirs := Dirs{Config: filepath.Join(home, "config"), Data: filepath.Join(home, "data")}
	db := ProfileDB(dirs, "p")
	defer db.Close()
	appendN(t, db, 0, 2)
	if err := local(db).PutReceipt(ctx, Receipt{ID: "r-good", JWS: "a.b.c", Claims: []byte(`{}`), JWK: []byte(`{}`), JWKThumbprint: "tp", Expect: []byte(`{}`), Verified: true}); err != nil {
		t.Fatal(err)
	}
	if err := local(db).PutGrant(ctx, "https://p.example/a2a/b1", "https://b.example/.well-known/agent-card.json", []byte(`{"jwksUri":"https://p.example/a2a/b1/oauth/jwks.json"}`)); err != nil {
		t.Fatal(err)
	}
	if err := local(db).SetPin(ctx, Pin{Brand: "https://b.example/.well-known/agent-card.json", ProviderOrigin: "https://p.example", InterfaceURL: "https://p.example/a2a/b1", KeyThumbprint: "key-1"}); err != nil {
		t.Fatal(err)
	}
	backup := filepath.Join(home, "backup.db")
	if _, err := db.Backup(ctx, backup, false); err != nil {
		t.Fatal(err)
	}
	return dirs, backup
}

// tamper runs SQL on a backup file as an attacker would, with SQLite
// alone, and leaves it a single file.
func tamper(t *testing.T, file string, stmts ...string) {
	t.Helper()
	c, err := sql.Open("sqlite", file)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, s := range stmts {
		if _, err := c.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// schemaNames is the (type, name) of every object of the database at path.
func schemaNames(t *testing.T, path string) []string {
	t.Helper()
	c, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rows, err := c.Query(`SELECT type || ' ' || name FROM sqlite_schema ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		rows.Scan(&s)
		out = append(out, s)
	}
	return out
}

// Issue 31 item 6: triggers, views, tables and statistics that a backup
// file holds and pact does not make stay behind: the restored database
// has exactly pact's schema, pact's later writes mean what they say (a
// rejected receipt stays rejected, a pin keeps its key), and the restore
// names what it left out.
func TestIssue31_6_RestoreLeavesBehindWhatPactDoesNotMake(t *testing.T) {
	ctx := context.Background()
	dirs, backup := restoreProfile(t)
	tamper(t, backup,
		`CREATE TRIGGER evil_receipt AFTER INSERT ON receipts BEGIN
			UPDATE receipts SET verified = 1, problems = '[]', jwk = '{}', jwk_thumbprint = 'tp' WHERE id = new.id; END`,
		`CREATE TRIGGER evil_pin AFTER UPDATE ON pins BEGIN UPDATE pins SET key_thumbprint = 'ATTACKER' WHERE brand = new.brand; END`,
		`CREATE TRIGGER slow_turns BEFORE INSERT ON turns BEGIN
			SELECT count(*) FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000000) SELECT i FROM n); END`,
		`CREATE VIEW evil_view AS SELECT * FROM receipts`,
		`CREATE TABLE evil_table (x)`, `INSERT INTO evil_table VALUES (randomblob(1000))`,
		`CREATE INDEX evil_index ON turns (text)`,
		`ANALYZE`,
	)
	res, err := Restore(ctx, dirs, "p", backup, RestoreChecks{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Turns != 2 || res.Receipts != 1 || res.Grants != 1 || res.Pins != 1 {
		t.Fatalf("restored %+v", res.Contents)
	}
	for _, want := range []string{"trigger evil_receipt", "trigger evil_pin", "trigger slow_turns", "view evil_view", "table evil_table", "index evil_index", "table sqlite_stat1"} {
		if !slices.ContainsFunc(res.LeftOut, func(s string) bool { return strings.HasPrefix(s, want+",") }) {
			t.Errorf("LeftOut does not name %q: %q", want, res.LeftOut)
		}
	}
	// Exactly pact's schema, as a new profile's database has it.
	fresh := Dirs{Config: filepath.Join(t.TempDir(), "c"), Data: filepath.Join(t.TempDir(), "d")}
	fdb := ProfileDB(fresh, "p")
	appendN(t, fdb, 0, 1)
	fdb.Close()
	if got, want := schemaNames(t, dirs.DBPath("p")), schemaNames(t, fresh.DBPath("p")); !slices.Equal(got, want) {
		t.Fatalf("the restored database's schema:\n%q\nwant pact's:\n%q", got, want)
	}
	// pact's later writes mean what they say.
	db := ProfileDB(dirs, "p")
	defer db.Close()
	if err := local(db).PutReceipt(ctx, Receipt{ID: "r-bad", JWS: "x.y.z", Claims: []byte(`{}`), Expect: []byte(`{}`), Problems: []string{"signature"}}); err != nil {
		t.Fatal(err)
	}
	c, _ := db.conn(ctx)
	if r, err := local(db).receipt(ctx, c, "r-bad"); err != nil || r.Verified {
		t.Fatalf("a rejected receipt saved after the restore reads verified=%v (%v)", r.Verified, err)
	}
	pin := Pin{Brand: "https://b.example/.well-known/agent-card.json", ProviderOrigin: "https://p.example", InterfaceURL: "https://p.example/a2a/b1", KeyThumbprint: "key-2"}
	if err := local(db).SetPin(ctx, pin); err != nil {
		t.Fatal(err)
	}
	if p, _, _ := local(db).Pin(ctx, pin.Brand); p.KeyThumbprint != "key-2" {
		t.Fatalf("the pin saved after the restore reads %q", p.KeyThumbprint)
	}
	start := time.Now()
	appendN(t, db, 10, 1)
	if time.Since(start) > 30*time.Second {
		t.Fatal("the file's trigger ran on a turn append")
	}
}

// A table pact copies must be the one pact makes: one defined otherwise
// (here with a computed column, which runs the file's expression on each
// read, or a view in its place) is refused and nothing changes.
func TestIssue31_6_RestoreRefusesAPactTableMadeOtherwise(t *testing.T) {
	for name, stmts := range map[string][]string{
		"computed column": {`ALTER TABLE turns ADD COLUMN shout TEXT GENERATED ALWAYS AS (upper(text)) VIRTUAL`},
		"view":            {`PRAGMA foreign_keys = OFF`, `DROP TABLE card_changes`, `CREATE VIEW card_changes AS SELECT 'b' AS brand, '' AS pin, '' AS changes, '' AS seen_at`},
	} {
		t.Run(name, func(t *testing.T) {
			dirs, backup := restoreProfile(t)
			tamper(t, backup, stmts...)
			before, _ := os.ReadFile(dirs.DBPath("p"))
			_, err := Restore(context.Background(), dirs, "p", backup, RestoreChecks{})
			if err == nil || !strings.Contains(err.Error(), "not the one pact makes") {
				t.Fatalf("restore of a backup whose table is made otherwise: %v", err)
			}
			if after, _ := os.ReadFile(dirs.DBPath("p")); !bytes.Equal(before, after) {
				t.Fatal("the refused restore changed pact.db")
			}
		})
	}
}

// Each row is checked again: a value of a type pact never writes (text
// where a number is read) refuses the file; grants and pins go through the
// checks login and pinning make (RestoreChecks), and those that fail are
// left out, named.
func TestIssue31_6_RestoreChecksEachRow(t *testing.T) {
	ctx := context.Background()
	dirs, backup := restoreProfile(t)
	bad := backup + ".bad"
	b, _ := os.ReadFile(backup)
	os.WriteFile(bad, b, 0o600)
	tamper(t, bad, `UPDATE conversations SET last_message_ns = 'soon'`)
	if _, err := Restore(ctx, dirs, "p", bad, RestoreChecks{}); err == nil || !strings.Contains(err.Error(), "1 row of table conversations holds values of a type pact never writes") {
		t.Fatalf("restore of a row with text for a number: %v", err)
	}
	tamper(t, backup, `UPDATE grants SET data = '{"jwksUri":"https://stranger.example/jwks.json"}'`, `UPDATE pins SET provider_origin = 'https://elsewhere.example'`)
	errStranger := errors.New("its jwks_uri is on another origin")
	res, err := Restore(ctx, dirs, "p", backup, RestoreChecks{
		Grant: func(iface, brand string, data []byte) error {
			if strings.Contains(string(data), "stranger") {
				return errStranger
			}
			return nil
		},
		Pin: func(p Pin) error {
			if !strings.HasPrefix(p.InterfaceURL, p.ProviderOrigin+"/") {
				return errors.New("its Provider is not its interface's origin")
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Grants != 0 || res.Pins != 0 || res.Turns != 2 {
		t.Fatalf("restored %+v", res.Contents)
	}
	want := []string{
		"the grant for https://p.example/a2a/b1: its jwks_uri is on another origin; log in again",
		"the pin of https://b.example/.well-known/agent-card.json: its Provider is not its interface's origin; the Brand's card is accepted again on first contact",
	}
	if !slices.Equal(res.LeftOut, want) {
		t.Fatalf("LeftOut %q\nwant %q", res.LeftOut, want)
	}
}

// A backup whose pages disagree with each other (a row changed where its
// index still says otherwise) fails its integrity check and is refused,
// though every row can still be read and copied.
func TestIssue31_6_RestoreRunsTheIntegrityCheck(t *testing.T) {
	dirs, backup := restoreProfile(t)
	c, err := sql.Open("sqlite", backup)
	if err != nil {
		t.Fatal(err)
	}
	var root, pageSize int64
	c.QueryRow(`SELECT rootpage FROM sqlite_schema WHERE name = 'turns'`).Scan(&root)
	c.QueryRow(`PRAGMA page_size`).Scan(&pageSize)
	c.Close()
	b, err := os.ReadFile(backup)
	if err != nil || root == 0 {
		t.Fatal(root, err)
	}
	// The message id in the turns table's own page (its index keeps it too).
	page := b[(root-1)*pageSize : root*pageSize]
	i := bytes.Index(page, []byte("m1"))
	if i < 0 {
		t.Fatal("no message id in the turns page")
	}
	page[i+1] = '7'
	if binary.BigEndian.Uint32(b[28:32]) == 0 {
		t.Fatal("not an SQLite file")
	}
	os.WriteFile(backup, b, 0o600)
	_, err = Restore(context.Background(), dirs, "p", backup, RestoreChecks{})
	if err == nil || !strings.Contains(err.Error(), "fails its integrity check") {
		t.Fatalf("restore of a backup whose index disagrees with its table: %v", err)
	}
}

// Every table pact's migrations make is either copied by a restore or
// said why not: a table added by a new migration cannot be forgotten.
func TestRestore_EveryTableIsCopiedOrSaidWhyNot(t *testing.T) {
	fresh, err := pactSchema(context.Background(), SchemaVersion)
	if err != nil {
		t.Fatal(err)
	}
	for name, o := range fresh {
		if o.Type != "table" || strings.HasPrefix(name, "turns_fts_") {
			continue
		}
		if !slices.Contains(restoreOrder, name) && notRestored[name] == "" {
			t.Errorf("table %s is neither in restoreOrder nor in notRestored", name)
		}
	}
}

// A backup written by an earlier release (any schema version from 3 on)
// is rebuilt at its version and migrated: its rows come back.
func TestRestore_BackupsOfEveryEarlierVersion(t *testing.T) {
	ctx := context.Background()
	for v := 3; v <= SchemaVersion; v++ {
		file := filepath.Join(t.TempDir(), "old.db")
		c, err := sql.Open("sqlite", file)
		if err != nil {
			t.Fatal(err)
		}
		if err := migrate(ctx, c, v); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{
			`INSERT INTO conversations (id, brand, interface_url, context_id, last_message_at, last_message_ns) VALUES (1, 'card', 'iface', 'c1', '2026-01-01T00:00:00Z', 1)`,
			`INSERT INTO turns (conversation_id, message_id, role, text, at) VALUES (1, 'm1', 'user', 'hello there', '2026-01-01T00:00:00Z')`,
			`INSERT INTO pins (brand, provider_origin, interface_url, key_thumbprint, pinned_at) VALUES ('card', 'o', 'iface', '', '2026-01-01T00:00:00Z')`,
		} {
			if _, err := c.Exec(q); err != nil {
				t.Fatalf("version %d: %s: %v", v, q, err)
			}
		}
		c.Close()
		dirs := Dirs{Config: filepath.Join(t.TempDir(), "c"), Data: filepath.Join(t.TempDir(), "d")}
		res, err := Restore(ctx, dirs, "p", file, RestoreChecks{})
		if err != nil {
			t.Fatalf("restoring a version %d backup: %v", v, err)
		}
		if res.SchemaVersion != SchemaVersion || res.Turns != 1 || res.Pins != 1 || len(res.LeftOut) != 0 {
			t.Fatalf("version %d: restored %+v, left out %q", v, res.Contents, res.LeftOut)
		}
		db := ProfileDB(dirs, "p")
		found, err := local(db).SearchTurns(ctx, "hello", 10)
		db.Close()
		if err != nil || len(found.Hits) != 1 {
			t.Fatalf("version %d: searching the restored turns: %v, %v", v, found, err)
		}
	}
}

// Issue 31 item 6, review: a backup's verdicts are not pact's. Every
// receipt comes back restored, not verified, whatever the file says (a
// row marked verified may hold a stranger's signature beside the Brand's
// own jwks_uri); the turns that carried them read not verified; a turn
// whose receipt the file does not hold reads not verified. The restore
// counts what it set aside. Archiving pact's own verdict (what an online
// `pact receipts verify` does) ends it.
func TestIssue31_6_RestoreSetsTheFilesVerdictsAside(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	dirs := Dirs{Config: filepath.Join(home, "config"), Data: filepath.Join(home, "data")}
	db := ProfileDB(dirs, "p")
	v := true
	conv := Conversation{Brand: "card", InterfaceURL: "iface", ContextID: "c1", LastMessageAt: time.Now()}
	good := Receipt{ID: "r-good", JWS: "a.b.c", Claims: []byte(`{}`), JWK: []byte(`{}`), JWKThumbprint: "tp", Expect: []byte(`{}`), Verified: true}
	if err := local(db).PutReceipt(ctx, good); err != nil {
		t.Fatal(err)
	}
	if err := local(db).AppendTurns(ctx, conv,
		Turn{MessageID: "m1", Role: "user", Text: "refund A-1", At: time.Now()},
		Turn{MessageID: "r1", Role: "agent", Text: "refunded", At: time.Now(), ReceiptID: "r-good", ReceiptVerified: &v, Answers: "m1"},
		Turn{MessageID: "m2", Role: "user", Text: "refund A-2", At: time.Now()},
		Turn{MessageID: "r2", Role: "agent", Text: "refunded too", At: time.Now(), ReceiptID: "r-absent", ReceiptVerified: &v, Answers: "m2"}); err != nil {
		t.Fatal(err)
	}
	backup := filepath.Join(home, "backup.db")
	if _, err := db.Backup(ctx, backup, false); err != nil {
		t.Fatal(err)
	}
	db.Close()
	res, err := Restore(ctx, dirs, "p", backup, RestoreChecks{})
	if err != nil {
		t.Fatal(err)
	}
	if res.NotRechecked != 1 || len(res.LeftOut) != 1 || !strings.Contains(res.LeftOut[0], "1 turn: the backup does not hold those receipts") {
		t.Fatalf("restore: %d set aside, left out %q; want 1, and the turn whose receipt is not in the file", res.NotRechecked, res.LeftOut)
	}
	db = ProfileDB(dirs, "p")
	defer db.Close()
	receipt := func() Receipt {
		t.Helper()
		rs, err := local(db).ReceiptsByPrefix(ctx, "r-good", 1)
		if err != nil || len(rs) != 1 {
			t.Fatalf("the restored receipt: %v %v", rs, err)
		}
		return rs[0]
	}
	if r := receipt(); r.Verified || !r.Restored || len(r.Problems) != 0 {
		t.Fatalf("restored receipt: verified %v, restored %v, problems %q; want restored, not verified", r.Verified, r.Restored, r.Problems)
	}
	var listed []Receipt
	local(db).EachReceipt(ctx, ReceiptFilter{}, func(r Receipt) error { listed = append(listed, r); return nil })
	if len(listed) != 1 || !listed[0].Restored || listed[0].Verified {
		t.Fatalf("listed: %+v", listed)
	}
	turnVerdicts := func() string {
		t.Helper()
		turns, err := local(db).Turns(ctx, "iface", "c1")
		if err != nil || len(turns) != 4 {
			t.Fatalf("turns: %+v %v", turns, err)
		}
		var out []string
		for _, tu := range turns {
			if tu.Role == "agent" {
				out = append(out, fmt.Sprintf("%s:%v/%v", tu.ReceiptID, *tu.ReceiptVerified, tu.ReceiptRestored))
			}
		}
		return strings.Join(out, " ")
	}
	if got := turnVerdicts(); got != "r-good:false/true r-absent:false/false" {
		t.Fatalf("turn verdicts after the restore: %s", got)
	}
	// pact's own verdict (an online check) ends the restored state.
	if err := local(db).PutReceipt(ctx, good); err != nil {
		t.Fatal(err)
	}
	if r := receipt(); !r.Verified || r.Restored {
		t.Fatalf("checked again: verified %v, restored %v", r.Verified, r.Restored)
	}
	if got := turnVerdicts(); got != "r-good:true/false r-absent:false/false" {
		t.Fatalf("turn verdicts after the check: %s", got)
	}
}
