package reply

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"charm.land/lipgloss/v2"
	"charm.land/lipgloss/v2/table"
	"github.com/charmbracelet/x/ansi"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/pact-cli/pact/iostreams"
)

// This file is pact's Markdown renderer for terminals: goldmark parses
// (CommonMark plus GFM tables, strikethrough and task lists, mdext.go),
// lipgloss draws. One departure from CommonMark, as chat clients draw
// chat text: a single newline inside a paragraph is a line break, not a
// space. Every piece of text it writes — words, code, link URLs, table
// cells — passes iostreams.Sanitize (SanitizeLine for URLs) after
// goldmark resolved entities and escapes, so "&#27;" or a control byte in
// a reply is shown, never run; the only escape sequences in the output
// are the SGR styles of the Theme.

// Theme is how Markdown is drawn: one lipgloss style per element. The
// zero Theme draws plain text with the layout only (markers, indents,
// borders).
type Theme struct {
	Heading1    lipgloss.Style // a level-1 heading, the whole line
	Heading     lipgloss.Style // levels 2–6, after their "## " marker
	Strong      lipgloss.Style // **strong**
	Emph        lipgloss.Style // *emphasis*
	Strike      lipgloss.Style // ~~strikethrough~~
	Code        lipgloss.Style // `inline code`
	CodeBlock   lipgloss.Style // each line of a fenced or indented code block
	Link        lipgloss.Style // a link's text
	URL         lipgloss.Style // a link's URL, shown after its text
	Quote       lipgloss.Style // the bar in front of quoted lines
	Marker      lipgloss.Style // list bullets and numbers
	Rule        lipgloss.Style // a thematic break
	TableBorder lipgloss.Style // a table's lines
	TableHeader lipgloss.Style // a table's header cells
}

// DarkTheme is for a dark terminal background (the default).
func DarkTheme() Theme {
	n, c := lipgloss.NewStyle, lipgloss.Color
	return Theme{
		Heading1:    n().Bold(true).Foreground(c("228")).Background(c("63")),
		Heading:     n().Bold(true).Foreground(c("39")),
		Strong:      n().Bold(true),
		Emph:        n().Italic(true),
		Strike:      n().Strikethrough(true),
		Code:        n().Foreground(c("203")).Background(c("236")),
		CodeBlock:   n().Foreground(c("251")),
		Link:        n().Foreground(c("35")).Bold(true),
		URL:         n().Foreground(c("30")),
		Quote:       n().Foreground(c("243")),
		Marker:      n().Foreground(c("245")),
		Rule:        n().Foreground(c("240")),
		TableBorder: n().Foreground(c("240")),
		TableHeader: n().Bold(true),
	}
}

// LightTheme is for a light terminal background.
func LightTheme() Theme {
	t := DarkTheme()
	n, c := lipgloss.NewStyle, lipgloss.Color
	t.Heading1 = n().Bold(true).Foreground(c("228")).Background(c("63"))
	t.Heading = n().Bold(true).Foreground(c("27"))
	t.Code = n().Foreground(c("203")).Background(c("254"))
	t.CodeBlock = n().Foreground(c("238"))
	t.Link = n().Foreground(c("36")).Bold(true)
	t.URL = n().Foreground(c("30"))
	t.Quote, t.Marker = n().Foreground(c("244")), n().Foreground(c("244"))
	t.Rule, t.TableBorder = n().Foreground(c("249")), n().Foreground(c("249"))
	return t
}

// PlainTheme has no colour (NO_COLOR): bold, italic, faint, reverse and
// strikethrough only.
func PlainTheme() Theme {
	n := lipgloss.NewStyle
	return Theme{
		Heading1:    n().Bold(true).Reverse(true),
		Heading:     n().Bold(true),
		Strong:      n().Bold(true),
		Emph:        n().Italic(true),
		Strike:      n().Strikethrough(true),
		Link:        n().Bold(true),
		URL:         n().Faint(true),
		TableHeader: n().Bold(true),
	}
}

