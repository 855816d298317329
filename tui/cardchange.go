package tui

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
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

// cardChangeModel is the y/n panel: y trusts the new card, n (or Esc, q, Ctrl+C) quits
// without sending anything.
type cardChangeModel struct {
	c        CardChange
	st       styles
	width    int
	accepted bool
}

func (m *cardChangeModel) Init() tea.Cmd { return nil }

func (m *cardChangeModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width = msg.Width
	case tea.KeyPressMsg:
		switch strings.ToLower(msg.String()) {
		case "y":
			m.accepted = true
			return m, tea.Quit
		case "n", "q", "esc", "ctrl+c":
			return m, tea.Quit
		}
	}
	return m, nil
}

func (m *cardChangeModel) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	return v
}

func (m *cardChangeModel) render() string {
	w := m.width
	if w <= 0 {
		w = 80
	}
	var lines []string
	lines = append(lines,
		m.st.bad.Render("The Agent Card of "+clean(m.c.Brand)+" changed")+m.st.dim.Render(" · "+clean(strings.Join(m.c.Changes, ", "))),
		"Nothing has been sent. Compare what you accepted with what the Brand's card says now:",
		"")
	w0, w1 := 0, len("accepted")
	for _, r := range m.c.Rows {
		w0, w1 = max(w0, len(clean(r[0]))), max(w1, len(clean(r[1])))
	}
	pad := func(s string, n int) string { return s + strings.Repeat(" ", max(0, n-len(s))) }
	lines = append(lines, m.st.dim.Render("  "+pad("", w0)+"  "+pad("accepted", w1)+"  now"))
	for _, r := range m.c.Rows {
		label, old, cur := clean(r[0]), clean(r[1]), clean(r[2])
		row := "  " + pad(label, w0) + "  " + pad(old, w1) + "  "
		if old != cur {
			row = m.st.bad.Render("≠") + row[1:] + m.st.bad.Render(cur)
		} else {
			row += cur
		}
		lines = append(lines, row)
	}
	lines = append(lines, "",
		"If you did not expect this, someone may be pointing the Brand at another Provider.",
		m.st.title.Render("Trust the new card and continue?")+" "+m.st.code.Render(" y ")+" yes  "+m.st.code.Render(" n ")+" no, quit")
	for i := range lines {
		lines[i] = fit(lines[i], w)
	}
	return strings.Join(lines, "\n")
}

// AskCardChange shows c full-screen on a terminal (in, out) and asks the User whether to
// trust the new card: true for y, false for n, Esc, q or Ctrl+C. It returns ctx.Err() when
// ctx ends first.
func AskCardChange(ctx context.Context, in io.Reader, out io.Writer, opts Options, c CardChange) (bool, error) {
	if os.Getenv("NO_COLOR") != "" {
		opts.NoColor = true
	}
	m := &cardChangeModel{c: c, st: newStyles(opts.NoColor)}
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
