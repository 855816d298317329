package tui

import (
	"strings"
	"unicode"

	"github.com/charmbracelet/x/ansi"
	"github.com/rivo/uniseg"
)

// The input's layout and drawing: each line wrapped to the box's width (kept until the
// line or the width changes), the cursor's row, the rows in view.

// rewrapAll wraps every line again (a new width or way of counting) and recounts the rows.
func (in *input) rewrapAll() {
	in.total = 0
	for i := range in.lines {
		in.wraps[i] = wrapping{}
		in.total += len(in.wrapOf(i).starts)
	}
}

// wrapOf returns line i's rows at the current width, computing them when stale.
func (in *input) wrapOf(i int) wrapping {
	if wr := in.wraps[i]; wr.w == in.w && wr.starts != nil {
		return wr
	}
	wr := wrapping{w: in.w, starts: in.wrapLine(in.lines[i])}
	in.wraps[i] = wr
	return wr
}

// wrapLine breaks s into rows of at most w cells, after a space when a row has one, else
// between two characters.
func (in *input) wrapLine(s string) []int {
	starts := []int{0}
	width, lastSpace, off := 0, -1, 0
	state := -1
	rest := s
	for len(rest) > 0 {
		var cl string
		cl, rest, _, state = uniseg.FirstGraphemeClusterInString(rest, state)
		cw := in.clusterWidth(cl)
		rowStart := starts[len(starts)-1]
		if width+cw > in.w && off > rowStart {
			if lastSpace > rowStart {
				starts = append(starts, lastSpace)
				width = in.width(s[lastSpace:off])
			} else {
				starts = append(starts, off)
				width = 0
			}
			lastSpace = -1
		}
		width += cw
		off += len(cl)
		if cl == " " {
			lastSpace = off
		}
	}
	return starts
}

// clusterWidth is the cells a character takes as drawn (drawn: a tab is 4 spaces, another
// control character one �).
func (in *input) clusterWidth(cl string) int {
	if cl == "\t" {
		return 4
	}
	if isControl(cl) {
		return 1
	}
	return in.wm.StringWidth(cl)
}

func (in *input) width(s string) int {
	n, state := 0, -1
	for len(s) > 0 {
		var cl string
		cl, s, _, state = uniseg.FirstGraphemeClusterInString(s, state)
		n += in.clusterWidth(cl)
	}
	return n
}

func isControl(cl string) bool {
	r := []rune(cl)
	return len(r) == 1 && isControlRune(r[0])
}

// drawn is s as the terminal is given it: control characters visible, each as its symbol
// of Unicode's Control Pictures (ESC as ␛, NUL as ␀, DEL as ␡; others as �), one cell.
func drawn(s string) string {
	if !strings.ContainsFunc(s, isControlRune) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\t':
			b.WriteString("    ")
		case r < 0x20:
			b.WriteRune(0x2400 + r)
		case r == 0x7f:
			b.WriteRune('␡')
		case isControlRune(r):
			b.WriteRune('�')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isControlRune(r rune) bool { return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' }

// unpaste is the text of a bracketed paste as the User pasted it: the reader passes each
// ESC in it as pastedEsc (reader.go), which the decoder keeps.
func unpaste(s string) string { return strings.ReplaceAll(s, pastedEsc, "\x1b") }

// hasControls reports whether pasted text holds control characters other than line breaks
// and tabs (an escape sequence copied from a terminal).
func hasControls(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r != '\n' && r != '\r' && r != '\t' && isControlRune(r) })
}

// cursorRow is the row of line in.row the cursor is on, and its display column in it.
func (in *input) cursorRow() (sub, x int) {
	starts := in.wrapOf(in.row).starts
	sub = len(starts) - 1
	for sub > 0 && starts[sub] > in.col {
		sub--
	}
	return sub, in.width(in.lines[in.row][starts[sub]:in.col])
}

// vertical moves the cursor d rows up or down, to the display column it aims for.
func (in *input) vertical(d int) {
	sub, x := in.cursorRow()
	if in.goal < 0 {
		in.goal = x
	}
	row, s := in.row, sub+d
	starts := in.wrapOf(row).starts
	switch {
	case s < 0:
		if row == 0 {
			in.col = 0
			return
		}
		row--
		s = len(in.wrapOf(row).starts) - 1
	case s >= len(starts):
		if row == len(in.lines)-1 {
			in.col = len(in.lines[row])
			return
		}
		row++
		s = 0
	}
	in.row = row
	in.col = in.colAt(row, s, in.goal)
}