// ThemeNamed returns the theme called name: "dark", "light", or "plain"
// ("ascii" and "notty" are taken as "plain"); anything else is "dark".
func ThemeNamed(name string) Theme {
	switch name {
	case "light":
		return LightTheme()
	case "plain", "ascii", "notty":
		return PlainTheme()
	}
	return DarkTheme()
}

// Markdown renders src for a terminal wrapped to width cells (width < 8
// is taken as 8): one string of lines joined by "\n", without trailing
// blanks or a final newline. It is Parse(src).Render(width, th) joined.
func Markdown(src string, width int, th Theme) string {
	return strings.Join(Parse(src).Render(width, th), "\n")
}

// Doc is parsed Markdown. Its top-level blocks (a paragraph, a heading,
// a whole list, a table, a code block …) render independently of each
// other, so a caller that shows a growing text (a streaming reply) can
// keep the lines of the blocks before the last and re-render only the
// last: a block's lines depend only on Source(i), width and the theme
// (a reference link whose definition is in a later block is the one
// exception: it renders as text until the definition arrives).
type Doc struct {
	src    []byte
	blocks []ast.Node
}

// Parse parses src as CommonMark with GFM tables, strikethrough and task
// lists. It never fails: any text is some Markdown.
func Parse(src string) *Doc {
	b := []byte(src)
	root := mdParser().Parse(text.NewReader(b))
	d := &Doc{src: b}
	for c := root.FirstChild(); c != nil; c = c.NextSibling() {
		d.blocks = append(d.blocks, c)
	}
	return d
}

// Len is the number of top-level blocks.
func (d *Doc) Len() int { return len(d.blocks) }

// Source is the source text of top-level block i, 0 ≤ i < Len(): from
// the block's first byte to the next block's first byte (or the end),
// trailing blank lines dropped. A streaming caller can compare it with
// the previous parse's to see whether block i is unchanged.
func (d *Doc) Source(i int) string {
	start := blockPos(d.blocks[i])
	end := len(d.src)
	if i+1 < len(d.blocks) {
		if p := blockPos(d.blocks[i+1]); p >= 0 {
			end = p
		}
	}
	if start < 0 || start > end {
		start = end
	}
	return strings.TrimRight(string(d.src[start:end]), " \t\r\n")
}

// blockPos is where a block starts in the source, -1 when unknown.
func blockPos(n ast.Node) int {
	if p := n.Pos(); p >= 0 {
		return p
	}
	if l := n.Lines(); l != nil && l.Len() > 0 {
		return l.At(0).Start
	}
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if p := blockPos(c); p >= 0 {
			return p
		}
	}
	return -1
}

// Block returns the lines of top-level block i at width cells (width < 8
// is taken as 8), each at most width cells wide, without trailing blanks.
func (d *Doc) Block(i, width int, th Theme) []string {
	r := &mdRenderer{src: d.src, th: &th}
	return r.block(d.blocks[i], max(width, 8), 0)
}

// Render returns the lines of all blocks, one blank line between two
// blocks; no lines for an empty document.
func (d *Doc) Render(width int, th Theme) []string {
	var out []string
	for i := range d.blocks {
		b := d.Block(i, width, th)
		if len(b) == 0 {
			continue
		}
		if len(out) > 0 {
			out = append(out, "")
		}
		out = append(out, b...)
	}
	return out
}

type mdRenderer struct {
	src []byte
	th  *Theme
}

// minNested is the narrowest text a quote or list indents to: one nested
// deeper draws no further bar or indent, so that no line is wider than
// the width and the output stays in proportion to the reply however deep
// a Brand nests (2,000 quotes in 3 KB drew 28 MB).
const minNested = 4

// bullets by list depth.
var bullets = [...]string{"•", "◦", "▪"}

