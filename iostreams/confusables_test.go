package iostreams

import (
	"testing"
	"unicode/utf8"

	"github.com/mtibben/confusables"
)

// confusableSkeleton is the module's Skeleton, character for character:
// every character of the Basic Multilingual Plane, every character of the
// table (whatever its plane), and names mixing them.
func TestConfusableSkeletonIsTheModulesSkeleton(t *testing.T) {
	check := func(s string) {
		t.Helper()
		if got, want := confusableSkeleton(s), confusables.Skeleton(s); got != want {
			t.Fatalf("confusableSkeleton(%+q) = %+q, the module's Skeleton %+q", s, got, want)
		}
	}
	for r := rune(0); r < 0x10000; r++ {
		if utf8.ValidRune(r) {
			check(string(r))
		}
	}
	for i, r := range confusableFrom {
		check(string(r))
		if i > 0 && confusableFrom[i-1] >= r {
			t.Fatalf("the table is not in order at %#x", r)
		}
	}
	for _, s := range []string{"Exаmple Bank", "𝔭𝒶ỿ𝕡𝕒ℓ", "ℰ𝓍𝒶𝓂𝓅𝓁ℯ ℬ𝒶𝓃𝓀", "Example Bank", "Ｅｘａｍｐｌｅ", "rn vs m", "Ex\u0301ample"} {
		check(s)
	}
	if confusableSkeleton("Exаmple Bank") != confusableSkeleton("Example Bank") {
		t.Error("a Cyrillic а does not share the Latin a's skeleton")
	}
}
