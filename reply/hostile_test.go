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