func (r *mdRenderer) block(n ast.Node, width, depth int) []string {
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		return layout(r.inlines(n, nil), width)
	case *ast.Heading:
		if n.Level == 1 {
			base := r.th.Heading1
			pad := base.Render(" ")
			lines := layoutSpaced(r.inlines(n, &base), max(width-2, 1), &base)
			for i, l := range lines {
				lines[i] = pad + l + pad
			}
			return lines
		}
		base := r.th.Heading
		sp := append([]span{{text: strings.Repeat("#", n.Level) + " ", st: &base}}, r.inlines(n, &base)...)
		return layout(sp, width)
	case *ast.ThematicBreak:
		return []string{r.th.Rule.Render(strings.Repeat("─", width))}
	case *ast.Blockquote:
		if width-2 < minNested {
			// Too deep for another bar: the quote goes on at this indent.
			return r.children(n, width, depth, false)
		}
		bar := r.th.Quote.Render("│")
		lines := r.children(n, width-2, depth, false)
		for i, l := range lines {
			if l == "" {
				lines[i] = bar
			} else {
				lines[i] = bar + " " + l
			}
		}
		return lines
	case *ast.List:
		return r.list(n, width, depth)
	case *ast.FencedCodeBlock, *ast.CodeBlock:
		return r.code(n, width)
	case *ast.HTMLBlock:
		var sp []span
		for i := 0; i < n.Lines().Len(); i++ {
			seg := n.Lines().At(i)
			sp = append(sp, span{text: safeInline(strings.TrimRight(string(seg.Value(r.src)), "\r\n"))}, span{brk: true})
		}
		if n.HasClosure() {
			sp = append(sp, span{text: safeInline(strings.TrimRight(string(n.ClosureLine.Value(r.src)), "\r\n"))})
		}
		return layout(sp, width)
	case *tableNode:
		return r.table(n, width)
	}
	if n.Type() == ast.TypeInline {
		return layout(r.inlines(n.Parent(), nil), width)
	}
	return r.children(n, width, depth, false)
}

// children renders the child blocks of n, a blank line between two
// unless tight (a tight list item: its text and a nested list).
func (r *mdRenderer) children(n ast.Node, width, depth int, tight bool) []string {
	var out []string
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		b := r.block(c, width, depth)
		if len(b) == 0 {
			continue
		}
		if len(out) > 0 && !tight {
			out = append(out, "")
		}
		out = append(out, b...)
	}
	return out
}

func (r *mdRenderer) list(n *ast.List, width, depth int) []string {
	var markers []string
	for c, i := n.FirstChild(), 0; c != nil; c, i = c.NextSibling(), i+1 {
		if n.IsOrdered() {
			markers = append(markers, strconv.Itoa(n.Start+i)+string(n.Marker))
		} else {
			markers = append(markers, bullets[min(depth, len(bullets)-1)])
		}
	}
	mw := 0
	for _, m := range markers {
		mw = max(mw, ansi.StringWidth(m))
	}
	pad := strings.Repeat(" ", mw+1)
	inner := width - mw - 1
	if inner < minNested {
		// Too deep to indent again: each item's marker on a line of its
		// own, its text below at this indent.
		pad, inner = "", width
	}
	var out []string
	i := 0
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if i > 0 && !n.IsTight {
			out = append(out, "")
		}
		m := markers[i]
		m = strings.Repeat(" ", mw-ansi.StringWidth(m)) + m
		body := r.children(c, inner, depth+1, n.IsTight)
		if pad == "" {
			out = append(out, r.th.Marker.Render(cut(m, width)))
		} else if len(body) == 0 {
			body = []string{""}
		}
		for j, l := range body {
			switch {
			case j == 0 && pad != "":
				out = append(out, strings.TrimRight(r.th.Marker.Render(m)+" "+l, " "))
			case l == "":
				out = append(out, "")
			default:
				out = append(out, pad+l)
			}
		}
		i++
	}
	return out
}

