package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/pact-cli/pact/receipts"
)

// TestAppendItemJSON_SameAsEncodingJSON: the fast writer of `receipts list
// --json` gives byte for byte what encoding/json (printJSON's settings)
// gives, for ordinary and awkward items.
func TestAppendItemJSON_SameAsEncodingJSON(t *testing.T) {
	items := []receiptItemJSON{
		{Item: receipts.Item{ID: "579e46", Brand: "https://p.example/a2a/X", GrantID: "g", User: "jane", ScopesUsed: []string{"orders:read", "orders:cancel"},
			Actions: []json.RawMessage{json.RawMessage(`{"tool":"cancel_order","argsHash":"abc","n":[1, 2,{"x":null}]}`), json.RawMessage(`"plain"`)},
			TS:      "2026-11-29T17:33:56Z", Verified: true, Problems: []string{}}, CardURL: "https://example.com/.well-known/agent-card.json", BrandName: "Example <Co> é", InterfaceURL: "https://p.example/a2a/X"},
		{Item: receipts.Item{ID: "x", Brand: "<b>&\"quoted\"\\ é \u2028 \x01", ScopesUsed: []string{}, Actions: []json.RawMessage{}, Problems: []string{"kept as rejected", "ünïcode <tag>"}, Restored: true}},
		{Item: receipts.Item{ID: "nil-slices"}},
		{Item: receipts.Item{Actions: []json.RawMessage{json.RawMessage(`{"a":"<&>","b":{}}`), json.RawMessage(`[]`)}, Problems: []string{"\t\n"}}},
	}
	for i, it := range items {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		enc.Encode([]receiptItemJSON{it})
		got := append([]byte("[\n  "), appendItemJSON(nil, &it)...)
		got = append(got, "\n]\n"...)
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("item %d:\n got %s\nwant %s", i, got, want.Bytes())
		}
	}
}

// The memo of a listing (actions and escaped strings met before) writes
// the same bytes as encoding/json, the second time as the first.
func TestAppendItemJSON_MemoSameAsEncodingJSON(t *testing.T) {
	it := receiptItemJSON{Item: receipts.Item{ID: "id", Brand: `https://p.example/a2a/"x"\`, ScopesUsed: []string{"orders:read"},
		Actions:  []json.RawMessage{json.RawMessage(`{"tool":"list_orders", "n":[1,2]}`)},
		Problems: []string{`not checked: Get "https://x/": dial tcp \ refused`, "plain", "é \u2028"}, Replayed: true, Notes: []string{`a "note"`}}}
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	enc.Encode([]receiptItemJSON{it})
	m := newJSONMemo()
	for round := 0; round < 2; round++ {
		got := append([]byte("[\n  "), m.appendItem(nil, &it)...)
		got = append(got, "\n]\n"...)
		if !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("round %d:\n got %s\nwant %s", round, got, want.Bytes())
		}
	}
}
