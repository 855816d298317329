package iostreams

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Sanitize returns s made safe to write to a terminal: text that came from
// the other side (an agent's reply, a card's name or description, a scope
// description, an error.message, a receipt's claims) must pass through it
// before any human output (stdout or stderr, CLI or TUI). --json output
// keeps the text exact instead (JSON escapes it).
//
// Contract:
//   - Newline (LF) and tab are kept; CR LF becomes LF.
//   - Every other C0 control (U+0000–U+001F, including ESC, BEL, BS, NUL and
//     a bare CR), DEL (U+007F) and every C1 control (U+0080–U+009F,
//     including the single-character CSI U+009B) is shown visibly as a
//     backslash escape: "\x1b", "\x07", "\x7f", "\u009b". An escape
//     sequence (ESC [ 2 J, OSC 52 …) therefore reaches the terminal as
//     printable text and is never executed.
//   - Bidirectional formatting characters that can make text read
//     differently from what it is — embeddings and overrides U+202A–U+202E,
//     isolates U+2066–U+2069, the marks U+200E, U+200F and U+061C — are
//     shown as "\u202e" and the like.
//   - Invisible characters (IsInvisible: every default-ignorable code point
//     — tag characters, zero-width and filler characters, the soft hyphen,
//     variation selectors — the interlinear annotation characters, every
//     other format character and the line and paragraph separators),
//     which can hide words from a reader while a program or a model still
//     reads them, are shown the same way: "\u200b", "\u00ad", "\ufe00",
//     and "\U000e0041" for a tag character. An emoji presentation selector
//     that completes its emoji ("❤️", Presentation) is kept.
//   - Each byte of invalid UTF-8 becomes U+FFFD.
//   - Everything else, including all printable Unicode, is unchanged, and a
//     string with nothing to neutralise is returned as is.
//
// The result contains no byte below 0x20 other than LF and tab, no DEL,
// no C1 control, no bidi control and no invisible character; Sanitize is
// idempotent. It is the one rule for every human text and every MCP text
// (CLI, TUI, pact mcp); --json output keeps the text exact.
func Sanitize(s string) string {
	if clean(s) {
		return s
	}
	return escape(s, false)
}

// SanitizeAll applies Sanitize to each string (table cells, lists).
func SanitizeAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = Sanitize(s)
	}
	return out
}

// clean reports whether s has nothing Sanitize would change.
func clean(s string) bool {
	var prev rune
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
				return false
			}
			prev = rune(c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || r <= 0x9f || isBidi(r) || hidden(prev, r) {
			return false
		}
		prev = r
		i += n
	}
	return true
}

// hidden reports whether r, after prev, is an invisible character that
// Sanitize shows: IsInvisible, unless an emoji presentation selector
// completes its emoji (Presentation).
func hidden(prev, r rune) bool { return IsInvisible(r) && !Presentation(prev, r) }

// isBidi reports whether r is a bidirectional embedding, override, isolate
// or mark (Unicode UAX #9).
func isBidi(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f || r == 0x061c
}

// SanitizeLine is Sanitize for a single-line field — a Brand's or
// organisation's name, a skill, a scope id or description, a table cell, a
// user_code, a link, a hint: text the output puts on one row of its own
// layout. Besides all that Sanitize neutralises, it shows line breaks and
// tabs visibly ("\n", "\r", "\t", "\u2028", "\u2029"), so remote text can
// never start a row of its own and fake one ("signature  signed by …",
// another scope in a consent list).
//
// The result contains no byte below 0x20 at all, no DEL, no C1 control,
// no bidi control, no invisible character and no Unicode line or
// paragraph separator; SanitizeLine is idempotent.
func SanitizeLine(s string) string {
	if clean(s) && !strings.ContainsAny(s, "\n\t\u2028\u2029") {
		return s
	}
	return escape(s, true)
}

// escape is the loop of Sanitize (line false) and SanitizeLine (line true):
// for a line, line breaks and tabs are shown visibly too.
func escape(s string, line bool) string {
	var b strings.Builder
	b.Grow(len(s) + 16)
	var prev rune
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		hide := hidden(prev, r)
		prev = r
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteRune(utf8.RuneError)
		case line && r == '\n':
			b.WriteString(`\n`)
		case line && r == '\r':
			b.WriteString(`\r`)
		case line && r == '\t':
			b.WriteString(`\t`)
		case r == '\r' && i+1 < len(s) && s[i+1] == '\n':
			// CR LF: the LF is written on the next turn.
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r <= 0x9f, isBidi(r), line && (r == 0x2028 || r == 0x2029), hide && r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		case hide:
			fmt.Fprintf(&b, `\U%08x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// SanitizeLineAll applies SanitizeLine to each string (table cells).
func SanitizeLineAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = SanitizeLine(s)
	}
	return out
}