// code draws a code block indented by two cells in the CodeBlock style;
// tabs become four spaces, and a line wider than the width continues on
// the next lines at its own indent.
func (r *mdRenderer) code(n ast.Node, width int) []string {
	const indent = "  "
	w := max(width-len(indent), 1)
	var raw strings.Builder
	for i := 0; i < n.Lines().Len(); i++ {
		seg := n.Lines().At(i)
		raw.Write(seg.Value(r.src))
	}
	src := strings.TrimRight(raw.String(), "\r\n")
	var out []string
	for _, l := range strings.Split(src, "\n") {
		l = strings.TrimRight(strings.ReplaceAll(iostreams.SanitizeLine(strings.ReplaceAll(strings.TrimRight(l, "\r"), "\t", "    ")), `\t`, "    "), " ")
		lead := len(l) - len(strings.TrimLeft(l, " "))
		if lead > w/2 {
			lead = w / 2
		}
		first := true
		for first || l != "" {
			room := w
			prefix := ""
			if !first {
				prefix = strings.Repeat(" ", lead)
				room = w - lead
				l = strings.TrimLeft(l, " ")
			}
			piece := cut(l, room)
			if len(piece) < len(l) {
				if piece == "" { // a wide character in one cell: give up on this line
					piece = l
				} else if sp := strings.LastIndexByte(piece, ' '); sp > 0 && strings.TrimLeft(piece[:sp], " ") != "" {
					piece = piece[:sp+1] // break after a space, not inside a word
				}
			}
			l = l[len(piece):]
			if s := strings.TrimRight(prefix+piece, " "); s == "" {
				out = append(out, "")
			} else {
				out = append(out, indent+r.th.CodeBlock.Render(s))
			}
			first = false
		}
	}
	return out
}

// table draws a GFM table with lipgloss/table. When it is wider than the
// width, the widest columns give up cells first, down to their longest
// word, and their cells wrap at spaces; only a table whose words do not
// fit either has words cut.
func (r *mdRenderer) table(n *tableNode, width int) []string {
	var cells [][][]span // row, column
	for row := n.FirstChild(); row != nil; row = row.NextSibling() {
		var rc [][]span
		for c := row.FirstChild(); c != nil; c = c.NextSibling() {
			rc = append(rc, r.inlines(c, nil))
		}
		cells = append(cells, rc)
	}
	cols := len(n.align)
	natural, words, heads := make([]int, cols), make([]int, cols), make([]int, cols)
	for i, rc := range cells {
		for c, sp := range rc {
			w := ansi.StringWidth(spanText(sp))
			natural[c] = max(natural[c], w)
			if i == 0 {
				heads[c] = w
			}
			for _, f := range strings.Fields(spanText(sp)) {
				words[c] = max(words[c], ansi.StringWidth(f))
			}
		}
	}
	// Borders: one cell before each column and after the last; padding:
	// one cell each side. Header cells stay on one line (lipgloss/table
	// draws headers one line high), so columns keep their header's width
	// while they can; past that a header is cut with "…".
	avail := max(width-(cols+1)-2*cols, cols)
	floor := make([]int, cols)
	for c := range floor {
		floor[c] = max(words[c], heads[c])
	}
	widths := fitColumns(natural, avail, floor, words)
	text := make([][]string, len(cells))
	for i, rc := range cells {
		for c, sp := range rc {
			cw := max(widths[c], 1)
			if i == 0 { // the header: one line, cut with "…" when it must be
				h := strings.Join(layout(sp, 1<<30), " ")
				if ansi.StringWidth(h) > cw {
					h = ansi.Truncate(h, cw, "…")
				}
				text[i] = append(text[i], h)
				continue
			}
			text[i] = append(text[i], strings.Join(layout(sp, cw), "\n"))
		}
	}
	th := r.th
	t := table.New().Border(lipgloss.RoundedBorder()).BorderStyle(th.TableBorder).
		StyleFunc(func(row, col int) lipgloss.Style {
			s := lipgloss.NewStyle().Padding(0, 1)
			if row == table.HeaderRow {
				s = th.TableHeader.Padding(0, 1)
			}
			if col < len(n.align) {
				switch n.align[col] {
				case alignRight:
					s = s.Align(lipgloss.Right)
				case alignCenter:
					s = s.Align(lipgloss.Center)
				}
			}
			return s
		})
	if len(text) > 0 {
		t = t.Headers(text[0]...).Rows(text[1:]...)
	}
	lines := strings.Split(t.String(), "\n")
	for i, l := range lines {
		if ansi.StringWidth(l) > width {
			l = ansi.Truncate(l, width, "")
		}
		lines[i] = l
	}
	return lines
}

