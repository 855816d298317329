package iostreams

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Issue 9 (terminal escape injection): escape sequences, bare C0/C1
// controls and bidi controls from remote text never reach a terminal raw;
// newline and tab survive; the rest is shown visibly.
func TestSanitize_NeutralisesTerminalControls(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain text, ünïcødé 👋", "plain text, ünïcødé 👋"},
		{"line 1\nline 2\tcol", "line 1\nline 2\tcol"},
		{"crlf\r\nnext", "crlf\nnext"},
		{"bare\rCR", `bare\x0dCR`},
		{"\x1b]0;pwned\x07", `\x1b]0;pwned\x07`},
		{"\x1b[2J clear", `\x1b[2J clear`},
		{"\x1b]52;c;ZXZpbA==\x07", `\x1b]52;c;ZXZpbA==\x07`},
		{"nul\x00bs\x08del\x7f", `nul\x00bs\x08del\x7f`},
		{"c1 csi \u009b31m", `c1 csi \u009b31m`},
		{"\u0085nel", `\u0085nel`},
		{"abc\u202eevil\u202c", `abc\u202eevil\u202c`},
		{"\u2066iso\u2069 \u200e\u200f\u061c", `\u2066iso\u2069 \u200e\u200f\u061c`},
		{"bad \xff utf8", "bad \uFFFD utf8"},
	}
	for _, c := range cases {
		if got := Sanitize(c.in); got != c.want {
			t.Errorf("Sanitize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestSanitize_CleanStringIsReturnedAsIs(t *testing.T) {
	s := strings.Repeat("Order #A-88213 is cancelled.\n", 10)
	if got := Sanitize(s); got != s {
		t.Fatalf("changed a clean string: %q", got)
	}
}

// checkSafe asserts Sanitize's contract on out (the result for in).
func checkSafe(t *testing.T, in, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("Sanitize(%q) = %q is not valid UTF-8", in, out)
	}
	for _, r := range out {
		if (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r <= 0x9f) || isBidi(r) || IsInvisible(r) {
			t.Fatalf("Sanitize(%q) = %q still holds control %U", in, out, r)
		}
	}
	if again := Sanitize(out); again != out {
		t.Fatalf("Sanitize is not idempotent: %q then %q", out, again)
	}
	if clean(in) && out != in {
		t.Fatalf("Sanitize changed clean text %q into %q", in, out)
	}
}

func FuzzSanitize(f *testing.F) {
	for _, s := range []string{"", "hi\n", "\x1b]0;t\x07", "\x1b[2J", "\u009b", "\u202e", "\r\n\r", "\xff\xfe", "a\tb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkSafe(t, s, Sanitize(s))
	})
}

// Tables show remote text: every cell is sanitised.
func TestTable_CellsAreSanitized(t *testing.T) {
	io, _, out, _ := Test()
	io.Table(out, [][]string{{"BRAND", "GRANT"}, {"Evil\x1b]0;t\x07", "g\u202e1"}})
	if strings.ContainsAny(out.String(), "\x1b\x07\u202e") {
		t.Fatalf("raw control in table: %q", out.String())
	}
	if !strings.Contains(out.String(), `Evil\x1b]0;t\x07`) {
		t.Fatalf("table = %q", out.String())
	}
}

// Hostile re-review: a newline in a single-line remote field (a Brand's
// name, a skill, a scope description) faked a "signature … ✓" row and an
// extra scope in the consent list. SanitizeLine shows line breaks visibly.
func TestSanitizeLine_SingleLineFieldsCannotFakeARow(t *testing.T) {
	cases := []struct{ in, want string }{
		{"Hostile Co.\nsignature      signed by bank.example ✓", `Hostile Co.\nsignature      signed by bank.example ✓`},
		{"a\r\nb", `a\r\nb`},
		{"tab\there", `tab\there`},
		{"ls\u2028ps\u2029", `ls\u2028ps\u2029`},
		{"\x1b[2J", `\x1b[2J`},
		{"plain ✓", "plain ✓"},
	}
	for _, c := range cases {
		if got := SanitizeLine(c.in); got != c.want {
			t.Errorf("SanitizeLine(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func FuzzSanitizeLine(f *testing.F) {
	for _, s := range []string{"", "hi\n", "\x1b]0;t\x07", "\u2028", "\r\n\r", "\xff", "a\tb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := SanitizeLine(s)
		if !utf8.ValidString(out) {
			t.Fatalf("SanitizeLine(%q) = %q is not valid UTF-8", s, out)
		}
		for _, r := range out {
			if r < 0x20 || (r >= 0x7f && r <= 0x9f) || isBidi(r) || r == 0x2028 || r == 0x2029 {
				t.Fatalf("SanitizeLine(%q) = %q still holds %U", s, out, r)
			}
		}
		if again := SanitizeLine(out); again != out {
			t.Fatalf("SanitizeLine is not idempotent: %q then %q", out, again)
		}
	})
}

func TestTable_CellNewlineCannotFakeARow(t *testing.T) {
	io, _, out, _ := Test()
	io.Table(out, [][]string{{"BRAND", "GRANT"}, {"Evil\nbank.example", "g1"}})
	if n := strings.Count(out.String(), "\n"); n != 2 {
		t.Fatalf("table has %d lines, want 2: %q", n, out.String())
	}
}

// Issue 18: invisible characters (tag characters spelling a hidden
// instruction, zero-width and filler characters) are shown visibly by
// both Sanitize and SanitizeLine.
func TestSanitize_ShowsInvisibleCharacters(t *testing.T) {
	tag := func(s string) string {
		out := ""
		for _, r := range s {
			out += string(rune(0xe0000 + r))
		}
		return out
	}
	cases := []struct{ in, want string }{
		{"Your order A-1 has shipped." + tag("hi"), `Your order A-1 has shipped.\U000e0068\U000e0069`},
		{"Ex\u200bample\u200d Bank\ufeff", `Ex\u200bample\u200d Bank\ufeff`},
		{"a\u2060b\u2064c", `a\u2060b\u2064c`},
		{"\u115f\u1160\u3164\uffa0", `\u115f\u1160\u3164\uffa0`},
		{"\U000e0001\U000e007f", `\U000e0001\U000e007f`},
	}
	for _, c := range cases {
		if got := Sanitize(c.in); got != c.want {
			t.Errorf("Sanitize(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := SanitizeLine(c.in); got != c.want {
			t.Errorf("SanitizeLine(%q) = %q, want %q", c.in, got, c.want)
		}
		checkSafe(t, c.in, Sanitize(c.in))
	}
	for r := rune(0); r <= 0xe00ff; r++ {
		if IsInvisible(r) && clean(string(r)) {
			t.Fatalf("%U is invisible but passes as clean", r)
		}
	}
}
