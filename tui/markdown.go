package tui

import (
	"reflect"
	"strings"

	"charm.land/glamour/v2"
	gansi "charm.land/glamour/v2/ansi"
	gstyles "charm.land/glamour/v2/styles"
	"github.com/charmbracelet/x/ansi"
)

// markdown draws agent replies as Markdown (glamour): the dark or light theme after the
// terminal's background (dark until the terminal says otherwise), or the plain ASCII theme
// with NoColor. One renderer is kept per width.
type markdown struct {
	noColor bool
	light   bool
	rs      map[int]*glamour.TermRenderer // by width; a few widths at most (resizes)
}

func newMarkdown(noColor bool) *markdown { return &markdown{noColor: noColor} }

// setDark picks the theme for a dark (or light) background; it reports whether the theme
// changed.
func (m *markdown) setDark(dark bool) bool {
	if m.noColor || m.light == !dark {
		return false
	}
	m.light = !dark
	m.rs = nil
	return true
}

func (m *markdown) config() gansi.StyleConfig {
	var c gansi.StyleConfig
	switch {
	case m.noColor:
		c = gstyles.DarkStyleConfig
		uncolor(reflect.ValueOf(&c).Elem())
	case m.light:
		c = gstyles.LightStyleConfig
	default:
		c = gstyles.DarkStyleConfig
	}
	// The chat indents and spaces turns itself.
	zero := uint(0)
	c.Document.Margin = &zero
	c.Document.BlockPrefix, c.Document.BlockSuffix = "", ""
	c.Document.Color = nil
	return c
}

// uncolor removes every colour of a style (fields Color and BackgroundColor, at any
// depth), keeping bold, italic, underline and the layout: Markdown for NO_COLOR.
func uncolor(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			uncolor(v.Elem())
		}
	case reflect.Struct:
		t := v.Type()
		for i := range v.NumField() {
			f := v.Field(i)
			if !f.CanSet() {
				continue
			}
			if n := t.Field(i).Name; (n == "Color" || n == "BackgroundColor") && f.Kind() == reflect.Pointer {
				f.Set(reflect.Zero(f.Type()))
				continue
			}
			if f.Kind() == reflect.Pointer && !f.IsNil() && f.Elem().Kind() == reflect.Struct {
				// Shared with the package's config: copy before changing.
				cp := reflect.New(f.Elem().Type())
				cp.Elem().Set(f.Elem())
				f.Set(cp)
			}
			uncolor(f)
		}
	}
}

// render returns the lines of text (already sanitised) as Markdown wrapped to width cells,
// or the plain wrapped text when it cannot be rendered.
func (m *markdown) render(text string, width int) []string {
	r := m.rs[width]
	if r == nil {
		var err error
		r, err = glamour.NewTermRenderer(glamour.WithStyles(m.config()), glamour.WithWordWrap(width))
		if err != nil {
			return wrap(text, width)
		}
		if len(m.rs) >= 4 {
			m.rs = nil
		}
		if m.rs == nil {
			m.rs = map[int]*glamour.TermRenderer{}
		}
		m.rs[width] = r
	}
	out, err := r.Render(text)
	if err != nil {
		return wrap(text, width)
	}
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		lines[i] = trimRightStyled(l)
	}
	for len(lines) > 0 && lines[0] == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
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

// trimRightStyled drops the trailing blanks glamour pads lines with; a line that is only
// blanks and styles becomes "".
func trimRightStyled(l string) string {
	p := ansi.Strip(l)
	t := strings.TrimRight(p, " ")
	if t == "" {
		return ""
	}
	if len(t) == len(p) {
		return l
	}
	return ansi.Truncate(l, ansi.StringWidth(t), "") + "\x1b[m"
}