// fitColumns returns column widths with a sum of at most avail (when it
// can): natural widths when they fit; else the widest column gives up
// cells down to its floor in the first of floors while any column can,
// then down to the next floors, and last below them all (words are cut),
// never below one cell.
func fitColumns(natural []int, avail int, floors ...[]int) []int {
	w := append([]int(nil), natural...)
	sum := 0
	for _, v := range w {
		sum += v
	}
	for _, floor := range append(floors, nil) {
		for sum > avail {
			fl := func(c int) int {
				if floor == nil {
					return 1
				}
				return max(floor[c], 1)
			}
			best := -1
			for c := range w {
				if w[c] > fl(c) && (best < 0 || w[c] > w[best]) {
					best = c
				}
			}
			if best < 0 {
				break
			}
			// Down to the next widest column (or the floor, or what is
			// needed) at once: long cells shrink in a few steps.
			next := fl(best)
			for c := range w {
				if c != best && w[c] < w[best] && w[c] > next {
					next = w[c]
				}
			}
			cut := max(min(w[best]-next, sum-avail), 1)
			w[best] -= cut
			sum -= cut
		}
	}
	return w
}

func spanText(sp []span) string {
	var b strings.Builder
	for _, s := range sp {
		if s.brk {
			b.WriteByte(' ')
		}
		b.WriteString(s.text)
	}
	return b.String()
}

// span is a run of inline text in one style (nil: unstyled); brk is a
// hard line break. Spans of one element share one *Style, which is how
// layout knows it can draw them (and the spaces between) in one piece.
type span struct {
	text string
	st   *lipgloss.Style
	brk  bool
}

// inlines flattens the inline children of n into spans; base (when not
// nil) is the style that inline styles add to (a heading's).
func (r *mdRenderer) inlines(n ast.Node, base *lipgloss.Style) []span {
	var out []span
	r.inline(n, base, &out)
	return out
}

// with is style s on top of the enclosing style st.
func with(s lipgloss.Style, st *lipgloss.Style) *lipgloss.Style {
	if st != nil {
		s = s.Inherit(*st)
	}
	return &s
}

