package reply

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/pact-cli/pact/iostreams"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (run `go test ./reply -run Golden -update` after checking the new output):\n%s", name, got)
	}
}

// A reply with headings, emphasis, nested lists, a quote, a code block, a
// table and links, at 80 and 40 columns, dark and without colour: the
// layout a person sees in `pact send` and the chat.
func TestGoldenMarkdown(t *testing.T) {
	src, err := os.ReadFile("testdata/reply.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		width int
		th    Theme
	}{
		{"markdown-80.golden", 80, DarkTheme()},
		{"markdown-40.golden", 40, DarkTheme()},
		{"markdown-plain-40.golden", 40, PlainTheme()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Markdown(string(src), tc.width, tc.th)
			for i, l := range strings.Split(got, "\n") {
				if w := ansi.StringWidth(l); w > tc.width {
					t.Errorf("line %d is %d cells wide, over %d: %q", i+1, w, tc.width, l)
				}
				if strings.HasSuffix(l, " ") { // an unstyled blank; a heading's background may end a line

					t.Errorf("line %d ends with a blank: %q", i+1, l)
				}
			}
			golden(t, tc.name, got+"\n")
		})
	}
}

// What the renderer shows of each construct, without styles.
func TestMarkdownShowsEveryConstruct(t *testing.T) {
	src, _ := os.ReadFile("testdata/reply.md")
	plain := ansi.Strip(Markdown(string(src), 80, DarkTheme()))
	for _, want := range []string{
		"Your orders", "## Details", "### Third level", // headings
		"You have two orders", "one shipped", // emphasis markers gone
		"See tracking\nhttps://brand.example.com/t/A-88213 or",                             // a link with its URL
		"https://brand.example.com/help",                                                   // an autolink
		"& © and an escaped *star*",                                                        // entities and escapes resolved
		"1. \u00a0A-88213\u00a0 running shoes", "   ◦ left shoe", "     1. nested ordered", // nested lists
		"• [x] paid", // task list
		"│ Quoted from the carrier: the parcel is\n│ on its way.", "│ │ nested quote", // its line break kept
		"  func main() {", "        fmt.Fprintln(os.Stderr,", // code keeps its indent
		"│ A-88213 │ running shoes │  shipped   │ 89.00 │", // table, aligned
		"Line one\nline two after a hard break.",
		"[image: logo] https://brand.example.com/logo.png",
	} {
		if !strings.Contains(plain, want) {
			t.Errorf("rendering lacks %q:\n%s", want, plain)
		}
	}
	for _, gone := range []string{"**", "~~", "```", "](", "| :---"} {
		if strings.Contains(plain, gone) {
			t.Errorf("rendering still shows the marker %q:\n%s", gone, plain)
		}
	}
}

