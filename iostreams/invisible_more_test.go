package iostreams

import (
	"strings"
	"testing"
)

// Review of issue 18: the other default-ignorable characters that show
// nothing are shown too. The variation selectors supplement
// (U+E0100–U+E01EF) is the tag characters' twin: with U+FE00–U+FE0F it
// spells one byte per character after an emoji ("emoji smuggling"), a
// hidden instruction that a model reads and the User never sees. The
// emoji presentation selectors U+FE00–U+FE0F stay as they are ("❤️").
func TestSanitize_ShowsVariationSelectorSmugglingAndOtherIgnorables(t *testing.T) {
	cases := []struct{ in, want string }{
		{"Shipped 😀\U000e0100\U000e0142\U000e01ef", `Shipped 😀\U000e0100\U000e0142\U000e01ef`},
		{"a\u2065b\u206ac\u206fd", `a\u2065b\u206ac\u206fd`},
		{"a\u180eb\u034fc\u17b4d\u17b5e", `a\u180eb\u034fc\u17b4d\u17b5e`},
		{"a\U0001d173b\U0001d17ac", `a\U0001d173b\U0001d17ac`},
		{"I \u2764\ufe0f it", "I \u2764\ufe0f it"},
	}
	for _, c := range cases {
		if got := Sanitize(c.in); got != c.want {
			t.Errorf("Sanitize(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := SanitizeLine(c.in); got != c.want {
			t.Errorf("SanitizeLine(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if Skeleton("Example\U000e0101 Bank") != Skeleton("Example Bank") {
		t.Errorf("a variation selector hidden in a name changes its skeleton")
	}
}

// Issue 31 (10): every default-ignorable code point is shown, with the interlinear
// annotation characters: the variation selectors U+FE00–U+FE0F (two per byte, a 57-byte
// instruction passed that way), the soft hyphen, the Mongolian free variation selectors,
// the shorthand format controls, U+FFF0–U+FFFB, the whole block U+E0000–U+E0FFF. An emoji
// presentation selector after its emoji ("❤️", "1️⃣") is kept; after a letter, after
// another selector or alone it is shown.
func TestIssue31_10_EveryDefaultIgnorableIsShown(t *testing.T) {
	// "ok" hidden as half-bytes in U+FE00–U+FE0F after one emoji.
	var smuggled strings.Builder
	smuggled.WriteString("Order shipped 📦")
	for _, b := range []byte("ok") {
		smuggled.WriteRune(0xfe00 + rune(b>>4))
		smuggled.WriteRune(0xfe00 + rune(b&0xf))
	}
	cases := []struct{ in, want string }{
		{smuggled.String(), `Order shipped 📦\ufe06\ufe0f\ufe06\ufe0b`},
		{"Exam\u00adple", `Exam\u00adple`},
		{"a\u180bb\u180cc\u180dd\u180fe", `a\u180bb\u180cc\u180dd\u180fe`},
		{"a\U0001bca0b\U0001bca3c", `a\U0001bca0b\U0001bca3c`},
		{"a\ufff0b\ufff8c\ufff9d\ufffbe", `a\ufff0b\ufff8c\ufff9d\ufffbe`},
		{"a\U000e0000b\U000e0080c\U000e01f0d\U000e0fffe", `a\U000e0000b\U000e0080c\U000e01f0d\U000e0fffe`},
		{"a\ufe0fb", `a\ufe0fb`},           // after a letter: no emoji
		{"\u2764\ufe0f\ufe0f", `❤️\ufe0f`}, // a second selector
		{"\ufe0fx", `\ufe0fx`},             // at the start
		{"I \u2764\ufe0f it, 1\ufe0f\u20e3 \u00a9\ufe0e \u263a\ufe0f", "I \u2764\ufe0f it, 1\ufe0f\u20e3 \u00a9\ufe0e \u263a\ufe0f"},
	}
	for _, c := range cases {
		for name, f := range map[string]func(string) string{"Sanitize": Sanitize, "SanitizeLine": SanitizeLine} {
			got := f(c.in)
			if got != c.want {
				t.Errorf("%s(%q) = %q, want %q", name, c.in, got, c.want)
			}
			if f(got) != got {
				t.Errorf("%s is not idempotent on %q", name, c.in)
			}
		}
	}
	for _, r := range []rune{0xad, 0x180b, 0x180f, 0xfe00, 0xfe0f, 0xfff0, 0xfffb, 0x1bca0, 0xe0000, 0xe0fff} {
		if !IsInvisible(r) {
			t.Errorf("IsInvisible(%U) = false", r)
		}
	}
	for _, r := range []rune{'a', 0xac, 0xae, 0x2764, 0xfffc, 0xfffd, 0xe1000, 0x1bca4} {
		if IsInvisible(r) {
			t.Errorf("IsInvisible(%U) = true", r)
		}
	}
	if Skeleton("Exam\u00adple Bank") != Skeleton("Example Bank") {
		t.Error("a soft hyphen hidden in a name changes its skeleton")
	}
}

// Issue 31 (10), review: the format characters (Cf) that are not default-ignorable show
// nothing on a terminal either (glibc's wcwidth gives them no width; tmux drops U+2028): the
// Egyptian hieroglyph format controls U+13430–U+1343F, the Arabic and Syriac number and end
// marks U+0600–U+0605, U+06DD, U+070F, U+0890, U+0891, U+08E2, the Kaithi number signs
// U+110BD, U+110CD, and the line and paragraph separators U+2028, U+2029 (a line break to a
// model, nothing on the terminal). Sixteen of them spell a half-byte each, as the variation
// selectors did. Each is shown, in multi-line text too.
func TestIssue31_10_FormatCharactersAndSeparatorsAreShown(t *testing.T) {
	for _, r := range []rune{0x0600, 0x0605, 0x06dd, 0x070f, 0x0890, 0x0891, 0x08e2, 0x110bd, 0x110cd, 0x13430, 0x13439, 0x1343f, 0x2028, 0x2029} {
		if !IsInvisible(r) {
			t.Errorf("IsInvisible(%U) = false", r)
		}
		in := "Refund 9" + string(r) + "00 EUR"
		for name, f := range map[string]func(string) string{"Sanitize": Sanitize, "SanitizeLine": SanitizeLine} {
			got := f(in)
			if strings.ContainsRune(got, r) || !strings.Contains(got, `\`) {
				t.Errorf("%s(%q) = %q: %U passes as it is", name, in, got, r)
			}
			if f(got) != got {
				t.Errorf("%s is not idempotent on %q", name, in)
			}
		}
		if !HidesCharacters("Example" + string(r) + " Bank") {
			t.Errorf("a name with %U does not hide characters", r)
		}
	}
	// What shows stays: Arabic letters and digits, Egyptian hieroglyphs, spaces.
	for _, s := range []string{"مرحبا ١٢٣", "\U00013000\U00013001", "a\u3000b\u2800c"} {
		if got := Sanitize(s); got != s {
			t.Errorf("Sanitize(%q) = %q", s, got)
		}
	}
}
