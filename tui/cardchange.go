package tui

import (
	"context"
	"errors"
	"io"
	"os"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
)

// CardChange is a Brand's Agent Card that no longer matches what the User accepted before
// (another Provider, interface URL or signing key). Nothing has been sent to the Provider.
type CardChange struct {
	// Brand is the Brand as the User named it.
	Brand string
	// Changes names what differs, in plain words ("another Provider", "no longer signed").
	Changes []string
	// Rows are (label, accepted, now), one per pinned field, shown side by side.
	Rows [][3]string
}

// cardChangeModel is the y/n panel. The answer is a line: y (or yes) then Enter trusts the
// new card, n (or no) then Enter quits without sending anything, and so do Esc and Ctrl+C at
// any time. A lone key press never decides: text typed in a burst by someone who thought they
// were in the chat ("my order", "/login") only fills the answer line, and Enter on anything
// but y or n asks again. Pasted text is ignored. What y accepts is exactly what the panel
// shows (the caller records CardChange's new values, it fetches nothing again).
type cardChangeModel struct {
	c        CardChange
	st       styles
	keys     keyMap
	width    int
	height   int    // 0: not known yet (24 rows are assumed)
	top      int    // the first row of the comparison shown when it does not fit
	page     int    // rows of the comparison shown at the last render
	answer   []rune // typed since the panel appeared or since the last Enter
	again    bool   // Enter was pressed on something other than y or n
	accepted bool
}

// maxAnswer bounds the answer line (longer input is not an answer anyway).
const maxAnswer = 32

func (m *cardChangeModel) Init() tea.Cmd { return nil }

// is reports whether the typed answer is one of the keys of b (y/Y, n/N) or word (yes, no).
func is(answer string, b key.Binding, word string) bool {
	return strings.EqualFold(answer, word) || slices.Contains(b.Keys(), answer)
}

func (m *cardChangeModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
	case tea.KeyPressMsg:
		if step := m.scrollStep(msg); step != 0 {
			m.top += step // render keeps it in range
			return m, nil
		}
		switch {
		case keyMatches(msg, m.keys.Quit, m.keys.Cancel):
			return m, tea.Quit
		case keyMatches(msg, m.keys.Send):
			answer := strings.TrimSpace(string(m.answer))
			m.answer = nil
			switch {
			case is(answer, m.keys.Yes, "yes"):
				m.accepted = true
				return m, tea.Quit
			case is(answer, m.keys.No, "no"):
				return m, tea.Quit
			}
			m.again = true
		case msg.Code == tea.KeyBackspace:
			if len(m.answer) > 0 {
				m.answer = m.answer[:len(m.answer)-1]
			}
		case msg.Text != "" && msg.Mod&^tea.ModShift == 0:
			if len(m.answer) < maxAnswer {
				m.answer = append(m.answer, []rune(msg.Text)...)
			}
		}
	}
	return m, nil
}

// scrollStep is how many rows a key scrolls the comparison: PgUp/PgDn a page, Up/Down a
// row; 0 for other keys.
func (m *cardChangeModel) scrollStep(k tea.KeyPressMsg) int {
	page := max(1, m.page-1)
	switch {
	case keyMatches(k, m.keys.PageUp):
		return -page
	case keyMatches(k, m.keys.PageDown):
		return page
	case k.Code == tea.KeyUp && k.Mod == 0:
		return -1
	case k.Code == tea.KeyDown && k.Mod == 0:
		return 1
	}
	return 0
}

// rows is the window's height.
func (m *cardChangeModel) rows() int {
	if m.height <= 0 {
		return 24
	}
	return m.height
}

func (m *cardChangeModel) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true // no mouse mode: the values stay selectable with the mouse
	return v
}

// render lays the panel out for the window: the question and the answer line always at
// the bottom, what changed above them, scrolled (PgUp/PgDn, arrows) with a mark at the
// top and the bottom when it does not fit the height.
func (m *cardChangeModel) render() string {
	body, foot := m.layout()
	h := m.rows()
	if len(body)+len(foot) <= h {
		m.top = 0
		return strings.Join(append(body, foot...), "\n")
	}
	if h-len(foot) < 3 && len(foot) > 2 {
		// A very short window: the question and the answer line only.
		foot = append(foot[:1:1], foot[len(foot)-1])
	}
	avail := max(h-len(foot), 0)
	lines := make([]string, 0, h)
	if avail >= 2 {
		maxTop := len(body) - (avail - 1) // at the end only the "above" mark is shown
		m.top = min(max(m.top, 0), maxTop)
		rows := avail
		if m.top > 0 {
			rows--
			lines = append(lines, m.st.dim.Render(fit("↑ more above · PgUp", m.width)))
		}
		below := m.top+rows < len(body)
		if below {
			rows--
		}
		lines = append(lines, body[m.top:m.top+rows]...)
		m.page = rows
		if below {
			lines = append(lines, m.st.dim.Render(fit("↓ more below · PgDn", m.width)))
		}
	}
	lines = append(lines, foot...)
	if len(lines) > h {
		lines = lines[len(lines)-h:]
	}
	return strings.Join(lines, "\n")
}