// A wrapped code line continues at its own indent; a long URL is cut,
// never lost.
func TestMarkdownWrapsCodeAtItsIndent(t *testing.T) {
	got := strings.Split(ansi.Strip(Markdown("```\nfunc f() {\n        return aaaa + bbbb + cccc + dddd\n}\n```", 24, PlainTheme())), "\n")
	want := []string{"  func f() {", "          return aaaa +", "          bbbb + cccc +", "          dddd", "  }"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("code block at 24 columns:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	url := "https://brand.example.com/" + strings.Repeat("x", 60)
	out := ansi.Strip(Markdown("see "+url, 30, DarkTheme()))
	if strings.ReplaceAll(strings.TrimPrefix(out, "see\n"), "\n", "") != url {
		t.Errorf("long URL not kept whole across lines: %q", out)
	}
}

// sgr matches the only escape sequences the renderer may write: SGR styles.
var sgr = regexp.MustCompile(`\x1b\[[0-9;:]*m`)

// checkSafe fails unless out, with its SGR styles removed, is text that
// Sanitize leaves alone (no control, no bidi override, nothing to run).
func checkSafe(t *testing.T, src, out string) {
	t.Helper()
	text := sgr.ReplaceAllString(out, "")
	if iostreams.Sanitize(text) != text || strings.Contains(text, "\t") {
		t.Fatalf("unsafe output for %q:\n%q", src, out)
	}
}

// Remote text never reaches the terminal raw: control bytes, entities
// that decode to controls, bidi overrides, and the same in code, link
// URLs and table cells are shown escaped; the only sequences written are
// the theme's styles.
func TestMarkdownSanitisesEverything(t *testing.T) {
	for _, src := range []string{
		"hi \x1b]52;c;ZXZpbA==\x07 there",
		"entity &#27;[2J and &#x1b;]8;;evil&#7; and &#155;",
		"bidi \u202eevil\u202c",
		"`code \x1b[31m` and\n```\nblock \x1b[2J\x07\n```",
		"[x](https://e.example/\x1b[2J) [y](https://e.example/&#27;[2J) <https://e.example/\u202e>",
		"| a \x1b[2J | b &#27; |\n| - | - |\n| \x07 | \u202e |",
		"<b onclick=\x1b[2J>raw</b>\n\n<div>\x1b[2J</div>",
		"![alt \x1b[2J](https://e.example/\x07.png)",
	} {
		for _, w := range []int{80, 20} {
			checkSafe(t, src, Markdown(src, w, DarkTheme()))
		}
	}
	if got := ansi.Strip(Markdown("a &#27;[2J b", 80, DarkTheme())); got != `a \x1b[2J b` {
		t.Errorf("an entity for ESC is shown as %q, want it escaped", got)
	}
}

// Blocks render independently: the document's lines are its blocks'
// lines joined by blank lines, and Source gives each block's text.
func TestDocBlocksAreIndependent(t *testing.T) {
	src := "# Title\n\npara one\nstill one\n\n- a\n- b\n\n---\n\n```\ncode\n```\n"
	d := Parse(src)
	if d.Len() != 5 {
		t.Fatalf("Len = %d, want 5", d.Len())
	}
	wantSrc := []string{"# Title", "para one\nstill one", "- a\n- b", "---", "```\ncode\n```"}
	var joined []string
	for i := range d.Len() {
		if got := d.Source(i); got != wantSrc[i] {
			t.Errorf("Source(%d) = %q, want %q", i, got, wantSrc[i])
		}
		if i > 0 {
			joined = append(joined, "")
		}
		b := d.Block(i, 40, DarkTheme())
		joined = append(joined, b...)
		// A block renders the same from its own source.
		if alone := Parse(d.Source(i)).Render(40, DarkTheme()); strings.Join(alone, "\n") != strings.Join(b, "\n") {
			t.Errorf("block %d differs when rendered alone:\n%q\n%q", i, alone, b)
		}
	}
	if got := d.Render(40, DarkTheme()); strings.Join(got, "\n") != strings.Join(joined, "\n") {
		t.Errorf("Render is not its blocks joined:\n%q\n%q", got, joined)
	}
	if got := Parse("").Render(40, DarkTheme()); len(got) != 0 {
		t.Errorf("empty document rendered as %q", got)
	}
}

// The renderer takes any text: no panic, every line within the width, and
// nothing unsafe in the output.
func FuzzMarkdown(f *testing.F) {
	// Small seeds: the fuzzer's mutator crawls on a seed of kilobytes.
	f.Add("# H\n\n*a* **b** ~~c~~ [l](https://u.example) <https://v.example>\n\n1. x\n   - y\n     > q", 40)
	f.Add("| a | b |\n|---|--:|\n| `x` | [l](u) |", 12)
	f.Add("> - ```\n>   code\t\tx\n> ```", 9)
	f.Add("&#27;[2J\x1b]8;;x\x07 \u202e", 80)
	f.Add("> 1. - > 1. - > 1. - > 1. - > 1. - > 1. - deep", 0)
	f.Fuzz(func(t *testing.T, s string, width int) {
		width = 8 + (width%120+120)%120
		out := Markdown(s, width, DarkTheme())
		checkSafe(t, s, out)
		for _, l := range strings.Split(out, "\n") {
			if w := ansi.StringWidth(l); w > width {
				t.Fatalf("line %d cells wide at width %d: %q (source %q)", w, width, l, s)
			}
		}
	})
}

func BenchmarkMarkdownReply(b *testing.B) {
	src, _ := os.ReadFile("testdata/reply.md")
	for b.Loop() {
		Markdown(string(src), 40, DarkTheme())
	}
}

// GFM tables: with or without outer pipes, after a line of text,
// escaped pipes kept in a cell, short rows filled; not a table without a
// matching delimiter row.
func TestMarkdownTables(t *testing.T) {
	got := ansi.Strip(Markdown("Orders:\na | b\n--|--:\nx \\| y | 1\nz", 40, PlainTheme()))
	want := "Orders:\n\n╭───────┬───╮\n│ a     │ b │\n├───────┼───┤\n│ x | y │ 1 │\n│ z     │   │\n╰───────┴───╯"
	if got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
	for _, src := range []string{"a | b\n--|--|--", "a | b\n-- x --", "just | text"} {
		if got := ansi.Strip(Markdown(src, 40, PlainTheme())); strings.Contains(got, "╭") {
			t.Errorf("%q drawn as a table:\n%s", src, got)
		}
	}
}

// Issue 31 (13): a single newline in a Brand's reply is a line break, as chat clients draw
// it (CommonMark folds it into the paragraph: a reply of 200 lines showed as one).
func TestIssue31_13_SingleNewlinesAreLineBreaks(t *testing.T) {
	var lines []string
	for i := range 200 {
		lines = append(lines, fmt.Sprintf("line %d of the reply", i+1))
	}
	got := strings.Split(ansi.Strip(Markdown(strings.Join(lines, "\n"), 80, DarkTheme())), "\n")
	if !slices.Equal(got, lines) {
		t.Fatalf("200 lines rendered as %d:\n%s", len(got), strings.Join(got, "\n"))
	}
	for src, want := range map[string]string{
		"Order A-1: *shipped*\nOrder B-2: **lost**": "Order A-1: shipped\nOrder B-2: lost",
		"- one\n  still one\n- two":                 "• one\n  still one\n• two",
		"> quoted\n> on two lines":                  "│ quoted\n│ on two lines",
		"first\n\nsecond paragraph":                 "first\n\nsecond paragraph",
	} {
		if got := ansi.Strip(Markdown(src, 80, PlainTheme())); got != want {
			t.Errorf("Markdown(%q) = %q, want %q", src, got, want)
		}
	}
}
