package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pact-cli/pact/seal"
	"github.com/pact-cli/pact/secrets"
	"github.com/pact-cli/pact/store"
)

// PartsKeptAndFileBytesOnce: every part of a turn is kept with it, in
// order; a file's bytes once by their SHA-256 (up to store.MaxBlob), a
// bigger file as its size and a note; a file by URL as its URL.
func PartsKeptAndFileBytesOnce(t *testing.T, h Harness) {
	ctx := context.Background()
	b, _ := open(t, h)
	db := b.ForUser(Alice)
	pdf := []byte("%PDF-1.7 invoice \x00\xff bytes")
	big := bytes.Repeat([]byte("x"), store.MaxBlob+1)
	parts := []store.Part{
		{Kind: store.PartData, JSON: `{"order":"A-88213","total":42}`},
		{Kind: store.PartFile, Name: "invoice.pdf", MediaType: "application/pdf", Data: pdf},
		{Kind: store.PartFile, Name: "link.pdf", URL: "https://b.example/x.pdf"},
		{Kind: store.PartFile, Name: "huge.bin", Data: big},
	}
	must(t, db.AppendTurns(ctx, conv("ctx-1", 0),
		store.Turn{MessageID: "m-1", Role: "user", Text: "hi", At: t0},
		store.Turn{MessageID: "r-1", Role: "agent", Text: "here", At: t0, Parts: parts},
		store.Turn{MessageID: "r-2", Role: "agent", Text: "again", At: t0, Parts: parts[1:2]}))
	got, err := db.Turns(ctx, iface, "ctx-1")
	must(t, err)
	if len(got) != 3 || len(got[0].Parts) != 0 || len(got[1].Parts) != 4 || len(got[2].Parts) != 1 {
		t.Fatalf("turns %+v", got)
	}
	p := got[1].Parts
	if p[0].Kind != store.PartData || p[0].JSON != parts[0].JSON {
		t.Errorf("data part %+v", p[0])
	}
	if p[1].Kind != store.PartFile || p[1].Name != "invoice.pdf" || p[1].MediaType != "application/pdf" || p[1].Size != int64(len(pdf)) || len(p[1].SHA256) != 64 || p[1].Data != nil {
		t.Errorf("file part %+v", p[1])
	}
	if p[2].URL != "https://b.example/x.pdf" || p[2].SHA256 != "" {
		t.Errorf("URL part %+v", p[2])
	}
	if p[3].Size != int64(len(big)) || !strings.Contains(p[3].Note, "not kept") {
		t.Errorf("a file too big to keep: %+v", p[3])
	}
	data, ok, err := db.Blob(ctx, p[1].SHA256)
	if err != nil || !ok || !bytes.Equal(data, pdf) {
		t.Fatalf("Blob: %q %v %v", data, ok, err)
	}
	if _, ok, _ := db.Blob(ctx, p[3].SHA256); ok {
		t.Error("the bytes of a file bigger than MaxBlob were kept")
	}
	if got[2].Parts[0].SHA256 != p[1].SHA256 {
		t.Error("the same file in two turns has two digests")
	}
}

// DataPartsKeepTheirNumbersExactly: a data part's JSON comes back byte for
// byte: numbers beyond float64 (large integers, long decimals, exponents),
// key order, spacing and escapes, never re-encoded.
func DataPartsKeepTheirNumbersExactly(t *testing.T, h Harness) {
	ctx := context.Background()
	b, _ := open(t, h)
	db := b.ForUser(Alice)
	docs := []string{
		`{"amount":12345678901234567890.123456789012345678901234567890,"id":9007199254740993}`,
		`{"z":1.10,"a":1e400,"m":-0.0,"n":1E-7}`,
		`[1.000, 2.50, {"b" : 2 , "a":1}]`,
		`{"text":"caf\u00e9 \"quoted\" \\ \ud83d\ude00","dup":1,"dup":2}`,
	}
	var parts []store.Part
	for _, d := range docs {
		parts = append(parts, store.Part{Kind: store.PartData, MediaType: "application/json", JSON: d})
	}
	must(t, db.AppendTurns(ctx, conv("c-json", 0), store.Turn{MessageID: "r", Role: "agent", Text: "data", At: t0, Parts: parts}))
	got, err := db.Turns(ctx, iface, "c-json")
	must(t, err)
	if len(got) != 1 || len(got[0].Parts) != len(docs) {
		t.Fatalf("turns %+v", got)
	}
	for i, d := range docs {
		if got[0].Parts[i].JSON != d {
			t.Errorf("data part %d came back as\n  %s\nwant\n  %s", i, got[0].Parts[i].JSON, d)
		}
	}
}

