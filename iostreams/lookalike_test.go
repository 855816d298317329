package iostreams

import (
	"reflect"
	"testing"
)

// Issue 18: a word that mixes scripts is named; names in one script, or
// Latin with CJK, are not.
func TestMixedScripts(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"Example Bank", nil},
		{"Ex\u0430mple Bank", []string{"Ex\u0430mple"}}, // Cyrillic а
		{"Ρayments Co", []string{"Ρayments"}},           // Greek Rho
		{"Банк Example", nil},                           // two words, one script each
		{"東京Bank 株式会社", nil},                            // Latin with Han: Japanese usage
		{"Café 42", nil},
		{"Ex\u200bample", nil}, // invisible, not a script (Sanitize shows it)
	}
	for _, c := range cases {
		if got := MixedScripts(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("MixedScripts(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// Issue 18: a Cyrillic "Exаmple Bank", one with a zero-width space and
// one with a capital I for l share the skeleton of "Example Bank".
func TestSkeleton_LookAlikesMatch(t *testing.T) {
	want := Skeleton("Example Bank")
	for _, s := range []string{"Ex\u0430mple Bank", "Examp\u200ble Bank", "ExampIe Bank", "example  bank"} {
		if got := Skeleton(s); got != want {
			t.Errorf("Skeleton(%q) = %q, want %q (the skeleton of Example Bank)", s, got, want)
		}
	}
	if Skeleton("Example Shop") == want {
		t.Error("Example Shop has the skeleton of Example Bank")
	}
}
