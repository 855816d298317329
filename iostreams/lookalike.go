package iostreams

import (
	"strings"
	"unicode"
)

// Look-alike names. A Brand's name is the Brand's own claim: a card can
// call itself "Exаmple Bank" with a Cyrillic "а" and read, to the User and
// to a model, as the "Example Bank" they already trust. These are the
// rules every surface (pact card, the chat header, get_agent_card) flags
// by; the comparison with the Brands already pinned is
// conversation.LookAlikes.

// cjk are the scripts UTS #39 lets a word mix with each other and with
// Latin (its "highly restrictive" level: Japanese, Korean, Chinese with
// Bopomofo), counted as one.
var cjk = []*unicode.RangeTable{unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul, unicode.Bopomofo}

// scriptOf names the script of letter r: "" for Common and Inherited
// characters (digits, punctuation, combining marks), "CJK" for the
// scripts in cjk.
func scriptOf(r rune) string {
	if !unicode.IsLetter(r) || unicode.In(r, unicode.Common, unicode.Inherited) {
		return ""
	}
	for _, t := range cjk {
		if unicode.Is(t, r) {
			return "CJK"
		}
	}
	for name, t := range unicode.Scripts {
		if name != "Common" && name != "Inherited" && unicode.Is(t, r) {
			return name
		}
	}
	return ""
}

// MixedScripts returns the words of s (runs of letters, digits and marks)
// whose letters come from more than one script, such as "Exаmple" with a
// Cyrillic "а" among Latin letters (UTS #39 §5.1, mixed-script detection).
// Latin with Han, Hiragana, Katakana, Hangul or Bopomofo is not mixed
// (Japanese, Korean, Chinese names); a name with words in two scripts
// ("Banco Αθήνα") is not flagged either. Nil when no word mixes.
func MixedScripts(s string) []string {
	var mixed []string
	for _, w := range strings.FieldsFunc(s, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r) && !IsInvisible(r)
	}) {
		seen := map[string]bool{}
		for _, r := range w {
			if sc := scriptOf(r); sc != "" {
				seen[sc] = true
			}
		}
		if len(seen) > 2 || (len(seen) == 2 && !(seen["Latin"] && seen["CJK"])) {
			mixed = append(mixed, w)
		}
	}
	return mixed
}

// Skeleton is the UTS #39 confusable skeleton of s (§4), with the
// invisible characters (IsInvisible) and bidi controls removed first and
// the result case-folded: two names with the same skeleton look alike to
// a reader ("Exаmple Bank" with a Cyrillic "а", "Examp\u200ble Bank" and
// "Example Bank" share one). Source: github.com/mtibben/confusables
// (confusableSkeleton).
func Skeleton(s string) string {
	s = strings.Map(func(r rune) rune {
		if IsInvisible(r) || isBidi(r) {
			return -1
		}
		return r
	}, s)
	return strings.ToLower(confusableSkeleton(strings.Join(strings.Fields(s), " ")))
}

// HidesCharacters reports whether s holds characters that show nothing or
// reorder what follows (IsInvisible, bidi controls), which Sanitize shows
// as escapes: in a name ("Exam\u00adple Bank") they are how a name
// imitates another one without a reader seeing it. An emoji presentation
// selector after its emoji is not counted.
func HidesCharacters(s string) bool {
	var prev rune
	for _, r := range s {
		if isBidi(r) || hidden(prev, r) {
			return true
		}
		prev = r
	}
	return false
}

// verdictMarks are the marks pact draws for its own verdicts (signature,
// receipts, warnings), and the check, cross and ballot marks that read as
// them.
const verdictMarks = "✓✔✗✘☑✅❌⚠√☒✕✖❎🗴🗵🗶🗷🗸🗹"

// verdictWords are the words of pact's own verdicts on a card or receipt.
var verdictWords = []string{"signed by", "verified"}

// MimicsVerdicts reports whether s (a Brand's name) holds a mark or words
// that pact uses for its own verdicts ("✓", "signed by", "verified"): a
// card named "Example Bank — signed by bank.example ✓" reads, beside pact's
// rows, as pact's finding. Case is ignored, and so are the spaces and the
// look-alike letters that spell the words (compared by Skeleton: "signed
// by" with a no-break space or a Cyrillic "і" is found too).
func MimicsVerdicts(s string) bool {
	if strings.ContainsAny(s, verdictMarks) {
		return true
	}
	l, sk := strings.ToLower(s), Skeleton(s)
	for _, w := range verdictWords {
		if strings.Contains(l, w) || strings.Contains(sk, Skeleton(w)) {
			return true
		}
	}
	return false
}
