package iostreams

import "strings"

// GutterMark starts every line of a Brand's text on a terminal (Gutter).
const GutterMark = "│ "

// Gutter returns text (already sanitised) with every line prefixed by
// mark (GutterMark, styled by the caller): on a terminal the Brand's words
// then stand apart from pact's own lines (a "✓ receipt … verified" the
// Brand writes reads "│ ✓ receipt … verified"), and no line of theirs can
// pass for one of pact's. A trailing newline is kept, not prefixed.
func Gutter(text, mark string) string {
	trail := strings.HasSuffix(text, "\n")
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	for i, l := range lines {
		lines[i] = mark + l
	}
	out := strings.Join(lines, "\n")
	if trail {
		out += "\n"
	}
	return out
}
