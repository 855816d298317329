package mcpserver

import (
	"strings"
	"unicode/utf8"

	"github.com/pact-cli/pact/discovery"
)

// clean is the one place remote text (card fields, replies, conversation
// turns, receipt claims, error messages quoting a Provider) passes through
// before it reaches an MCP client, which may show it on a terminal or to a
// model. It is meant to be the same sanitiser the CLI's printers use
// (iostreams.Sanitize); until that lands it is the small local filter
// below.
func clean(s string) string { return sanitize(s) }

// sanitize removes what could steer a terminal or hide text: ANSI escape
// sequences (CSI, OSC, and other ESC sequences), C0 controls other than
// newline and tab, DEL, C1 controls, Unicode bidirectional controls, and
// invalid UTF-8 (replaced by U+FFFD).
func sanitize(s string) string {
	if isPlain(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteRune(utf8.RuneError)
			i++
			continue
		case r == 0x1b:
			i += escapeLen(s[i:])
			continue
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || isBidi(r):
			// dropped
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// isPlain reports whether s is printable ASCII plus newline and tab.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 || c == 0x7f || (c < 0x20 && c != '\n' && c != '\t') {
			return false
		}
	}
	return true
}

func isBidi(r rune) bool {
	return r == 0x061c || r == 0x200e || r == 0x200f || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// escapeLen is the length of the escape sequence at the start of s (which
// starts with ESC): CSI up to its final byte, OSC/DCS/APC/PM/SOS up to BEL
// or ST, otherwise ESC and the next character.
func escapeLen(s string) int {
	if len(s) < 2 {
		return len(s)
	}
	switch s[1] {
	case '[':
		for i := 2; i < len(s); i++ {
			if s[i] >= 0x40 && s[i] <= 0x7e {
				return i + 1
			}
		}
		return len(s)
	case ']', 'P', '_', '^', 'X':
		for i := 2; i < len(s); i++ {
			if s[i] == 0x07 {
				return i + 1
			}
			if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
		}
		return len(s)
	}
	_, n := utf8.DecodeRuneInString(s[1:])
	return 1 + n
}

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

// Signature is the state of an Agent Card's signature, as get_agent_card
// reports it.
type Signature struct {
	Verified bool     `json:"verified"`
	Problems []string `json:"problems"`
	// KeyID is the kid of the key that verified the signature, when known.
	KeyID string `json:"kid,omitempty"`
}

// cardSignature reports whether card carries a valid signature. Agent Card
// signature verification belongs to discovery (it is being added there);
// until it is wired here, every card is reported as not checked. This is
// the one function to point at discovery's result.
func cardSignature(card *discovery.Card) Signature {
	_ = card
	return Signature{Verified: false, Problems: []string{"signature not checked"}}
}