// SendOnRecordBeforeItLeavesIdempotentByMessageID: a message is on record
// (sending) before it leaves; a second attempt under the same messageId
// replaces the record rather than adding one (PACT §4.3); delivered and
// failed are recorded; only sends still sending are unanswered, oldest
// first, per Brand.
func SendOnRecordBeforeItLeavesIdempotentByMessageID(t *testing.T, h Harness) {
	ctx := context.Background()
	b, _ := open(t, h)
	db := b.ForUser(Alice)
	if st, err := db.SendState(ctx, "m1"); err != nil || st != "" {
		t.Fatalf("a send never recorded: %q %v", st, err)
	}
	s := store.Send{MessageID: "m1", Brand: card, InterfaceURL: iface, Text: "where is my parcel?", At: t0}
	must(t, db.RecordSend(ctx, s))
	if st, _ := db.SendState(ctx, "m1"); st != store.SendSending {
		t.Fatalf("state before the answer: %q, want sending", st)
	}
	// The second attempt, once the conversation is known.
	s.ContextID, s.Text = "ctx-1", "where is my parcel?!"
	must(t, db.RecordSend(ctx, s))
	must(t, db.RecordSend(ctx, store.Send{MessageID: "m2", Brand: card, InterfaceURL: iface, ContextID: "ctx-1", Text: "hello", At: t0.Add(time.Second)}))
	must(t, db.RecordSend(ctx, store.Send{MessageID: "m3", Brand: card2, InterfaceURL: iface, Text: "other brand", At: t0}))
	un, err := db.Unanswered(ctx, card)
	must(t, err)
	if len(un) != 2 || un[0].MessageID != "m1" || un[0].ContextID != "ctx-1" || un[0].Text != "where is my parcel?!" || !un[0].At.Equal(t0) || un[1].MessageID != "m2" {
		t.Fatalf("unanswered: %+v", un)
	}
	must(t, db.SetSendState(ctx, "m1", store.SendDelivered, ""))
	must(t, db.SetSendState(ctx, "m2", store.SendFailed, "refused: 400"))
	must(t, db.SetSendState(ctx, "never-sent", store.SendDelivered, ""))
	if st, _ := db.SendState(ctx, "m2"); st != store.SendFailed {
		t.Fatalf("state after a refusal: %q", st)
	}
	if un, _ := db.Unanswered(ctx, card); len(un) != 0 {
		t.Fatalf("unanswered after delivery and failure: %+v", un)
	}
	if un, _ := db.Unanswered(ctx, card2); len(un) != 1 || un[0].MessageID != "m3" {
		t.Fatalf("unanswered of the other Brand: %+v", un)
	}
}

// SendAbandonedOnlyWhileSending: a send the User replaced or removed
// while it was still sending is abandoned on record, with why, and no
// longer unanswered; a delivered send, an unknown one, or another User's
// is left as it is (issue 31 item 2).
func SendAbandonedOnlyWhileSending(t *testing.T, h Harness) {
	ctx := context.Background()
	b, _ := open(t, h)
	db := b.ForUser(Alice)
	must(t, db.RecordSend(ctx, store.Send{MessageID: "m1", Brand: card, InterfaceURL: iface, Text: "first", At: t0}))
	must(t, db.RecordSend(ctx, store.Send{MessageID: "m2", Brand: card, InterfaceURL: iface, Text: "second", At: t0.Add(time.Second)}))
	must(t, db.SetSendState(ctx, "m2", store.SendDelivered, ""))
	if ok, err := b.ForUser(Bob).AbandonSend(ctx, "m1", "not Bob's"); err != nil || ok {
		t.Fatalf("another User abandoned Alice's send: %v %v", ok, err)
	}
	if ok, err := db.AbandonSend(ctx, "m2", "too late"); err != nil || ok {
		t.Fatalf("a delivered send was abandoned: %v %v", ok, err)
	}
	if ok, err := db.AbandonSend(ctx, "never-sent", "why"); err != nil || ok {
		t.Fatalf("an unknown send was abandoned: %v %v", ok, err)
	}
	if ok, err := db.AbandonSend(ctx, "m1", "replaced by the User"); err != nil || !ok {
		t.Fatalf("abandoning a sending send: %v %v", ok, err)
	}
	if st, _ := db.SendState(ctx, "m1"); st != store.SendAbandoned {
		t.Fatalf("state after abandoning: %q", st)
	}
	if st, _ := db.SendState(ctx, "m2"); st != store.SendDelivered {
		t.Fatalf("the delivered send became %q", st)
	}
	if un, _ := db.Unanswered(ctx, card); len(un) != 0 {
		t.Fatalf("unanswered after abandoning: %+v", un)
	}
}

