package tui

import (
	"strings"

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
	arrows              [3]string // "↑ ", "↓ ", "↕ " drawn: the margin where there is more text
}

// wrapping is where the rows of one line start (byte offsets, the first 0), at width w.
type wrapping struct {
	w      int
	starts []int
}

const promptWidth = 2

func newInput(st *styles, placeholder string) input {
	in := input{lines: []string{""}, wraps: make([]wrapping, 1), goal: -1, total: 1, w: 78, maxH: 5,
		wm: ansi.WcWidth, prompt: "> ", placeholder: placeholder,
		promptSt: st.user, cursorSt: st.cursor, placeholderSt: st.placeholder, text: st.input}
	for i, a := range []string{"↑ ", "↓ ", "↕ "} {
		in.arrows[i] = st.placeholder.Render(a)
	}
	return in
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
