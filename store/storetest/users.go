package storetest

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/pact-cli/pact/store"
)

// UsersNeverSeeEachOthersRows: every read of the interface, tried as
// another User, returns none of the first User's rows; the same keys
// (interface URL and contextId, messageId, receipt id, card URL, Brand,
// file digest, secret name) written by both stay two Users' separate rows;
// one User's writes (state, forget, delete) leave the other's rows alone.
func UsersNeverSeeEachOthersRows(t *testing.T, h Harness) {
	ctx := context.Background()
	b, _ := open(t, h)
	alice, bob := b.ForUser(Alice), b.ForUser(Bob)
	if alice.User() != Alice || bob.User() != Bob {
		t.Fatalf("User(): %q %q", alice.User(), bob.User())
	}
	file := []byte("alice's invoice")
	write := func(db store.Store, text string) {
		t.Helper()
		must(t, db.AppendTurns(ctx, conv("ctx-1", 0),
			store.Turn{MessageID: "m1", Role: "user", Text: text, At: t0},
			store.Turn{MessageID: "r1", Role: "agent", Text: text + " reply", At: t0, Parts: []store.Part{
				{Kind: store.PartData, JSON: `{"owner":"` + db.User() + `"}`},
				{Kind: store.PartFile, Name: "invoice.pdf", Data: file}}}))
		must(t, db.RecordSend(ctx, store.Send{MessageID: "s1", Brand: card, InterfaceURL: iface, ContextID: "ctx-1", Text: text, At: t0}))
		must(t, db.SaveDraft(ctx, card, store.Draft{Input: text}))
		r := receipt(1, "https://p.example/a2a/A", true)
		r.JWS = text
		_, err := db.PutTurnReceipt(ctx, r, iface+" m1")
		must(t, err)
		must(t, db.PutGrant(ctx, iface, card, []byte(`{"owner":"`+db.User()+`"}`)))
		must(t, db.PutSecret(ctx, "tok", store.SealedSecret{KeyVersion: db.User(), Ciphertext: []byte(db.User())}))
		must(t, db.PutCard(ctx, store.CachedCard{URL: card, FinalURL: card, Body: []byte(db.User()), Expires: t0, FetchedAt: t0}))
		must(t, db.SetNote(ctx, "nostream:"+card, db.User()))
		must(t, db.SetPin(ctx, store.Pin{Brand: card, ProviderOrigin: "https://p.example", InterfaceURL: iface, KeyThumbprint: db.User(), PinnedAt: t0}))
		must(t, db.NoteCardChange(ctx, card, store.Pin{Brand: card, KeyThumbprint: db.User() + "-next"}, []string{db.User()}))
	}
	write(alice, "alice asks about parcel 77")

	// Bob, before writing anything, sees nothing of Alice's.
	empty := func(what string, n int, err error) {
		t.Helper()
		if err != nil || n != 0 {
			t.Errorf("%s, read as another User: %d rows (%v); want none", what, n, err)
		}
	}
	cur, ok, err := bob.CurrentConversation(ctx, card)
	empty("CurrentConversation", btoi(ok)+len(cur.ContextID), err)
	f, ok, err := bob.FindConversation(ctx, iface, "ctx-1")
	empty("FindConversation", btoi(ok)+len(f.ContextID), err)
	cs, err := bob.FindContext(ctx, "ctx")
	empty("FindContext", len(cs), err)
	cs, err = bob.Conversations(ctx)
	empty("Conversations", len(cs), err)
	ts, err := bob.Turns(ctx, iface, "ctx-1")
	empty("Turns", len(ts), err)
	res, err := bob.SearchTurns(ctx, "parcel", 0)
	empty("SearchTurns", len(res.Hits), err)
	res, err = bob.SearchTurns(ctx, "77", 0)
	empty("SearchTurns (a short word)", len(res.Hits), err)
	aliceTurns, err := alice.Turns(ctx, iface, "ctx-1")
	must(t, err)
	sha := aliceTurns[1].Parts[1].SHA256
	data, ok, err := bob.Blob(ctx, sha)
	empty("Blob", btoi(ok)+len(data), err)
	st, err := bob.SendState(ctx, "s1")
	empty("SendState", len(st), err)
	un, err := bob.Unanswered(ctx, card)
	empty("Unanswered", len(un), err)
	d, err := bob.LoadDraft(ctx, card)
	empty("LoadDraft", len(d.Input)+len(d.Queue), err)
	n := 0
	err = bob.EachReceipt(ctx, store.ReceiptFilter{}, func(store.Receipt) error { n++; return nil })
	empty("EachReceipt", n, err)
	for _, rf := range []store.ReceiptFilter{{Brand: "https://p.example/a2a/A"}, {Brand: "x", Brands: []string{"https://card.example/A"}},
		{BrandHost: "p.example"}, {Scope: "s1"}, {Limit: 5}, {Full: true}} {
		n = 0
		err = bob.EachReceipt(ctx, rf, func(store.Receipt) error { n++; return nil })
		empty("EachReceipt with a filter", n, err)
	}
	rs, err := bob.ReceiptsByPrefix(ctx, "0", 10)
	empty("ReceiptsByPrefix", len(rs), err)
	rn, err := bob.ReceiptCount(ctx)
	empty("ReceiptCount", rn, err)
	g, ok, err := bob.Grant(ctx, iface)
	empty("Grant", btoi(ok)+len(g), err)
	gs, err := bob.Grants(ctx)
	empty("Grants", len(gs), err)
	sec, ok, err := bob.Secret(ctx, "tok")
	empty("Secret", btoi(ok)+len(sec.Ciphertext), err)
	names, err := bob.SecretNames(ctx)
	empty("SecretNames", len(names), err)
	cc, ok, err := bob.Card(ctx, card)
	empty("Card", btoi(ok)+len(cc.Body), err)
	note, ok, err := bob.Note(ctx, "nostream:"+card)
	empty("Note", btoi(ok)+len(note), err)
	pin, ok, err := bob.Pin(ctx, card)
	empty("Pin", btoi(ok)+len(pin.KeyThumbprint), err)
	_, changes, ok, err := bob.CardChange(ctx, card)
	empty("CardChange", btoi(ok)+len(changes), err)

	// Bob writes under the same keys: two Users' rows, each sees their own.
	write(bob, "bob asks about parcel 88")
	for _, db := range []store.Store{alice, bob} {
		u := db.User()
		if ts, _ := db.Turns(ctx, iface, "ctx-1"); len(ts) != 2 || ts[1].Parts[0].JSON != `{"owner":"`+u+`"}` {
			t.Errorf("%s's turns: %+v", u, ts)
		}
		if data, ok, _ := db.Blob(ctx, sha); !ok || !bytes.Equal(data, file) {
			t.Errorf("%s's file: %q %v", u, data, ok)
		}
		if res, _ := db.SearchTurns(ctx, "parcel", 0); len(res.Hits) != 2 {
			t.Errorf("%s's search: %+v", u, res.Hits)
		}
		if g, _, _ := db.Grant(ctx, iface); string(g) != `{"owner":"`+u+`"}` {
			t.Errorf("%s's grant: %s", u, g)
		}
		if s, _, _ := db.Secret(ctx, "tok"); s.KeyVersion != u {
			t.Errorf("%s's secret: %+v", u, s)
		}
		if c, _, _ := db.Card(ctx, card); string(c.Body) != u {
			t.Errorf("%s's card: %q", u, c.Body)
		}
		if v, _, _ := db.Note(ctx, "nostream:"+card); v != u {
			t.Errorf("%s's note: %q", u, v)
		}
		if p, _, _ := db.Pin(ctx, card); p.KeyThumbprint != u {
			t.Errorf("%s's pin: %+v", u, p)
		}
		if next, _, ok, _ := db.CardChange(ctx, card); !ok || next.KeyThumbprint != u+"-next" {
			t.Errorf("%s's card change: %+v", u, next)
		}
		var rs []store.Receipt
		db.EachReceipt(ctx, store.ReceiptFilter{Full: true}, func(r store.Receipt) error { rs = append(rs, r); return nil })
		if len(rs) != 1 || rs[0].Replays != 0 || !strings.HasPrefix(rs[0].JWS, u[len("user-"):]) {
			t.Errorf("%s's receipts: %+v", u, rs)
		}
	}
	// Another User's receipt with the same id, for the same turn, is no
	// replay: replays are counted within one User's archive.
	if others, err := bob.PutTurnReceipt(ctx, receipt(1, "https://p.example/a2a/A", true), iface+" m1"); err != nil || others != 0 {
		t.Errorf("Bob's receipt counted Alice's turns: %d %v", others, err)
	}
	sameReceiptOtherListing(t, alice, bob)
	// One User's writes leave the other's rows alone.
	must(t, bob.SetConversationState(ctx, iface, "ctx-1", "closed"))
	must(t, bob.ForgetCurrent(ctx, card))
	must(t, bob.SetSendState(ctx, "s1", store.SendDelivered, ""))
	must(t, bob.SaveDraft(ctx, card, store.Draft{}))
	must(t, bob.DeleteGrant(ctx, iface))
	must(t, bob.DeleteSecret(ctx, "tok"))
	must(t, bob.ForgetCard(ctx, card))
	must(t, bob.SetPin(ctx, store.Pin{Brand: card, KeyThumbprint: "bob-accepted", PinnedAt: t0}))
	if c, ok, _ := alice.CurrentConversation(ctx, card); !ok || c.State != "open" {
		t.Errorf("Alice's conversation after Bob's writes: %+v %v", c, ok)
	}
	if st, _ := alice.SendState(ctx, "s1"); st != store.SendSending {
		t.Errorf("Alice's send after Bob's: %q", st)
	}
	if d, _ := alice.LoadDraft(ctx, card); d.Input == "" {
		t.Error("Alice's draft went with Bob's")
	}
	if _, ok, _ := alice.Grant(ctx, iface); !ok {
		t.Error("Alice's grant went with Bob's")
	}
	if _, ok, _ := alice.Secret(ctx, "tok"); !ok {
		t.Error("Alice's secret went with Bob's")
	}
	if _, ok, _ := alice.Card(ctx, card); !ok {
		t.Error("Alice's card went with Bob's")
	}
	if _, _, ok, _ := alice.CardChange(ctx, card); !ok {
		t.Error("Bob accepting a card ended Alice's pending change")
	}
	if p, _, _ := alice.Pin(ctx, card); p.KeyThumbprint != Alice {
		t.Errorf("Alice's pin after Bob's: %+v", p)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// sameReceiptOtherListing: one receipt (one id) in two Users' archives,
// listed under other Brands and scopes and come with other turns: each
// User's Brand and scope index rows, and replay counts, are their own. A
// Brand that hands Bob a receipt Alice has is no replay in Bob's archive,
// and Alice archiving hers again removes none of Bob's index rows.
func sameReceiptOtherListing(t *testing.T, alice, bob store.Store) {
	t.Helper()
	ctx := context.Background()
	ra := receipt(2, "https://p.example/a2a/A", true) // scope s2, card https://card.example/A
	rb := receipt(4, "https://q.example/a2a/B", true) // scope s1, card https://card.example/B
	rb.ID = ra.ID
	if others, err := alice.PutTurnReceipt(ctx, ra, iface+" alice-turn"); err != nil || others != 0 {
		t.Fatalf("Alice's receipt: %d %v", others, err)
	}
	if others, err := bob.PutTurnReceipt(ctx, rb, iface+" bob-turn"); err != nil || others != 0 {
		t.Errorf("Bob's receipt counted the turn Alice's came with: %d others (%v); want 0", others, err)
	}
	must(t, alice.PutReceipt(ctx, ra)) // verified again: its index rows made again
	if others, err := alice.PutTurnReceipt(ctx, ra, iface+" alice-turn"); err != nil || others != 0 {
		t.Errorf("Alice's receipt counted the turn Bob's came with: %d others (%v); want 0", others, err)
	}
	// Bob is handed it with a second turn of his: a replay in his archive
	// (one), counted from his turns only, and none in Alice's.
	if others, err := bob.PutTurnReceipt(ctx, rb, iface+" bob-turn-2"); err != nil || others != 1 {
		t.Errorf("Bob's receipt with his second turn: %d others (%v); want 1", others, err)
	}
	replays := map[string]int{Alice: 0, Bob: 1}
	has := func(db store.Store, f store.ReceiptFilter) bool {
		t.Helper()
		found := false
		f.Full = true
		must(t, db.EachReceipt(ctx, f, func(r store.Receipt) error {
			if r.ID == ra.ID {
				found = true
				if r.Replays != replays[db.User()] {
					t.Errorf("%s's receipt has %d replays; want %d (the other User's turns are not its own)", db.User(), r.Replays, replays[db.User()])
				}
			}
			return nil
		}))
		return found
	}
	for _, c := range []struct {
		db   store.Store
		f    store.ReceiptFilter
		want bool
	}{
		{alice, store.ReceiptFilter{Brand: "https://p.example/a2a/A"}, true},
		{alice, store.ReceiptFilter{Brand: "https://q.example/a2a/B"}, false},
		{alice, store.ReceiptFilter{Brand: "x", Brands: []string{"https://card.example/B"}}, false},
		{alice, store.ReceiptFilter{BrandHost: "q.example"}, false},
		{alice, store.ReceiptFilter{Scope: "s2"}, true},
		{alice, store.ReceiptFilter{Scope: "s1"}, false},
		{bob, store.ReceiptFilter{Brand: "https://q.example/a2a/B"}, true},
		{bob, store.ReceiptFilter{Brand: "https://p.example/a2a/A"}, false},
		{bob, store.ReceiptFilter{Brand: "x", Brands: []string{"https://card.example/B"}}, true},
		{bob, store.ReceiptFilter{Brand: "x", Brands: []string{"https://card.example/A"}}, false},
		{bob, store.ReceiptFilter{BrandHost: "q.example"}, true},
		{bob, store.ReceiptFilter{BrandHost: "p.example"}, false},
		{bob, store.ReceiptFilter{Scope: "s1"}, true},
		{bob, store.ReceiptFilter{Scope: "s2"}, false},
	} {
		if got := has(c.db, c.f); got != c.want {
			t.Errorf("%s's archive with filter %+v: the receipt both Users have listed %v; want %v", c.db.User(), c.f, got, c.want)
		}
	}
}
