package mcpserver

import (
	"github.com/pact-cli/pact/discovery"
	"github.com/pact-cli/pact/iostreams"
)

// clean is the one place remote text (card fields, replies, conversation
// turns, receipt claims, error messages quoting a Provider) passes through
// before it reaches an MCP client, which may show it on a terminal or to a
// model: the terminal's own sanitiser, iostreams.Sanitize (escape
// sequences, C0/C1 controls, bidi controls and invisible characters such
// as tag characters and zero-width spaces shown as visible escapes), and
// the brackets of pact's third-party frames (see frame.go) made plain.
func clean(s string) string { return neutralise(iostreams.Sanitize(s)) }

// one is clean for a remote piece inside one of pact's own lines (a
// scope id): line breaks shown too (iostreams.SanitizeLine), so it cannot
// start a line of its own.
func one(s string) string { return neutralise(iostreams.SanitizeLine(s)) }

// cleanJSON returns v (a decoded JSON value) with every string, keys
// included, passed through clean.
func cleanJSON(v any) any {
	switch x := v.(type) {
	case string:
		return clean(x)
	case []any:
		for i := range x {
			x[i] = cleanJSON(x[i])
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[clean(k)] = cleanJSON(e)
		}
		return out
	}
	return v
}

// Signature is the state of an Agent Card's signature as get_agent_card
// reports it: the `pact.signature` of `pact card --json` (A2A 1.0 §8.4, checked
// by discovery when the card is fetched), plus the human label.
type Signature struct {
	Verified bool     `json:"verified"`
	KID      string   `json:"kid"`
	KeyURL   string   `json:"keyUrl"`
	Problems []string `json:"problems"`
	// Label is "signed by DOMAIN ✓" or "unsigned".
	Label string `json:"label"`
}

// cardSignature is discovery's verdict on card's signatures. A card whose
// signatures all fail never gets here (discovery refuses it); an unsigned
// card is Verified false with no problems.
func cardSignature(card *discovery.Card) Signature {
	sig := Signature{Problems: []string{}, Label: card.Signature.Label()}
	if s := card.Signature; s != nil {
		sig.Verified, sig.KID, sig.KeyURL = s.Verified, s.KID, s.KeyURL
		sig.Problems = append(sig.Problems, s.Problems...)
	}
	return sig
}
