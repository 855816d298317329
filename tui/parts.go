package tui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/pact-cli/pact/reply"
)

// Non-text parts of agent replies: data is shown as indented JSON, files as name, type and
// size; /save writes the inline files of the last reply that has any.

// partLines draws the non-text parts of a turn for width cells.
func partLines(st *styles, parts []Part, width int) []string {
	var out []string
	for _, p := range parts {
		switch p.Kind {
		case PartData:
			out = append(out, st.dim.Render("data:"))
			var buf bytes.Buffer
			body := clean(string(p.JSON))
			if json.Indent(&buf, []byte(body), "", "  ") == nil {
				body = buf.String()
			}
			for _, l := range strings.Split(body, "\n") {
				for _, w := range st.wrap(l, max(width-2, 1)) {
					out = append(out, "  "+w)
				}
			}
		case PartFile:
			out = append(out, st.wrap("📎 "+fileLabel(p), width)...)
		}
	}
	return out
}

// fileLabel is "name (type, size)" for a file part, with how to get it.
func fileLabel(p Part) string {
	name := clean(p.Name)
	if name == "" {
		name = "unnamed file"
	}
	var meta []string
	if t := clean(p.MediaType); t != "" {
		meta = append(meta, t)
	}
	if p.URL != "" {
		return name + " (" + strings.Join(append(meta, "link"), ", ") + "): " + clean(p.URL)
	}
	if p.Data == nil && p.Note != "" {
		return name + " (" + strings.Join(meta, ", ") + "): " + clean(p.Note)
	}
	meta = append(meta, size(len(p.Data)))
	return name + " (" + strings.Join(meta, ", ") + ") · /save saves it"
}

// size formats a byte count for people: "512 B", "1.5 kB", "2.0 MB".
func size(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f kB", float64(n)/1000)
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
}

type savedMsg struct {
	paths []string
	err   error
}

// save writes the inline files of the last reply that has any into Options.SaveDir, as a
// command.
func (c *chat) save() tea.Cmd {
	var files []Part
	for i := len(c.sb.entries) - 1; i >= 0 && files == nil; i-- {
		for _, p := range c.sb.entries[i].turn.Parts {
			if p.Kind == PartFile && p.Data != nil {
				files = append(files, p)
			}
		}
	}
	if len(files) == 0 {
		c.flash = "No reply in this conversation has a file to save."
		return nil
	}
	dir := c.opts.SaveDir
	if dir == "" {
		dir = "."
	}
	return func() tea.Msg {
		var paths []string
		for i, f := range files {
			p, err := saveFile(dir, f, i)
			if err != nil {
				return savedMsg{paths: paths, err: err}
			}
			paths = append(paths, p)
		}
		return savedMsg{paths: paths}
	}
}

// saveFile writes f into dir under its own safe base name (or file-N), never over an
// existing file: "name (1).ext" and so on.
func saveFile(dir string, f Part, i int) (string, error) {
	return reply.WriteNew(dir, reply.SafeName(f.Name, i), f.Data, 1)
}

func (c *chat) onSaved(msg savedMsg) {
	for _, p := range msg.paths {
		c.notice("Saved " + p + ".")
	}
	if msg.err != nil {
		c.fail("Could not save the file: " + clean(msg.err.Error()))
	}
}