// DraftsKeptAndCleared: the chat's draft and queue per Brand, replaced by
// the next save, removed by an empty one.
func DraftsKeptAndCleared(t *testing.T, h Harness) {
	ctx := context.Background()
	b, _ := open(t, h)
	db := b.ForUser(Alice)
	if d, err := db.LoadDraft(ctx, card); err != nil || d.Input != "" || len(d.Queue) != 0 {
		t.Fatalf("no draft yet: %+v %v", d, err)
	}
	must(t, db.SaveDraft(ctx, card, store.Draft{Input: "half a thou", Queue: []string{"first", "second\nline"}}))
	must(t, db.SaveDraft(ctx, card, store.Draft{Input: "half a thought", Queue: []string{"first", "second\nline"}}))
	d, err := db.LoadDraft(ctx, card)
	if err != nil || d.Input != "half a thought" || !slices.Equal(d.Queue, []string{"first", "second\nline"}) {
		t.Fatalf("draft: %+v %v", d, err)
	}
	if d, _ := db.LoadDraft(ctx, card2); d.Input != "" {
		t.Fatalf("another Brand's draft: %+v", d)
	}
	must(t, db.SaveDraft(ctx, card, store.Draft{}))
	if d, _ := db.LoadDraft(ctx, card); d.Input != "" || len(d.Queue) != 0 {
		t.Fatalf("draft after clearing: %+v", d)
	}
}

// receipt is a receipt row as the receipts package fills it.
func receipt(i int, brand string, verified bool) store.Receipt {
	claims, _ := json.Marshal(map[string]any{"brand": brand, "grantId": "g1", "user": "jane",
		"scopesUsed": []string{fmt.Sprintf("s%d", i%3)}, "actions": []any{map[string]string{"tool": "list_orders"}},
		"ts": fmt.Sprintf("2026-01-01T00:00:%02dZ", i)})
	r := store.Receipt{ID: fmt.Sprintf("%064d", i), JWS: fmt.Sprintf("eyJ.%d.sig", i), Claims: claims, Verified: verified,
		JWK: []byte(`{"kty":"EC"}`), JWKThumbprint: "tp", Expect: []byte(`{"card":"c"}`), VerifiedAt: t0,
		CardURL: "https://card.example/" + brand[len(brand)-1:], BrandName: "Brand " + brand[len(brand)-1:]}
	if !verified {
		r.Problems = []string{"signature: not verified"}
	}
	r.SetListing(claims, "", r.CardURL)
	return r
}

