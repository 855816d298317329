package iostreams

import "testing"

// Issue 18: every line of the Brand's text starts with the gutter, an
// empty line and the last one included; a trailing newline stays bare.
func TestGutter_PrefixesEveryLine(t *testing.T) {
	cases := []struct{ in, want string }{
		{"one", "│ one"},
		{"one\n\n✓ receipt 5f3a verified\n", "│ one\n│ \n│ ✓ receipt 5f3a verified\n"},
		{"", "│ "},
	}
	for _, c := range cases {
		if got := Gutter(c.in, GutterMark); got != c.want {
			t.Errorf("Gutter(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
