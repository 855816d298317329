package reply

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// A Brand's reply of one long word or one long code line (a reply may be
// 4 MiB) is cut into lines in work linear in its length: each cut looks
// at about the next line's worth of text, not at the whole rest. Counted
// in bytes handed to ansi.Truncate (not time): when every cut saw the
// rest, 40,000 bytes at width 80 handed it 10 MB, and 100 KB took 1.6 s.
func TestHostile_LongWordIsCutInLinearWork(t *testing.T) {
	var seen int
	truncate = func(s string, w int, tail string) string { seen += len(s); return ansi.Truncate(s, w, tail) }
	t.Cleanup(func() { truncate = ansi.Truncate })
	long := strings.Repeat("a", 40000)
	for _, c := range []struct{ name, src string }{
		{"a word", long},
		{"a code line", "```\n" + long + "\n```"},
	} {
		seen = 0
		out := Markdown(c.src, 80, PlainTheme())
		if got := strings.Count(out, "a"); got != len(long) {
			t.Fatalf("%s: %d letters shown out of %d", c.name, got, len(long))
		}
		for _, l := range strings.Split(out, "\n") {
			if w := ansi.StringWidth(l); w > 80 {
				t.Fatalf("%s: a line %d cells wide at width 80", c.name, w)
			}
		}
		if limit := 64 * len(long); seen > limit {
			t.Errorf("%s of %d bytes: the cuts looked at %d bytes (over %d): quadratic", c.name, len(long), seen, limit)
		}
	}
}

func BenchmarkMarkdownHostileLongWord(b *testing.B) {
	word := strings.Repeat("a", 200000)
	code := "```\n" + word + "\n```"
	for b.Loop() {
		Markdown(word, 80, DarkTheme())
		Markdown(code, 80, DarkTheme())
	}
}

// However deep a Brand nests quotes and lists, no line is wider than the
// width, every word is shown, and the output stays in proportion to the
// reply: below minNested cells a quote draws no further bar and a list
// no further indent (2,000 nested quotes in 3 KB drew 28 MB before).
func TestHostile_DeepNestingStaysInTheWidth(t *testing.T) {
	words := strings.Repeat("word ", 100)
	for _, c := range []struct{ name, src string }{
		{"quotes", strings.Repeat(">", 2000) + " " + words},
		{"bullets", strings.Repeat("- ", 500) + words},
		{"numbers", strings.Repeat("1. ", 500) + words},
		{"a long number", "123456789. " + words},
		{"mixed", strings.Repeat("> 1. - ", 300) + words},
	} {
		for _, width := range []int{8, 40} {
			out := Markdown(c.src, width, PlainTheme())
			for _, l := range strings.Split(out, "\n") {
				if w := ansi.StringWidth(l); w > width {
					t.Fatalf("%s at width %d: a line %d cells wide: %q", c.name, width, w, l)
				}
			}
			if got := strings.Count(out, "word"); got != 100 {
				t.Errorf("%s at width %d: %d words shown, want 100", c.name, width, got)
			}
			if len(out) > 20*len(c.src) {
				t.Errorf("%s at width %d: %d bytes drawn for a %d-byte reply", c.name, width, len(out), len(c.src))
			}
		}
	}
	// Nesting that fits is drawn as before.
	if got, want := Markdown("> > q\n\n- a\n  - b", 40, PlainTheme()), "│ │ q\n\n• a\n  ◦ b"; got != want {
		t.Errorf("shallow nesting = %q, want %q", got, want)
	}
}