// ReceiptsFilteredVerifiedNeverDowngraded: the archive lists receipts
// oldest first, by Brand (claims, card URL, host), scope, time, verified,
// the most recent N; full rows on demand and by id prefix; a verified row
// is never replaced by a rejected one.
func ReceiptsFilteredVerifiedNeverDowngraded(t *testing.T, h Harness) {
	ctx := context.Background()
	b, _ := open(t, h)
	db := b.ForUser(Alice)
	var rs []store.Receipt
	for i := 0; i < 10; i++ {
		brand := "https://p.example/a2a/A"
		if i%2 == 1 {
			brand = "https://p.example/a2a/B"
		}
		rs = append(rs, receipt(i, brand, i != 9))
	}
	must(t, db.PutReceipts(ctx, rs[:8]))
	must(t, db.PutReceipt(ctx, rs[8]))
	must(t, db.PutReceipt(ctx, rs[9]))
	list := func(f store.ReceiptFilter) string {
		var ids []string
		must(t, db.EachReceipt(ctx, f, func(r store.Receipt) error { ids = append(ids, r.ID[62:]); return nil }))
		return strings.Join(ids, " ")
	}
	since, _ := time.Parse(time.RFC3339, "2026-01-01T00:00:03Z")
	until, _ := time.Parse(time.RFC3339, "2026-01-01T00:00:05Z")
	no, yes := false, true
	for _, c := range []struct {
		what string
		f    store.ReceiptFilter
		want string
	}{
		{"all", store.ReceiptFilter{}, "00 01 02 03 04 05 06 07 08 09"},
		{"brand", store.ReceiptFilter{Brand: "https://p.example/a2a/B"}, "01 03 05 07 09"},
		{"card URL", store.ReceiptFilter{Brand: "https://card.example/A"}, "00 02 04 06 08"},
		{"brands", store.ReceiptFilter{Brand: "https://none.example", Brands: []string{"https://card.example/B"}}, "01 03 05 07 09"},
		{"host", store.ReceiptFilter{BrandHost: "p.example"}, "00 01 02 03 04 05 06 07 08 09"},
		{"another host", store.ReceiptFilter{BrandHost: "p.exampl"}, ""},
		{"scope", store.ReceiptFilter{Scope: "s0"}, "00 03 06 09"},
		{"since/until", store.ReceiptFilter{Since: since, Until: until}, "03 04 05"},
		{"limit", store.ReceiptFilter{Limit: 3}, "07 08 09"},
		{"brand and limit", store.ReceiptFilter{Brand: "https://p.example/a2a/A", Limit: 2}, "06 08"},
		{"rejected", store.ReceiptFilter{Verified: &no}, "09"},
		{"verified scope", store.ReceiptFilter{Verified: &yes, Scope: "s0"}, "00 03 06"},
	} {
		if got := list(c.f); got != c.want {
			t.Errorf("%s: listed %q, want %q", c.what, got, c.want)
		}
	}
	// The listing columns always; the full row when asked.
	var first store.Receipt
	must(t, db.EachReceipt(ctx, store.ReceiptFilter{Limit: 1, Full: true}, func(r store.Receipt) error { first = r; return nil }))
	if first.ID != rs[9].ID || first.JWS != rs[9].JWS || string(first.Claims) != string(rs[9].Claims) || string(first.JWK) != `{"kty":"EC"}` ||
		first.JWKThumbprint != "tp" || string(first.Expect) != `{"card":"c"}` || !first.VerifiedAt.Equal(t0) || first.Verified ||
		!slices.Equal(first.Problems, rs[9].Problems) || first.CardURL != rs[9].CardURL || first.BrandName != "Brand B" ||
		first.Brand != "https://p.example/a2a/B" || first.GrantID != "g1" || first.User != "jane" || first.TS != "2026-01-01T00:00:09Z" ||
		string(first.ScopesUsed) != `["s0"]` || string(first.Actions) != `[{"tool":"list_orders"}]` {
		t.Errorf("full row:\n  %+v\nwant\n  %+v", first, rs[9])
	}
	// A verified receipt stays verified when put again as rejected.
	bad := rs[0]
	bad.Verified, bad.Problems = false, []string{"key not found"}
	must(t, db.PutReceipt(ctx, bad))
	got, err := db.ReceiptsByPrefix(ctx, rs[0].ID[:60], 5)
	must(t, err)
	if len(got) != 5 || got[0].ID != rs[0].ID || !got[0].Verified || len(got[0].Problems) != 0 || got[0].JWS != rs[0].JWS {
		t.Fatalf("by prefix: %+v", got)
	}
	if got, _ := db.ReceiptsByPrefix(ctx, rs[3].ID, 5); len(got) != 1 || got[0].ID != rs[3].ID {
		t.Fatalf("by its whole id: %+v", got)
	}
	if got, _ := db.ReceiptsByPrefix(ctx, "ff", 5); len(got) != 0 {
		t.Fatalf("no such prefix: %+v", got)
	}
	// A rejected one becomes verified when verified again.
	ok := rs[9]
	ok.Verified, ok.Problems = true, nil
	must(t, db.PutReceipt(ctx, ok))
	if got := list(store.ReceiptFilter{Verified: &no}); got != "" {
		t.Fatalf("rejected after verifying again: %q", got)
	}
	if n, err := db.ReceiptCount(ctx); err != nil || n != 10 {
		t.Fatalf("count %d %v", n, err)
	}
	// The walk stops at fn's error and returns it.
	stop := fmt.Errorf("enough")
	n := 0
	if err := db.EachReceipt(ctx, store.ReceiptFilter{}, func(store.Receipt) error { n++; return stop }); err != stop || n != 1 {
		t.Fatalf("stopping the walk: %d, %v", n, err)
	}
}

