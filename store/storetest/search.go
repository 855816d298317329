package storetest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/pact-cli/pact/store"
)

// SearchWordsPunctuationSyntaxAndCJK: search finds the turns holding every
// word as a substring, any case, newest first, at most the limit: words
// of scripts written without spaces inside longer runs (CJK, Thai), words
// of one or two characters, punctuation, and what a query language would
// read as syntax (quotes, OR, NOT, *, %, _) matched as typed, never an
// error. Turns appended after a search are found by the next.
func SearchWordsPunctuationSyntaxAndCJK(t *testing.T, h Harness) {
	ctx := context.Background()
	b, _ := open(t, h)
	db := b.ForUser(Alice)
	texts := []string{
		"漢字テスト",
		"สวัสดีครับ ผมต้องการคืนสินค้า",
		"Where is my PARCEL?",
		"parcel 42 arrived",
		`a "quoted" OR NOT * word`,
		"order A-88213 (urgent), 50% off_now",
		"path C:\\orders\\x and tags #42 & @shop; done.",
	}
	for i, text := range texts {
		must(t, db.AppendTurns(ctx, conv("c1", i), store.Turn{MessageID: fmt.Sprint("m", i), Role: "user", Text: text, At: t0}))
	}
	find := func(q string, limit int) string {
		t.Helper()
		res, err := db.SearchTurns(ctx, q, limit)
		if err != nil {
			t.Errorf("search %q: %v", q, err)
			return ""
		}
		var out []string
		for _, hit := range res.Hits {
			if hit.Conversation.ContextID != "c1" || hit.Conversation.Brand != card || hit.Conversation.InterfaceURL != iface {
				t.Errorf("search %q: hit without its conversation: %+v", q, hit.Conversation)
			}
			out = append(out, hit.Turn.Text)
		}
		return strings.Join(out, " | ")
	}
	for _, c := range []struct{ q, want string }{
		{"テスト", "漢字テスト"},
		{"漢字", "漢字テスト"}, // two characters
		{"字", "漢字テスト"},  // one
		{"คืนสินค้า", "สวัสดีครับ ผมต้องการคืนสินค้า"},
		{"parcel", "parcel 42 arrived | Where is my PARCEL?"}, // newest first, any case
		{"PaRcEl 42", "parcel 42 arrived"},                    // every word
		{"arc", "parcel 42 arrived | Where is my PARCEL?"},    // inside words
		{"42", "path C:\\orders\\x and tags #42 & @shop; done. | parcel 42 arrived"},
		{`"quoted"`, `a "quoted" OR NOT * word`},
		{"OR NOT", `a "quoted" OR NOT * word`},
		{"*", `a "quoted" OR NOT * word`},
		{"A-88213", "order A-88213 (urgent), 50% off_now"},
		{"(urgent),", "order A-88213 (urgent), 50% off_now"},
		{"50%", "order A-88213 (urgent), 50% off_now"},
		{"%", "order A-88213 (urgent), 50% off_now"},
		{"_", "order A-88213 (urgent), 50% off_now"},
		{"f_n", "order A-88213 (urgent), 50% off_now"},
		{`C:\orders\x`, "path C:\\orders\\x and tags #42 & @shop; done."},
		{"#42 & @shop;", "path C:\\orders\\x and tags #42 & @shop; done."},
		{"nothing", ""},
		{"parcel nothing", ""},
		{`"`, `a "quoted" OR NOT * word`},
		{"", ""},
		{"   ", ""},
	} {
		if got := find(c.q, 0); got != c.want {
			t.Errorf("search %q: found %q, want %q", c.q, got, c.want)
		}
	}
	for _, q := range []string{`NOT order`, `order*`, `a AND (`, `text:order`, `NEAR(a b)`, `^parcel`, `parcel)`, `'`, `\`, `;--`} {
		if _, err := db.SearchTurns(ctx, q, 0); err != nil {
			t.Errorf("search %q: %v", q, err)
		}
	}
	if got := find("parcel", 1); got != "parcel 42 arrived" {
		t.Errorf("limit 1: %q", got)
	}
	must(t, db.AppendTurns(ctx, conv("c1", 9), store.Turn{MessageID: "m9", Role: "agent", Text: "the parcel is cancelled", At: t0}))
	if got := find("cancelled", 0); got != "the parcel is cancelled" {
		t.Errorf("a turn appended after a search: %q", got)
	}
	if got := find("parcel", 0); strings.Count(got, "|") != 2 {
		t.Errorf("parcel after the index caught up: %q", got)
	}
	// Many hits: the limit is kept, newest first.
	var many []store.Turn
	for i := range 150 {
		many = append(many, store.Turn{MessageID: fmt.Sprint("x", i), Role: "agent", Text: fmt.Sprintf("refund number %03d", i), At: t0})
	}
	must(t, db.AppendTurns(ctx, conv("c2", 20), many...))
	res, err := db.SearchTurns(ctx, "refund", 0)
	if err != nil || len(res.Hits) != 100 || res.Hits[0].Turn.Text != "refund number 149" || res.Hits[99].Turn.Text != "refund number 050" {
		t.Fatalf("search with more hits than the default limit: %d hits, %v", len(res.Hits), err)
	}
}