// layout is the panel as rows at the window's width: what changed (body), then the
// question and the answer line (foot). Old and new values are side by side when every
// value fits, else one block per field with "accepted" and "now" on rows of their own;
// values and sentences wrap, never cut, so that both are readable in full at any width.
func (m *cardChangeModel) layout() (body, foot []string) {
	w := m.width
	if w <= 0 {
		w = 80
	}
	var lines []string
	para := func(style func(...string) string, s string) {
		for _, l := range wrap(s, w) {
			lines = append(lines, style(l))
		}
	}
	plainStyle := func(s ...string) string { return strings.Join(s, "") }
	para(m.st.bad.Render, "The Agent Card of "+cleanLine(m.c.Brand)+" changed")
	para(m.st.dim.Render, clean(strings.Join(m.c.Changes, ", ")))
	para(plainStyle, "Nothing has been sent. Compare what you accepted with what the Brand's card says now:")
	lines = append(lines, "")
	type row struct{ label, old, cur string }
	var rows []row
	w0, w1, w2 := 0, len("accepted"), len("now")
	for _, r := range m.c.Rows {
		x := row{clean(r[0]), clean(r[1]), clean(r[2])}
		rows = append(rows, x)
		w0, w1, w2 = max(w0, ansi.StringWidth(x.label)), max(w1, ansi.StringWidth(x.old)), max(w2, ansi.StringWidth(x.cur))
	}
	pad := func(s string, n int) string { return s + strings.Repeat(" ", max(0, n-ansi.StringWidth(s))) }
	if 2+w0+2+w1+2+w2 <= w {
		lines = append(lines, m.st.dim.Render("  "+pad("", w0)+"  "+pad("accepted", w1)+"  now"))
		for _, r := range rows {
			line := "  " + pad(r.label, w0) + "  " + pad(r.old, w1) + "  "
			if r.old != r.cur {
				line = m.st.bad.Render("≠") + line[1:] + m.st.bad.Render(r.cur)
			} else {
				line += r.cur
			}
			lines = append(lines, line)
		}
	} else {
		const indent = "    "
		value := func(label, v string, style func(...string) string) {
			vw := max(1, w-len(indent)-len("accepted  "))
			for i, l := range wrap(v, vw) {
				if i == 0 {
					lines = append(lines, indent+m.st.dim.Render(pad(label, len("accepted")))+"  "+style(l))
				} else {
					lines = append(lines, indent+strings.Repeat(" ", len("accepted  "))+style(l))
				}
			}
		}
		for _, r := range rows {
			head := "  " + r.label
			curStyle := plainStyle
			if r.old != r.cur {
				head, curStyle = m.st.bad.Render("≠")+" "+r.label, m.st.bad.Render
			}
			lines = append(lines, head)
			value("accepted", r.old, plainStyle)
			value("now", r.cur, curStyle)
		}
	}
	lines = append(lines, "")
	para(plainStyle, "If you did not expect this, someone may be pointing the Brand at another Provider.")
	body, lines = lines, nil
	para(m.st.title.Render, "Trust the new card and continue?")
	para(plainStyle, "Type y and press Enter to trust it; n and Enter, or Esc, to quit.")
	if m.again {
		para(m.st.bad.Render, "Answer y or n, then press Enter.")
	}
	lines = append(lines, fit("> "+clean(string(m.answer))+"█", w))
	return body, lines
}

// AskCardChange shows c full-screen on a terminal (in, out) and asks the User whether to
// trust the new card: true for y then Enter, false for n then Enter, Esc or Ctrl+C. It returns ctx.Err() when
// ctx ends first.
func AskCardChange(ctx context.Context, in io.Reader, out io.Writer, opts Options, c CardChange) (bool, error) {
	if os.Getenv("NO_COLOR") != "" {
		opts.NoColor = true
	}
	m := &cardChangeModel{c: c, st: newStyles(opts.NoColor), keys: defaultKeys()}
	popts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out)}
	if opts.NoColor {
		popts = append(popts, tea.WithColorProfile(colorprofile.Ascii))
	}
	p := tea.NewProgram(m, popts...)
	if _, err := p.Run(); err != nil {
		if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
			return false, ctx.Err()
		}
		return false, err
	}
	return m.accepted, nil
}