// ReceiptReplayDetected: a receipt that comes with a second turn is a
// replay (it proves nothing about that turn); the same turn again (a
// resend under its messageId) is not; the archive counts the replays.
func ReceiptReplayDetected(t *testing.T, h Harness) {
	ctx := context.Background()
	b, _ := open(t, h)
	db := b.ForUser(Alice)
	r := receipt(1, "https://p.example/a2a/A", true)
	for _, c := range []struct {
		turn   string
		others int
	}{{iface + " m1", 0}, {iface + " m1", 0}, {iface + " m2", 1}, {iface + " m3", 2}, {iface + " m2", 2}} {
		others, err := db.PutTurnReceipt(ctx, r, c.turn)
		if err != nil || others != c.others {
			t.Fatalf("PutTurnReceipt(%s): %d other turns, %v; want %d", c.turn, others, err, c.others)
		}
	}
	var got store.Receipt
	must(t, db.EachReceipt(ctx, store.ReceiptFilter{}, func(r store.Receipt) error { got = r; return nil }))
	if got.ID != r.ID || got.Replays != 2 || !got.Verified {
		t.Fatalf("listed: replays %d, verified %v; want 2, true", got.Replays, got.Verified)
	}
	if full, _ := db.ReceiptsByPrefix(ctx, r.ID, 1); len(full) != 1 || full[0].Replays != 2 {
		t.Fatalf("full row: %+v", full)
	}
}

// GrantsKeptReplacedDeleted: one JSON document per interface URL, listed
// by brand then interface URL.
func GrantsKeptReplacedDeleted(t *testing.T, h Harness) {
	ctx := context.Background()
	b, _ := open(t, h)
	db := b.ForUser(Alice)
	if _, ok, err := db.Grant(ctx, iface); ok || err != nil {
		t.Fatalf("a grant before any: %v %v", ok, err)
	}
	must(t, db.PutGrant(ctx, "https://p.example/a2a/z", card2, []byte(`{"grantId":"g0"}`)))
	must(t, db.PutGrant(ctx, iface, card, []byte(`{"grantId":"g1"}`)))
	must(t, db.PutGrant(ctx, iface, card, []byte(`{"grantId":"g2","scopes":["orders:read"]}`)))
	doc, ok, err := db.Grant(ctx, iface)
	if err != nil || !ok || string(doc) != `{"grantId":"g2","scopes":["orders:read"]}` {
		t.Fatalf("grant: %s %v %v", doc, ok, err)
	}
	docs, err := db.Grants(ctx)
	must(t, err)
	if len(docs) != 2 || string(docs[0]) != `{"grantId":"g2","scopes":["orders:read"]}` || string(docs[1]) != `{"grantId":"g0"}` {
		t.Fatalf("grants: %q", docs)
	}
	must(t, db.DeleteGrant(ctx, iface))
	must(t, db.DeleteGrant(ctx, iface))
	if _, ok, _ := db.Grant(ctx, iface); ok {
		t.Fatal("deleted grant still kept")
	}
}