func (r *mdRenderer) inline(n ast.Node, st *lipgloss.Style, out *[]span) {
	add := func(s string, st *lipgloss.Style) {
		if s != "" {
			*out = append(*out, span{text: safeInline(s), st: st})
		}
	}
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			r.text(resolve(c.Segment.Value(r.src)), st, out)
			// A single newline is a line break, as chat clients draw it (Slack, the
			// ChatGPT and Claude apps): Brands write for chat. CommonMark would fold it
			// into the paragraph, and a reply of 200 lines showed as one (issue 31).
			if c.HardLineBreak() || c.SoftLineBreak() {
				*out = append(*out, span{brk: true})
			}
		case *ast.String:
			if c.IsCode() {
				add(string(c.Value), st)
			} else {
				add(resolve(c.Value), st)
			}
		case *ast.CodeSpan:
			var b strings.Builder
			for t := c.FirstChild(); t != nil; t = t.NextSibling() {
				switch t := t.(type) {
				case *ast.Text:
					b.Write(t.Segment.Value(r.src))
				case *ast.String:
					b.Write(t.Value)
				}
			}
			code := b.String()
			if _, none := r.th.Code.GetBackground().(lipgloss.NoColor); !none && code != "" {
				code = "\u00a0" + code + "\u00a0" // a cell of the background on each side, never a break
			}
			add(code, with(r.th.Code, st))
		case *ast.Emphasis:
			s := r.th.Emph
			if c.Level >= 2 {
				s = r.th.Strong
			}
			r.inline(c, with(s, st), out)
		case *strikeNode:
			r.inline(c, with(r.th.Strike, st), out)
		case *ast.Link:
			before := len(*out)
			r.inline(c, with(r.th.Link, st), out)
			label := ""
			for _, s := range (*out)[before:] {
				label += s.text
			}
			dest := iostreams.SanitizeLine(string(c.Destination))
			if dest != "" && label != dest && "mailto:"+label != dest {
				add(" ", st)
				*out = append(*out, span{text: dest, st: with(r.th.URL, st)})
			}
		case *ast.AutoLink:
			url := string(c.URL(r.src))
			if c.AutoLinkType == ast.AutoLinkEmail {
				url = string(c.Label(r.src))
			}
			*out = append(*out, span{text: iostreams.SanitizeLine(url), st: with(r.th.URL, st)})
		case *ast.Image:
			var alt []span
			r.inline(c, st, &alt)
			label := "image"
			for i, s := range alt {
				if i == 0 {
					label += ": "
				}
				label += s.text
			}
			add("["+label+"]", with(r.th.Link, st))
			if len(c.Destination) > 0 {
				add(" ", st)
				*out = append(*out, span{text: iostreams.SanitizeLine(string(c.Destination)), st: with(r.th.URL, st)})
			}
		case *ast.RawHTML:
			for i := 0; i < c.Segments.Len(); i++ {
				seg := c.Segments.At(i)
				add(string(seg.Value(r.src)), st)
			}
		case *checkBoxNode:
			if c.checked {
				add("[x] ", st)
			} else {
				add("[ ] ", st)
			}
		default:
			r.inline(c, st, out)
		}
	}
}

// text adds plain text, drawing a bare web address in it (a word that
// starts with "https://" or "http://") in the URL style, as GFM's
// autolinks would show it; trailing punctuation is not part of it.
func (r *mdRenderer) text(s string, st *lipgloss.Style, out *[]span) {
	url := with(r.th.URL, st)
	for s != "" {
		i := strings.Index(s, "http")
		for i >= 0 && !((strings.HasPrefix(s[i:], "https://") || strings.HasPrefix(s[i:], "http://")) && (i == 0 || s[i-1] == ' ' || s[i-1] == '(' || s[i-1] == '<')) {
			j := strings.Index(s[i+4:], "http")
			if j < 0 {
				i = -1
				break
			}
			i += 4 + j
		}
		if i < 0 {
			break
		}
		end := i + strings.IndexAny(s[i:]+" ", " \t\n")
		for end > i && strings.ContainsRune(".,;:!?)'\"", rune(s[end-1])) {
			end--
		}
		if i > 0 {
			*out = append(*out, span{text: safeInline(s[:i]), st: st})
		}
		*out = append(*out, span{text: iostreams.SanitizeLine(s[i:end]), st: url})
		s = s[end:]
	}
	if s != "" {
		*out = append(*out, span{text: safeInline(s), st: st})
	}
}

// resolve turns entity and numeric references and backslash escapes into
// the characters they stand for (as an HTML renderer would show them).
func resolve(b []byte) string {
	return string(util.UnescapePunctuations(util.ResolveNumericReferences(util.ResolveEntityNames(b))))
}

// safeInline is Sanitize for one run of inline text: line breaks and tabs
// become spaces (wrapping is layout's job), everything else as Sanitize.
func safeInline(s string) string {
	s = iostreams.Sanitize(s)
	if strings.ContainsAny(s, "\n\t") {
		s = strings.NewReplacer("\n", " ", "\t", " ").Replace(s)
	}
	return s
}

// frag is a piece of one word in one style.
type frag struct {
	text string
	st   *lipgloss.Style
}

type word struct {
	frags []frag
	width int
	brk   bool // a hard line break, not a word
}

