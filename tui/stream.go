package tui

import (
	"context"
	"slices"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/pact-cli/pact/reply"
)

// Streamer is a Backend whose replies may arrive as they are written (A2A
// message:stream). SendStreaming and ResendStreaming are Send and Resend
// that call partial, from their own goroutine, with the reply's text so far
// each time it grows. The chat then shows the growing reply, and replaces
// it with Reply's turns when the reply is complete.
type Streamer interface {
	SendStreaming(ctx context.Context, text string, partial func(text string)) (Reply, error)
	ResendStreaming(ctx context.Context, partial func(text string)) (Reply, error)
}

// partialMsg is the text so far of the reply to send seq.
type partialMsg struct {
	seq  int
	text string
	ch   <-chan string
}

// liveTurnID marks the scrollback entry of a reply still arriving.
const liveTurnID = "\x00live"

// live is the reply being streamed: its entry in the scrollback and the
// rendering of its finished blocks. A growing Markdown text is parsed
// again at each update (reply.Parse), but only its last top-level block,
// the one still being written, is rendered again: the lines of the blocks
// before it are kept while their source is unchanged (reply.Doc: a
// block's lines depend only on its source, the width and the theme).
type live struct {
	seq    int
	e      *entry
	w      int         // width the kept blocks were rendered at
	gen    int         // scroller generation of the rendering (theme)
	blocks []keptBlock // the finished blocks' renderings, in order
	// renders counts renderings of finished blocks (tests check that they
	// are kept).
	renders int
}

type keptBlock struct {
	src   string
	lines []string
}

// partials returns the partial callback for send seq and the command that
// delivers its updates as partialMsg. Only the newest text waits: a slow
// screen skips the texts in between.
func partials(seq int) (func(string), tea.Cmd, func()) {
	ch := make(chan string, 1)
	put := func(text string) {
		for {
			select {
			case ch <- text:
				return
			default:
				select {
				case <-ch:
				default:
				}
			}
		}
	}
	done := func() { close(ch) }
	return put, waitPartial(seq, ch), done
}

func waitPartial(seq int, ch <-chan string) tea.Cmd {
	return func() tea.Msg {
		text, ok := <-ch
		if !ok {
			return nil
		}
		return partialMsg{seq: seq, text: text, ch: ch}
	}
}

// onPartial shows the reply so far and waits for the next update.
func (c *chat) onPartial(msg partialMsg) tea.Cmd {
	if c.pending == nil || c.pending.seq != msg.seq {
		return waitPartial(msg.seq, msg.ch) // abandoned: drain until the send ends
	}
	if c.live == nil || c.live.seq != msg.seq {
		c.dropLive()
		t := Turn{ID: liveTurnID, Role: RoleAgent, Text: msg.text, At: c.now()}
		c.sb.add(t)
		c.live = &live{seq: msg.seq, e: c.sb.entries[len(c.sb.entries)-1]}
	} else {
		c.live.e.turn.Text = msg.text
		c.live.e.version++
	}
	return waitPartial(msg.seq, msg.ch)
}

// dropLive removes the growing reply from the scrollback (the complete
// reply, or the error, takes its place).
func (c *chat) dropLive() {
	if c.live == nil {
		return
	}
	if i := slices.Index(c.sb.entries, c.live.e); i >= 0 {
		c.sb.entries = slices.Delete(c.sb.entries, i, i+1)
		c.sb.clampTop(c.width)
	}
	c.live = nil
}

// renderLive draws the growing reply like an agent turn, with "…" after
// the Brand's name: the kept blocks' lines, then the last block rendered
// now, one blank line between blocks (as reply.Doc.Render).
func (c *chat) renderLive(t Turn, width int) []string {
	l := c.live
	if l == nil {
		return renderTurn(&c.st, c.md, t, width, c.brandName())
	}
	if width < 8 {
		width = 8
	}
	const indent = "  "
	w := width - len(indent)
	doc := reply.Parse(clean(t.Text))
	if w != l.w || c.sb.gen != l.gen {
		l.w, l.gen, l.blocks = w, c.sb.gen, nil
	}
	var body []string
	add := func(lines []string) {
		if len(lines) == 0 {
			return
		}
		if len(body) > 0 {
			body = append(body, "")
		}
		body = append(body, lines...)
	}
	for i := 0; i < doc.Len(); i++ {
		src := doc.Source(i)
		if i == doc.Len()-1 {
			add(c.md.block(doc, i, w)) // the block still being written
			break
		}
		if i < len(l.blocks) && l.blocks[i].src == src {
			add(l.blocks[i].lines)
			continue
		}
		lines := c.md.block(doc, i, w)
		l.blocks = append(l.blocks[:i], keptBlock{src: src, lines: lines})
		l.renders++
		add(lines)
	}
	label := c.st.agent.Render(fit(c.brandName(), width/2)) + " " + c.st.dim.Render("…")
	lines := []string{fit(label, width)}
	for _, ln := range body {
		if ln == "" {
			lines = append(lines, "")
			continue
		}
		lines = append(lines, indent+ln)
	}
	return append(lines, "")
}

// block is the lines of top-level block i of doc at width, as render
// draws them (each at most width cells).
func (m *markdown) block(doc *reply.Doc, i, width int) []string {
	lines := doc.Block(i, width, m.theme)
	for j, l := range lines {
		if ansi.StringWidth(l) > width {
			lines[j] = ansi.Truncate(l, width, "")
		}
	}
	return lines
}
