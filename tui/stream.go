package tui

import (
	"context"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"
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
// rendering of its finished part. A growing Markdown text is drawn in two
// parts: the head, the paragraphs that are complete (up to the last blank
// line outside a code fence), rendered once and kept, and the unfinished
// tail, rendered again at every update. The head only changes when a
// paragraph ends.
type live struct {
	seq   int
	e     *entry
	head  string   // source of the kept head
	w     int      // width the head was rendered at
	gen   int      // scroller generation of the rendering (theme)
	lines []string // the head's rendering
	// renders counts head renderings (tests check that the head is kept).
	renders int
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
// the Brand's name: the kept head's lines, then the tail rendered now.
func (c *chat) renderLive(t Turn, width int) []string {
	l := c.live
	if l == nil {
		return renderTurn(&c.st, c.md, t, width, c.brandName())
	}
	if width < 8 {
		width = 8
	}
	const indent = "  "
	text := clean(t.Text)
	head, tail := splitFinished(text)
	if head != l.head || width != l.w || c.sb.gen != l.gen {
		l.head, l.w, l.gen = head, width, c.sb.gen
		l.lines = nil
		if head != "" {
			l.lines = c.md.render(head, width-len(indent))
			l.renders++
		}
	}
	body := slices.Clone(l.lines)
	if tail != "" {
		if len(body) > 0 {
			body = append(body, "")
		}
		body = append(body, c.md.render(tail, width-len(indent))...)
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

// splitFinished splits Markdown text at the last paragraph break (a blank
// line) that is not inside a fenced code block: head holds the finished
// blocks, tail the one still being written. Text with no such break is all
// tail.
func splitFinished(text string) (head, tail string) {
	cut := -1
	inFence := false
	off := 0
	lines := strings.SplitAfter(text, "\n")
	for i, ln := range lines {
		trim := strings.TrimSpace(ln)
		if strings.HasPrefix(trim, "```") || strings.HasPrefix(trim, "~~~") {
			inFence = !inFence
		}
		off += len(ln)
		// A blank line that is followed by more text ends a block.
		if !inFence && trim == "" && strings.HasSuffix(ln, "\n") && i > 0 && i < len(lines)-1 {
			cut = off
		}
	}
	if cut < 0 {
		return "", text
	}
	return strings.TrimRight(text[:cut], "\n"), text[cut:]
}
