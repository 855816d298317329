package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// View draws the screen on the alternate screen: header, rule, scrollback or panel,
// status, input, help. Its cost depends on the window size, not on the length of the
// conversation. The mouse is the terminal's (selecting and copying text, a tracking
// number) unless the User turned wheel scrolling on with /mouse: a terminal that reports
// the mouse to the program no longer selects with it (issue 31).
func (m Model) View() tea.View {
	v := tea.NewView(m.c.render())
	v.AltScreen = true
	if m.c.mouse {
		v.MouseMode = tea.MouseModeCellMotion
	}
	return v
}

// maxStatusRows is the most rows the status line wraps to: a notice is never cut before
// what matters in it (the code, what to do).
const maxStatusRows = 3

// statusRows is the status line wrapped to the window.
func (c *chat) statusRows(now time.Time) []string {
	s := c.statusLine(now)
	if s == "" {
		return []string{""}
	}
	rows := wrapStyled(s, max(c.width, 1))
	if len(rows) > maxStatusRows {
		rows = rows[:maxStatusRows]
		rows[maxStatusRows-1] = fit(rows[maxStatusRows-1]+" …", c.width)
	}
	for i := range rows {
		rows[i] = fit(rows[i], c.width)
	}
	return rows
}

// render is the screen as text, one line per row. On a window too short for everything
// the header goes first, then the help line: the input and the status line stay.
func (c *chat) render() string {
	w := c.width
	now := c.now()
	status := c.statusRows(now)
	qrows := c.queueRows()
	h := max(1, c.height-5-len(status)-len(qrows)-c.in.height())
	top := renderHeader(&c.st, c.header, now, w)
	top = append(top, c.st.rule.Render(strings.Repeat("─", w)))
	bottom := append(append(status, qrows...), c.in.view())
	help := c.st.help.Render(fit(joinFit(c.helpLine(), " · ", w), w))

	var area []string
	if c.panel != nil {
		area = c.panelWindow(c.panel.view(c, w, now), h)
	}
	if area == nil {
		area = c.sb.visible(w, h)
	}
	if len(area) > h {
		area = area[:h]
	}
	for len(area) < h {
		area = append(area, "")
	}
	// Rows left for the header and the help line once the area (one row at least), the
	// status and the input are drawn.
	spare := c.height - 1 - len(status) - len(qrows) - c.in.height() // the area's first row, status, queue, input
	showHelp := spare >= 1
	if showHelp {
		spare--
	}
	if spare < len(top) {
		top = top[:max(spare, 0)]
	}
	out := make([]string, 0, c.height+2)
	out = append(out, top...)
	out = append(out, area...)
	out = append(out, bottom...)
	if showHelp {
		out = append(out, help)
	}
	if len(out) > c.height {
		// The area gives way: the status and the input are at the bottom.
		cut := len(out) - c.height
		i := len(top)
		n := min(cut, max(len(area)-1, 0))
		out = append(out[:i], out[i+n:]...)
	}
	return strings.Join(out, "\n")
}

// statusLine is the line above the input: a flash message, the open panel's status, the
// wait, or the scroll state. A flash goes before the panel's status, never instead of it:
// the login countdown stays in view while a copy notice waits for the next key.
func (c *chat) statusLine(now time.Time) string {
	var ps string
	if c.panel != nil {
		ps = c.panel.status(c, now)
	}
	if c.flash != "" {
		if ps != "" {
			return c.st.status.Render(clean(c.flash)+" · ") + ps
		}
		return c.st.status.Render(clean(c.flash))
	}
	if ps != "" {
		return ps
	}
	queued := ""
	if n := len(c.queue); n > 0 {
		queued = fmt.Sprintf(" · %d queued", n)
		if c.paused {
			queued += " (held: Enter sends)"
		}
	}
	if c.hold != "" {
		queued += " · " + c.hold
	}
	switch {
	case c.editing != nil:
		return c.st.status.Render("Editing a queued message: Enter puts it back (empty: removes it) · Alt+↑/↓ the others · Esc leaves it" + queued)
	case c.waiting():
		return c.spin.View() + c.st.status.Render(" waiting for "+c.brandName()+" "+elapsed(now.Sub(c.pending.started))+queued)
	case c.pending != nil:
		return c.st.status.Render("the answer to your message is still on its way (Esc gives up on it)" + queued)
	case c.busy != "":
		return c.spin.View() + c.st.status.Render(" "+c.busy+queued)
	case c.paused:
		return c.st.status.Render(strings.TrimPrefix(queued, " · "))
	case c.sb.unseen && !c.sb.follow:
		return c.st.status.Render("↓ new messages below · End")
	case !c.sb.follow && len(c.sb.entries) > 0:
		return c.st.dim.Render(fmt.Sprintf("message %d of %d · End returns to the bottom", min(c.sb.top.turn+1, len(c.sb.entries)), len(c.sb.entries)))
	}
	return ""
}

// elapsed formats a wait: "3s", "1m05s".
func elapsed(d time.Duration) string {
	s := int(max(d, 0).Seconds())
	if s < 60 {
		return fmt.Sprintf("%ds", s)
	}
	return fmt.Sprintf("%dm%02ds", s/60, s%60)
}

// helpLine lists the keys of the current view, most important first.
func (c *chat) helpLine() []string {
	if c.panel != nil {
		return c.panel.help(c)
	}
	return c.keys.conversationHelp(c.waiting())
}

// joinFit joins items with sep, leaving out the items that do not fit in w cells.
func joinFit(items []string, sep string, w int) string {
	var b strings.Builder
	for _, it := range items {
		add := it
		if b.Len() > 0 {
			add = sep + it
		}
		if ansi.StringWidth(b.String())+ansi.StringWidth(add) > w {
			continue
		}
		b.WriteString(add)
	}
	return b.String()
}

// wrapStyled wraps a line that may carry styles.
func wrapStyled(s string, w int) []string {
	return strings.Split(ansi.Wrap(s, w, ""), "\n")
}

// panelWindow is the part of a panel's lines that fits in h rows, from c.panelTop: a
// panel taller than the window scrolls (PgUp, PgDn, the mouse wheel), a row at either end
// saying that there is more. nil stays nil (the panel leaves the conversation visible).
func (c *chat) panelWindow(lines []string, h int) []string {
	if lines == nil || len(lines) <= h || h < 3 {
		c.panelTop = 0
		return lines
	}
	c.panelTop = min(max(c.panelTop, 0), len(lines)-h)
	out := slices.Clone(lines[c.panelTop : c.panelTop+h])
	if c.panelTop > 0 {
		out[0] = c.st.dim.Render(fit("↑ more above · PgUp", c.width))
	}
	if c.panelTop+h < len(lines) {
		out[h-1] = c.st.dim.Render(fit("↓ more below · PgDn", c.width))
	}
	return out
}

// scrollPanel moves the open panel's view n rows (up when negative); it reports whether a
// panel is open that draws over the conversation.
func (c *chat) scrollPanel(n int) bool {
	if c.panel == nil || c.panel.view(c, c.width, c.now()) == nil {
		return false
	}
	c.panelTop += n
	return true
}
