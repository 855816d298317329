package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"testing"
)

// Issue 28: a profile's database as the last release (schema version 11)
// left it, every table holding rows, opens with this release and migrates
// in place: every row is LocalUser's and reads back through the storage
// interface as it was written, another User sees none of it, and the
// notes that lived in meta are notes.
func TestIssue28_ProfileOfTheLastReleaseMigratesInPlace(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), DBFileName)
	c, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		t.Fatal(err)
	}
	if err := migrate(ctx, c, 11); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO conversations (id, brand, brand_name, interface_url, context_id, last_message_at, last_message_ns, state)
			VALUES (1, 'card', 'Example Co.', 'iface', 'ctx-1', '2026-11-01T10:00:00Z', 1, 'open'), (2, 'card', 'Example Co.', 'iface', 'ctx-0', '2026-10-01T10:00:00Z', 0, 'closed')`,
		`INSERT INTO current_conversations (brand, conversation_id) VALUES ('card', 1)`,
		`INSERT INTO turns (id, conversation_id, message_id, role, text, at, receipt_id, receipt_verified)
			VALUES (1, 1, 'm1', 'user', 'where is my parcel 漢字', '2026-11-01T10:00:00Z', '', NULL),
			       (2, 1, 'r1', 'agent', 'it ships today', '2026-11-01T10:00:01Z', 'rcpt', 1)`,
		`INSERT INTO turn_parts (turn_id, seq, kind, name, media_type, data, sha256, size) VALUES
			(2, 0, 'data', '', 'application/json', '{"total":12345678901234567890.10}', '', 0),
			(2, 1, 'file', 'invoice.pdf', 'application/pdf', '', 'abc123', 3)`,
		`INSERT INTO blobs (sha256, data) VALUES ('abc123', x'010203')`,
		`INSERT INTO sends (message_id, brand, interface_url, context_id, text, at, state) VALUES
			('m2', 'card', 'iface', 'ctx-1', 'and my refund?', '2026-11-01T10:01:00Z', 'sending')`,
		`INSERT INTO drafts (brand, draft, queue, at) VALUES ('card', 'half a', '["queued"]', '2026-11-01T10:02:00Z')`,
		`INSERT INTO receipts (id, jws, claims, verified, brand, grant_id, user, scopes_used, actions, ts, ts_ns, card_url, brand_name, replays)
			VALUES ('rcpt', 'a.b.c', '{"brand":"iface"}', 1, 'iface', 'g1', 'jane', '["orders:read"]', '[]', '2026-11-01T10:00:01Z', 1, 'card', 'Example Co.', 1)`,
		`INSERT INTO receipt_brands (brand, receipt_id) VALUES ('iface', 'rcpt'), ('card', 'rcpt')`,
		`INSERT INTO receipt_scopes (scope, receipt_id) VALUES ('orders:read', 'rcpt')`,
		`INSERT INTO receipt_turns (receipt_id, turn) VALUES ('rcpt', 'iface m1'), ('rcpt', 'iface m0')`,
		`INSERT INTO grants (interface_url, brand, data) VALUES ('iface', 'card', '{"grantId":"g1"}')`,
		`INSERT INTO cards (url, final_url, body, expires_ns, fetched_ns, signature) VALUES ('card', 'card', '{"name":"x"}', 5, 1, '{"signed":false}')`,
		`INSERT INTO pins (brand, provider_origin, interface_url, key_thumbprint, retired_keys, pinned_at) VALUES ('card', 'https://p', 'iface', 'tp2', 'tp1', '2026-10-01T00:00:00Z')`,
		`INSERT INTO card_changes (brand, pin, changes, seen_at) VALUES ('card', '{"brand":"card","keyThumbprint":"tp3"}', '["signed by another key"]', '2026-11-01T00:00:00Z')`,
		`INSERT INTO meta (key, value) VALUES ('note:nostream:card', 'iface')`,
	} {
		mustExec(t, c, q)
	}
	c.Close()
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	u := local(db)
	cur, ok, err := u.CurrentConversation(ctx, "card")
	if err != nil || !ok || cur.ContextID != "ctx-1" || cur.BrandName != "Example Co." {
		t.Fatalf("current conversation: %+v %v %v", cur, ok, err)
	}
	if list, _ := u.Conversations(ctx); len(list) != 2 || list[1].State != "closed" {
		t.Fatalf("conversations: %+v", list)
	}
	turns, err := u.Turns(ctx, "iface", "ctx-1")
	if err != nil || len(turns) != 2 || turns[1].ReceiptVerified == nil || !*turns[1].ReceiptVerified || len(turns[1].Parts) != 2 ||
		turns[1].Parts[0].JSON != `{"total":12345678901234567890.10}` {
		t.Fatalf("turns: %+v %v", turns, err)
	}
	if data, ok, _ := u.Blob(ctx, "abc123"); !ok || string(data) != "\x01\x02\x03" {
		t.Fatalf("blob: %q %v", data, ok)
	}
	if hits, _ := u.searchHits(ctx, "漢字", 0); len(hits) != 1 {
		t.Fatalf("search: %+v", hits)
	}
	if un, _ := u.Unanswered(ctx, "card"); len(un) != 1 || un[0].MessageID != "m2" {
		t.Fatalf("unanswered: %+v", un)
	}
	if d, _ := u.LoadDraft(ctx, "card"); d.Input != "half a" || !slices.Equal(d.Queue, []string{"queued"}) {
		t.Fatalf("draft: %+v", d)
	}
	var rs []Receipt
	u.EachReceipt(ctx, ReceiptFilter{Brand: "card", Scope: "orders:read"}, func(r Receipt) error { rs = append(rs, r); return nil })
	if len(rs) != 1 || rs[0].Replays != 1 || !rs[0].Verified || rs[0].GrantID != "g1" {
		t.Fatalf("receipts: %+v", rs)
	}
	if others, err := u.PutTurnReceipt(ctx, Receipt{ID: "rcpt", JWS: "a.b.c", Verified: true}, "iface m5"); err != nil || others != 2 {
		t.Fatalf("the turns a receipt came with, kept: %d %v", others, err)
	}
	if g, ok, _ := u.Grant(ctx, "iface"); !ok || string(g) != `{"grantId":"g1"}` {
		t.Fatalf("grant: %s", g)
	}
	if cc, ok, _ := u.Card(ctx, "card"); !ok || string(cc.Body) != `{"name":"x"}` || string(cc.Signature) != `{"signed":false}` {
		t.Fatalf("card: %+v", cc)
	}
	if p, ok, _ := u.Pin(ctx, "card"); !ok || p.KeyThumbprint != "tp2" || p.RetiredKeys != "tp1" {
		t.Fatalf("pin: %+v", p)
	}
	if next, ch, ok, _ := u.CardChange(ctx, "card"); !ok || next.KeyThumbprint != "tp3" || len(ch) != 1 {
		t.Fatalf("card change: %+v %v %v", next, ch, ok)
	}
	if v, ok, _ := u.Note(ctx, "nostream:card"); !ok || v != "iface" {
		t.Fatalf("note: %q %v", v, ok)
	}
	other := db.userDB("someone-else")
	if list, _ := other.Conversations(ctx); len(list) != 0 {
		t.Fatalf("another User sees the profile's conversations: %+v", list)
	}
	if _, ok, _ := other.Grant(ctx, "iface"); ok {
		t.Fatal("another User sees the profile's grant")
	}
}
