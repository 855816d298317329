package tui

import (
	"strings"
	"unicode"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/rivo/uniseg"
)

// input is the message box: the chat's own editor, not bubbles' textarea, which moves and
// deletes by code point (Backspace took 🇯🇵 apart) and re-lays out the whole text on every
// key (a keystroke cost 0.6 s with 50 KB in it).
//
// The text is kept as lines; the cursor is a line and a byte offset on a grapheme cluster
// boundary (rivo/uniseg), so that moving and deleting work on characters as people see
// them. Widths are counted as the renderer counts them (wm): per code point (wcwidth) unless
// the terminal reported grapheme clustering (mode 2027). Each line's wrapping is kept and
// redone only when that line changes or the width does, and the box is drawn from the
// lines in view: a keystroke costs the same whatever the length of the text.
//
// What the User types or pastes is kept exactly; control characters are only drawn
// visibly (a tab as spaces, others as �), never sent to the terminal.
type input struct {
	lines []string
	wraps []wrapping // per line: where its rows start, for width w (nil: not computed)
	row   int        // the cursor's line
	col   int        // the cursor's byte offset in lines[row]
	goal  int        // the display column Up and Down aim for (-1: the cursor's own)
	total int        // rows of all lines at width w
	w     int        // cells for the text (the window minus the prompt)
	maxH  int        // the most rows the box shows
	top   pos        // the first row shown: line and row in it
	wm    ansi.Method

	prompt, placeholder string
	promptSt, cursorSt  lipgloss.Style
	placeholderSt, text lipgloss.Style
}

// wrapping is where the rows of one line start (byte offsets, the first 0), at width w.
type wrapping struct {
	w      int
	starts []int
}

const promptWidth = 2

func newInput(st *styles, placeholder string) input {
	return input{lines: []string{""}, wraps: make([]wrapping, 1), goal: -1, total: 1, w: 78, maxH: 5,
		wm: ansi.WcWidth, prompt: "> ", placeholder: placeholder,
		promptSt: st.user, cursorSt: st.cursor, placeholderSt: st.placeholder, text: st.input}
}

// maxInput is the tallest the input grows before it scrolls.
func maxInput(height int) int { return max(1, min(5, (height-8)/3)) }

// layout sizes the input for a w×h window.
func (in *input) layout(w, h int) {
	in.maxH = maxInput(h)
	// One cell is kept for the cursor after a full row's last character.
	if nw := max(w-promptWidth-1, 2); nw != in.w {
		in.w = nw
		in.rewrapAll()
	}
	in.scrollToCursor()
}

// setMethod counts widths with m from now on (the terminal reported mode 2027).
func (in *input) setMethod(m ansi.Method) {
	if m != in.wm {
		in.wm = m
		in.rewrapAll()
		in.scrollToCursor()
	}
}

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
	return len(r) == 1 && (unicode.IsControl(r[0]) || r[0] == '\u2028' || r[0] == '\u2029')
}