// lineBuf collects one output line as runs of one style each.
type lineBuf struct {
	runs  []frag
	width int
	space *lipgloss.Style // the style of a space between two runs of different styles
}

func (l *lineBuf) add(text string, st *lipgloss.Style) {
	if n := len(l.runs); n > 0 && l.runs[n-1].st == st {
		l.runs[n-1].text += text
	} else {
		l.runs = append(l.runs, frag{text, st})
	}
	l.width += ansi.StringWidth(text)
}

// addSpace adds a space between words: inside the run when the words on
// both sides share its style (next), else in the line's space style.
func (l *lineBuf) addSpace(next *lipgloss.Style) {
	if n := len(l.runs); n > 0 && l.runs[n-1].st == next {
		l.add(" ", next)
		return
	}
	l.add(" ", l.space)
}

func (l *lineBuf) String() string {
	var b strings.Builder
	for _, r := range l.runs {
		if r.st == nil {
			b.WriteString(r.text)
		} else {
			b.WriteString(r.st.Render(r.text))
		}
	}
	return b.String()
}

// layout wraps spans to width cells, breaking at spaces; a word wider
// than the width is cut. Each line is styled on its own, so it carries
// its styles and ends with them closed.
func layout(spans []span, width int) []string { return layoutSpaced(spans, width, nil) }

// layoutSpaced is layout with the spaces between words of different
// styles drawn in style sp (nil: unstyled), e.g. a heading's background.
func layoutSpaced(spans []span, width int, sp *lipgloss.Style) []string {
	var words []word
	var cur word
	flush := func() {
		if len(cur.frags) > 0 {
			words = append(words, cur)
		}
		cur = word{}
	}
	for _, s := range spans {
		if s.brk {
			flush()
			words = append(words, word{brk: true})
			continue
		}
		for i, p := range strings.Split(s.text, " ") {
			if i > 0 {
				flush()
			}
			if p != "" {
				cur.frags = append(cur.frags, frag{p, s.st})
				cur.width += ansi.StringWidth(p)
			}
		}
	}
	flush()

	var lines []string
	line := &lineBuf{space: sp}
	end := func() {
		lines = append(lines, line.String())
		line = &lineBuf{space: sp}
	}
	for _, w := range words {
		if w.brk {
			end()
			continue
		}
		if line.width > 0 && line.width+1+w.width > width {
			end()
		}
		if line.width > 0 {
			line.addSpace(w.frags[0].st)
		}
		if w.width <= width-line.width {
			for _, f := range w.frags {
				line.add(f.text, f.st)
			}
			continue
		}
		// Too wide for a line of its own: cut it.
		for _, f := range w.frags {
			t := f.text
			for t != "" {
				piece := cut(t, width-line.width)
				if piece == "" {
					if line.width > 0 {
						end()
						continue
					}
					piece = firstGrapheme(t)
				}
				line.add(piece, f.st)
				t = t[len(piece):]
				if t != "" {
					end()
				}
			}
		}
	}
	if line.width > 0 || len(lines) == 0 {
		end()
	}
	return lines
}

// cut is the longest prefix of s at most w cells wide (ansi.Truncate),
// looking at no more than 32 bytes a cell of s: cutting a long word or
// code line into pieces is then linear in its length, not quadratic (one
// word may be a Brand's whole 4 MiB reply). Text of graphemes over 32
// bytes a cell (stacked combining marks) gets shorter pieces.
func cut(s string, w int) string {
	if limit := 32 * (max(w, 0) + 1); len(s) > limit {
		for limit > 0 && !utf8.RuneStart(s[limit]) {
			limit--
		}
		s = s[:limit]
	}
	return truncate(s, w, "")
}

// truncate is ansi.Truncate; a test counts the bytes it is given.
var truncate = ansi.Truncate

func firstGrapheme(s string) string {
	for i := range s {
		if i > 0 {
			return s[:i]
		}
	}
	return s
}
