package tui

import (
	"github.com/charmbracelet/x/ansi"

	"github.com/pact-cli/pact/reply"
)

// markdown draws agent replies as Markdown (reply.Markdown): the dark or light theme after
// the terminal's background (dark until the terminal says otherwise), or the plain theme
// (no colour) with NoColor.
type markdown struct {
	noColor bool
	light   bool
	theme   reply.Theme
}

func newMarkdown(noColor bool) *markdown {
	m := &markdown{noColor: noColor, theme: reply.DarkTheme()}
	if noColor {
		m.theme = reply.PlainTheme()
	}
	return m
}

// setDark picks the theme for a dark (or light) background; it reports whether the theme
// changed.
func (m *markdown) setDark(dark bool) bool {
	if m.noColor || m.light == !dark {
		return false
	}
	m.light = !dark
	if m.light {
		m.theme = reply.LightTheme()
	} else {
		m.theme = reply.DarkTheme()
	}
	return true
}

// render returns the lines of text as Markdown wrapped to width cells (the renderer
// sanitises every piece of text it draws), each at most width cells wide.
func (m *markdown) render(text string, width int) []string {
	lines := reply.Parse(text).Render(width, m.theme)
	for i, l := range lines {
		if ansi.StringWidth(l) > width {
			lines[i] = ansi.Truncate(l, width, "")
		}
	}
	if len(lines) == 0 {
		return []string{""}
	}
	return lines
}
