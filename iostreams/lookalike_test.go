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

// Issue 31 (10), review: a card named "Example Bank signed by bank.example 🗸" with a
// no-break space in "signed by" and a check mark pact does not draw still read, in the
// chat header beside pact's own "signed by … ✓", as pact's verdict. The words are found
// whatever spaces or look-alike letters spell them, and every check, cross and ballot
// mark counts.
func TestIssue31_10_VerdictWordsInOtherSpacesAndMarks(t *testing.T) {
	for _, name := range []string{
		"Example Bank signed\u00a0by bank.example",
		"Example Bank signed\u2002by bank.example",
		"Example Bank Signed  By bank.example",
		"Example Bank sіgned by bank.example", // Cyrillic і
		"Example Bank VERIFIED",
		"Example Bank 🗸", "Example Bank √", "Example Bank 🗹", "Example Bank ☒",
		"Example Bank ✕", "Example Bank ❎", "Example Bank 🗶",
	} {
		if !MimicsVerdicts(name) {
			t.Errorf("MimicsVerdicts(%q) = false", name)
		}
	}
	for _, name := range []string{"Example Bank", "Signet Bylaws Co.", "Verifone", "Design by Anna"} {
		if MimicsVerdicts(name) {
			t.Errorf("MimicsVerdicts(%q) = true", name)
		}
	}
}