// colAt is the byte offset in line i, row sub, at display column x (or the row's end).
func (in *input) colAt(i, sub, x int) int {
	line := in.lines[i]
	starts := in.wrapOf(i).starts
	off, end := starts[sub], len(line)
	if sub+1 < len(starts) {
		end = starts[sub+1]
	}
	wsum, state := 0, -1
	rest := line[off:end]
	for len(rest) > 0 {
		var cl string
		cl, rest, _, state = uniseg.FirstGraphemeClusterInString(rest, state)
		cw := in.clusterWidth(cl)
		if wsum+cw > x {
			break
		}
		wsum += cw
		off += len(cl)
	}
	if off == end && sub+1 < len(starts) && off > starts[sub] {
		// The end of a wrapped row is the start of the next: stay on this row.
		return prevBoundary(line, off)
	}
	return off
}

// scrollToCursor keeps the cursor's row in the box, moving the view only as far as
// needed, and fills the box when the text ends above its bottom. It looks at no more rows
// than the box has.
func (in *input) scrollToCursor() {
	sub, _ := in.cursorRow()
	cur := pos{in.row, sub}
	h := in.height()
	if in.top.turn >= len(in.lines) {
		in.top = pos{len(in.lines) - 1, 0}
	}
	if n := len(in.wrapOf(in.top.turn).starts); in.top.line >= n {
		in.top.line = n - 1
	}
	if cur.before(in.top) {
		in.top = cur
	}
	// The top is at most h-1 rows before the cursor.
	t := cur
	for n := 1; n < h; n++ {
		prev, ok := in.prevRow(t)
		if !ok {
			break
		}
		t = prev
	}
	if in.top.before(t) {
		in.top = t
	}
	// No empty rows below the text while there are rows above the view.
	for in.rowsFrom(in.top, h) < h {
		prev, ok := in.prevRow(in.top)
		if !ok {
			break
		}
		in.top = prev
	}
}

// rowsFrom counts the rows from p to the end of the text, at most limit.
func (in *input) rowsFrom(p pos, limit int) int {
	n := 1
	for n < limit {
		next, ok := in.nextRow(p)
		if !ok {
			break
		}
		p = next
		n++
	}
	return n
}

func (in *input) prevRow(p pos) (pos, bool) {
	if p.line > 0 {
		return pos{p.turn, p.line - 1}, true
	}
	if p.turn == 0 {
		return p, false
	}
	return pos{p.turn - 1, len(in.wrapOf(p.turn-1).starts) - 1}, true
}

func (in *input) nextRow(p pos) (pos, bool) {
	if p.line+1 < len(in.wrapOf(p.turn).starts) {
		return pos{p.turn, p.line + 1}, true
	}
	if p.turn+1 >= len(in.lines) {
		return p, false
	}
	return pos{p.turn + 1, 0}, true
}

// view draws the box: the rows in view, the prompt before the first row of the text, the
// cursor as a reversed cell.
func (in *input) view() string {
	if in.empty() {
		ph := ansi.Truncate(in.placeholder, max(in.w, 0), "…")
		first, rest := "", ""
		if ph != "" {
			first, rest = ph[:len(firstCluster(ph))], ph[len(firstCluster(ph)):]
		} else {
			first = " "
		}
		return in.promptSt.Render(in.prompt) + in.cursorSt.Render(first) + in.placeholderSt.Render(rest)
	}
	h := in.height()
	rows := make([]string, 0, h)
	p := in.top
	below := false // rows after the last one shown
	csub, _ := in.cursorRow()
	for len(rows) < h {
		line := in.lines[p.turn]
		starts := in.wrapOf(p.turn).starts
		a, b := starts[p.line], len(line)
		if p.line+1 < len(starts) {
			b = starts[p.line+1]
		}
		seg := line[a:b]
		var text string
		if p.turn == in.row && p.line == csub {
			c := in.col - a
			at := seg[c:]
			cl := firstCluster(at)
			cursor := " "
			if cl != "" {
				cursor = drawn(cl)
			}
			text = in.text.Render(drawn(seg[:c])) + in.cursorSt.Render(cursor) + in.text.Render(drawn(at[len(cl):]))
		} else {
			text = in.text.Render(drawn(seg))
		}
		prefix := "  "
		if p.turn == 0 && p.line == 0 {
			prefix = in.promptSt.Render(in.prompt)
		}
		rows = append(rows, prefix+text)
		next, ok := in.nextRow(p)
		if !ok {
			break
		}
		p, below = next, len(rows) == h
	}
	// More text than the box shows: an arrow in the margin of its first row (text above)
	// and of its last (text below).
	_, above := in.prevRow(in.top)
	if len(rows) == h && (above || below) {
		first := in.arrows[0]
		if h == 1 && above && below {
			first = in.arrows[2]
		}
		if above {
			rows[0] = first + strings.TrimPrefix(rows[0], "  ")
		}
		if below && (h > 1 || !above) {
			rows[h-1] = in.arrows[1] + strings.TrimPrefix(rows[h-1], "  ")
		}
	}
	return strings.Join(rows, "\n")
}

func firstCluster(s string) string {
	cl, _, _, _ := uniseg.FirstGraphemeClusterInString(s, -1)
	return cl
}