// drawn is s as the terminal is given it: control characters visible.
func drawn(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' }) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\t':
			b.WriteString("    ")
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029':
			b.WriteRune('�')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// height is the rows the box takes: its content's, at most maxH.
func (in *input) height() int { return max(1, min(in.maxH, in.total)) }

// empty reports whether the input holds no text (cheap: no copy of the text).
func (in *input) empty() bool { return len(in.lines) == 1 && in.lines[0] == "" }

// value is the whole text, lines joined with "\n".
func (in *input) value() string { return strings.Join(in.lines, "\n") }

func (in *input) reset() { in.set("") }

// set replaces the text; the cursor goes to its end.
func (in *input) set(s string) {
	in.lines = strings.Split(s, "\n")
	in.wraps = make([]wrapping, len(in.lines))
	in.rewrapAll()
	in.row = len(in.lines) - 1
	in.col = len(in.lines[in.row])
	in.goal = -1
	in.scrollToCursor()
}

// insert inserts s at the cursor, which goes after it.
func (in *input) insert(s string) {
	if s == "" {
		return
	}
	cur := in.lines[in.row]
	before, after := cur[:in.col], cur[in.col:]
	parts := strings.Split(s, "\n")
	if len(parts) == 1 {
		in.setLine(in.row, before+s+after)
		in.col += len(s)
	} else {
		nl := make([]string, 0, len(in.lines)+len(parts)-1)
		nl = append(nl, in.lines[:in.row]...)
		nl = append(nl, before+parts[0])
		nl = append(nl, parts[1:len(parts)-1]...)
		nl = append(nl, parts[len(parts)-1]+after)
		nl = append(nl, in.lines[in.row+1:]...)
		in.replaceLines(nl, in.row, len(parts))
		in.row += len(parts) - 1
		in.col = len(parts[len(parts)-1])
	}
	in.goal = -1
	in.scrollToCursor()
}

// paste inserts pasted text at the cursor, line ends normalised to "\n".
func (in *input) paste(s string) {
	in.insert(strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(s))
}

// setLine replaces line i, keeping the row count current.
func (in *input) setLine(i int, s string) {
	in.total -= len(in.wrapOf(i).starts)
	in.lines[i] = s
	in.wraps[i] = wrapping{}
	in.total += len(in.wrapOf(i).starts)
}

// replaceLines sets the lines to nl, where the lines from `from` (n lines of nl) are new;
// the others keep their wrapping. (A paste of many lines is the only O(lines) edit.)
func (in *input) replaceLines(nl []string, from, n int) {
	old := in.wraps
	removed := len(in.lines) - (len(nl) - n) // lines of the old text that were replaced
	in.wraps = make([]wrapping, len(nl))
	copy(in.wraps, old[:from])
	copy(in.wraps[from+n:], old[from+removed:])
	in.lines = nl
	in.total = 0
	for i := range nl {
		in.total += len(in.wrapOf(i).starts)
	}
}

// join merges line i+1 into line i.
func (in *input) join(i int) {
	nl := make([]string, 0, len(in.lines)-1)
	nl = append(nl, in.lines[:i]...)
	nl = append(nl, in.lines[i]+in.lines[i+1])
	nl = append(nl, in.lines[i+2:]...)
	in.total -= len(in.wrapOf(i).starts) + len(in.wrapOf(i+1).starts)
	copy(in.wraps[i+1:], in.wraps[i+2:])
	in.wraps = in.wraps[:len(in.wraps)-1]
	in.lines = nl
	in.wraps[i] = wrapping{}
	in.total += len(in.wrapOf(i).starts)
}

// prevBoundary and nextBoundary are the grapheme cluster boundaries around byte offset col
// of s.
func prevBoundary(s string, col int) int {
	last, off, state := 0, 0, -1
	rest := s
	for len(rest) > 0 && off < col {
		var cl string
		cl, rest, _, state = uniseg.FirstGraphemeClusterInString(rest, state)
		last = off
		off += len(cl)
	}
	return last
}

func nextBoundary(s string, col int) int {
	if col >= len(s) {
		return len(s)
	}
	// Clusters are found from the start of the line: a boundary depends on what precedes.
	off, state := 0, -1
	rest := s
	for len(rest) > 0 {
		var cl string
		cl, rest, _, state = uniseg.FirstGraphemeClusterInString(rest, state)
		off += len(cl)
		if off > col {
			return off
		}
	}
	return len(s)
}

// wordLeft and wordRight are where Alt+← and Alt+→ go: the start of the word before, the
// end of the word after.
func wordLeft(s string, col int) int {
	i := col
	for i > 0 && s[i-1] == ' ' {
		i--
	}
	for i > 0 && s[i-1] != ' ' {
		i--
	}
	return prevBoundary(s, nextBoundaryAtOrAfter(s, i))
}

func wordRight(s string, col int) int {
	i := col
	for i < len(s) && s[i] == ' ' {
		i++
	}
	for i < len(s) && s[i] != ' ' {
		i++
	}
	return nextBoundaryAtOrAfter(s, i)
}

// nextBoundaryAtOrAfter is the first cluster boundary at or after byte i.
func nextBoundaryAtOrAfter(s string, i int) int {
	if i <= 0 {
		return 0
	}
	b := prevBoundary(s, i)
	if b == i {
		return i
	}
	if nb := nextBoundary(s, b); nb >= i {
		return nb
	}
	return i
}

// edit applies an editing key: typing, moving by character, word, row or line, deleting by
// character or word. It reports whether the key was one of those.
func (in *input) edit(k tea.KeyPressMsg) bool {
	line := in.lines[in.row]
	keepGoal := false
	switch k.String() {
	case "left", "ctrl+b":
		if in.col > 0 {
			in.col = prevBoundary(line, in.col)
		} else if in.row > 0 {
			in.row--
			in.col = len(in.lines[in.row])
		}
	case "right", "ctrl+f":
		if in.col < len(line) {
			in.col = nextBoundary(line, in.col)
		} else if in.row < len(in.lines)-1 {
			in.row++
			in.col = 0
		}
	case "alt+left", "ctrl+left", "alt+b":
		in.col = wordLeft(line, in.col)
	case "alt+right", "ctrl+right", "alt+f":
		in.col = wordRight(line, in.col)
	case "home", "ctrl+a":
		in.col = 0
	case "end", "ctrl+e":
		in.col = len(line)
	case "up", "ctrl+p":
		in.vertical(-1)
		keepGoal = true
	case "down", "ctrl+n":
		in.vertical(1)
		keepGoal = true
	case "backspace", "ctrl+h":
		if in.col > 0 {
			p := prevBoundary(line, in.col)
			in.setLine(in.row, line[:p]+line[in.col:])
			in.col = p
		} else if in.row > 0 {
			in.col = len(in.lines[in.row-1])
			in.row--
			in.join(in.row)
		}
	case "delete", "ctrl+d":
		if in.col < len(line) {
			in.setLine(in.row, line[:in.col]+line[nextBoundary(line, in.col):])
		} else if in.row < len(in.lines)-1 {
			in.join(in.row)
		}
	case "ctrl+w", "alt+backspace":
		p := wordLeft(line, in.col)
		in.setLine(in.row, line[:p]+line[in.col:])
		in.col = p
	case "alt+delete", "alt+d":
		p := wordRight(line, in.col)
		in.setLine(in.row, line[:in.col]+line[p:])
	case "ctrl+k":
		if in.col < len(line) {
			in.setLine(in.row, line[:in.col])
		} else if in.row < len(in.lines)-1 {
			in.join(in.row)
		}
	default:
		if k.Text == "" || k.Mod&(tea.ModCtrl|tea.ModAlt) != 0 {
			return false
		}
		in.insert(k.Text)
		return true
	}
	if !keepGoal {
		in.goal = -1
	}
	in.scrollToCursor()
	return true
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
		p = next
	}
	return strings.Join(rows, "\n")
}

func firstCluster(s string) string {
	cl, _, _, _ := uniseg.FirstGraphemeClusterInString(s, -1)
	return cl
}