// SecretsKeptSealedNeverPlain: a sealed secret is kept as given (its key
// version beside its ciphertext), replaced, listed by name, deleted; the
// database holds the ciphertext only.
func SecretsKeptSealedNeverPlain(t *testing.T, h Harness) {
	ctx := context.Background()
	b, addr := open(t, h)
	db := b.ForUser(Alice)
	if _, ok, err := db.Secret(ctx, "default/delegation/x/access"); ok || err != nil {
		t.Fatalf("a secret before any: %v %v", ok, err)
	}
	const plain = "eyJhbGciOiJFUzI1NiJ9.access-token-plaintext.sig"
	sealed := func(version string) store.SealedSecret {
		var ct []byte
		for i := range len(plain) + 28 {
			ct = append(ct, byte(i*7+len(version))) // stands for a ciphertext: bytes, NUL included
		}
		return store.SealedSecret{KeyVersion: version, Ciphertext: ct}
	}
	must(t, db.PutSecret(ctx, "default/delegation/x/access", sealed("1")))
	must(t, db.PutSecret(ctx, "default/delegation/x/refresh", sealed("1")))
	must(t, db.PutSecret(ctx, "default/delegation/x/access", sealed("2")))
	got, ok, err := db.Secret(ctx, "default/delegation/x/access")
	if err != nil || !ok || got.KeyVersion != "2" || !bytes.Equal(got.Ciphertext, sealed("2").Ciphertext) {
		t.Fatalf("secret: %+v %v %v", got, ok, err)
	}
	names, err := db.SecretNames(ctx)
	if err != nil || !slices.Equal(names, []string{"default/delegation/x/access", "default/delegation/x/refresh"}) {
		t.Fatalf("names: %v %v", names, err)
	}
	must(t, db.DeleteSecret(ctx, "default/delegation/x/refresh"))
	must(t, db.DeleteSecret(ctx, "default/delegation/x/refresh"))
	if _, ok, _ := db.Secret(ctx, "default/delegation/x/refresh"); ok {
		t.Fatal("deleted secret still kept")
	}
	if h.Contains(t, addr, plain) {
		t.Fatal("the plaintext is in the database")
	}
	if !h.Contains(t, addr, "default/delegation/x/access") {
		t.Fatal("Contains finds nothing: the check above proves nothing")
	}
}

// CardsAndNotesKeptReplacedForgotten: a card response kept whole (its
// body's bytes, validators, times, signature check), replaced by the next,
// forgotten; notes replaced.
func CardsAndNotesKeptReplacedForgotten(t *testing.T, h Harness) {
	ctx := context.Background()
	b, _ := open(t, h)
	db := b.ForUser(Alice)
	cc := store.CachedCard{URL: card, FinalURL: "https://p.example/card", Body: []byte("{\"name\":\"x\"}\n\x00"), Expires: time.Unix(100, 5),
		ETag: `"e"`, LastModified: "Wed, 21 Oct 2026 07:28:00 GMT", FetchedAt: time.Unix(1, 7)}
	must(t, db.PutCard(ctx, cc))
	cc.Expires, cc.Signature = time.Unix(200, 9), []byte(`{"signed":false}`)
	must(t, db.PutCard(ctx, cc))
	got, ok, err := db.Card(ctx, card)
	if err != nil || !ok || got.URL != card || got.FinalURL != cc.FinalURL || !bytes.Equal(got.Body, cc.Body) || !got.Expires.Equal(cc.Expires) ||
		got.ETag != `"e"` || got.LastModified != cc.LastModified || !got.FetchedAt.Equal(cc.FetchedAt) || string(got.Signature) != `{"signed":false}` {
		t.Fatalf("card: %+v %v %v", got, ok, err)
	}
	must(t, db.ForgetCard(ctx, card))
	must(t, db.ForgetCard(ctx, card))
	if _, ok, _ := db.Card(ctx, card); ok {
		t.Fatal("forgotten card still kept")
	}
	if _, ok, err := db.Note(ctx, "nostream:"+card); ok || err != nil {
		t.Fatalf("a note before any: %v %v", ok, err)
	}
	must(t, db.SetNote(ctx, "nostream:"+card, "https://p.example/a2a/1"))
	must(t, db.SetNote(ctx, "nostream:"+card, iface))
	if v, ok, err := db.Note(ctx, "nostream:"+card); err != nil || !ok || v != iface {
		t.Fatalf("note: %q %v %v", v, ok, err)
	}
}

