package iostreams

import "testing"

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
