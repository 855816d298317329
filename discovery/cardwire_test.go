package discovery

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// The agent interface carries a checked card between pact serve and a
// device as JSON: what comes back is the card as checked, every field
// (the A2A card, interface, PA-JWT scheme, delegation with its scheme,
// problems, the signature check with its thumbprints; the card as received
// compacted), and it marshals to the same bytes again.
func TestCardJSONRoundTrip(t *testing.T) {
	card, err := Parse(baseCard(t))
	if err != nil {
		t.Fatal(err)
	}
	card.URL, card.FinalURL = "https://shop.example/.well-known/agent-card.json", "https://cards.example/shop.json"
	card.Problems = append(card.Problems, "a finding")
	card.Signature = &Signature{Verified: true, KID: "k1", KeyURL: "https://shop.example/.well-known/jwks.json", Problems: []string{},
		Signer: "shop.example", Thumbprints: []string{"tp"}, Signed: true, Alg: "ES256"}
	if card.Delegation == nil || card.Delegation.Scheme == "" {
		t.Fatalf("the test card has no delegation: %+v", card)
	}
	b, err := json.Marshal(card)
	if err != nil {
		t.Fatal(err)
	}
	var back Card
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	// The card as received goes compacted (encoding/json), the same JSON.
	var compact bytes.Buffer
	json.Compact(&compact, card.Raw)
	if string(back.Raw) != compact.String() {
		t.Fatalf("card %s, want %s", back.Raw, compact.String())
	}
	back.Raw = card.Raw
	if !reflect.DeepEqual(&back, card) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", back, *card)
	}
	if back.Name() != card.Name() || !reflect.DeepEqual(back.Skills(), card.Skills()) || back.Streams() != card.Streams() {
		t.Fatalf("methods differ after the round trip")
	}
	back.Raw = compact.Bytes()
	b2, _ := json.Marshal(&back)
	if string(b2) != string(b) {
		t.Fatalf("marshalled again:\n%s\nwas\n%s", b2, b)
	}
}