// OneCardState: a changed card, once noted, is what every command sees
// until the User accepts a card (SetPin); noting it again keeps it; pins
// are kept as given.
func OneCardState(t *testing.T, h Harness) {
	ctx := context.Background()
	b, _ := open(t, h)
	db := b.ForUser(Alice)
	if _, ok, err := db.Pin(ctx, card); ok || err != nil {
		t.Fatalf("a pin before any: %v %v", ok, err)
	}
	p := store.Pin{Brand: card, ProviderOrigin: "https://p.example", InterfaceURL: iface, KeyThumbprint: "tp1", PinnedAt: time.Unix(100, 0).UTC()}
	must(t, db.SetPin(ctx, p))
	if _, _, seen, err := db.CardChange(ctx, card); seen || err != nil {
		t.Fatalf("a change before any was seen: %v %v", seen, err)
	}
	next := p
	next.KeyThumbprint, next.RetiredKeys = "tp2", "tp1"
	must(t, db.NoteCardChange(ctx, card, next, []string{"signed by another key"}))
	must(t, db.NoteCardChange(ctx, card, next, []string{"signed by another key"}))
	got, changes, seen, err := db.CardChange(ctx, card)
	if err != nil || !seen || got != next || !slices.Equal(changes, []string{"signed by another key"}) {
		t.Fatalf("change seen: %+v %v %v %v", got, changes, seen, err)
	}
	if _, _, seen, _ := db.CardChange(ctx, card2); seen {
		t.Fatal("a change seen for another Brand")
	}
	// Still pending for every command until a card is accepted.
	if pin, ok, _ := db.Pin(ctx, card); !ok || pin != p {
		t.Fatalf("noting a change changed the pin: %+v", pin)
	}
	must(t, db.SetPin(ctx, next))
	if _, _, seen, _ := db.CardChange(ctx, card); seen {
		t.Fatal("the change is still pending after the User accepted a card")
	}
	if pin, ok, _ := db.Pin(ctx, card); !ok || pin != next {
		t.Fatalf("pin = %+v, want %+v", pin, next)
	}
	// A zero time is now.
	must(t, db.SetPin(ctx, store.Pin{Brand: card2, ProviderOrigin: "https://o.example"}))
	if pin, _, _ := db.Pin(ctx, card2); time.Since(pin.PinnedAt) > time.Hour {
		t.Fatalf("pinned at %v", pin.PinnedAt)
	}
}

// TokensSealedNeverPlaintext: a User's delegation tokens kept in the
// database through seal.Vault (AES-256-GCM, the data key in a key store)
// come back as they were, are nowhere in the database as plaintext, open
// for their User only (a ciphertext copied to another User does not), and
// survive a rotation of the data key.
func TokensSealedNeverPlaintext(t *testing.T, h Harness) {
	ctx := context.Background()
	b, addr := open(t, h)
	keys, err := secrets.Open("file", t.TempDir(), 0)
	must(t, err)
	k := &seal.Keyring{Secrets: keys, Prefix: "default/"}
	alice := seal.Vault{Store: b.ForUser(Alice), Sealer: k}
	bob := seal.Vault{Store: b.ForUser(Bob), Sealer: k}
	const access, refresh = "eyJhbGciOiJFUzI1NiJ9.plaintext-access-token.sig", "plaintext-refresh-token-4471"
	must(t, alice.Set("default/delegation/ab/access", access))
	must(t, alice.Set("default/delegation/ab/refresh", refresh))
	if got, err := alice.Get("default/delegation/ab/access"); err != nil || got != access {
		t.Fatalf("access token: %q %v", got, err)
	}
	for _, p := range []string{access, refresh, "plaintext"} {
		if h.Contains(t, addr, p) {
			t.Fatalf("%q is in the database as plaintext", p)
		}
	}
	if _, err := bob.Get("default/delegation/ab/access"); !errors.Is(err, secrets.ErrNotFound) {
		t.Fatalf("another User's token: %v", err)
	}
	s, _, err := b.ForUser(Alice).Secret(ctx, "default/delegation/ab/access")
	must(t, err)
	must(t, b.ForUser(Bob).PutSecret(ctx, "default/delegation/ab/access", s))
	if got, err := bob.Get("default/delegation/ab/access"); !errors.Is(err, seal.ErrOpen) {
		t.Fatalf("a ciphertext copied to another User opened: %q %v", got, err)
	}
	_, err = k.Rotate()
	must(t, err)
	n, err := alice.Reseal(ctx)
	if err != nil || n != 2 {
		t.Fatalf("reseal: %d %v", n, err)
	}
	if s, _, _ := b.ForUser(Alice).Secret(ctx, "default/delegation/ab/refresh"); s.KeyVersion != "2" {
		t.Fatalf("after rotation: sealed by version %q", s.KeyVersion)
	}
	if got, err := alice.Get("default/delegation/ab/refresh"); err != nil || got != refresh {
		t.Fatalf("refresh token after rotation: %q %v", got, err)
	}
	must(t, alice.Delete("default/delegation/ab/refresh"))
	if _, err := alice.Get("default/delegation/ab/refresh"); !errors.Is(err, secrets.ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
}
