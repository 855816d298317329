package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// The queue: messages submitted while a reply is on its way, sent in order, shown above the
// input. ↑ on an empty input edits the last one (Alt+↑/Alt+↓ move to the others), Enter
// puts it back where it was, and an emptied one is removed.

// queued is a message waiting to be sent, or held after a failed attempt.
type queued struct {
	text string
	e    *entry // its "You" turn once an attempt was drawn (redrawn, never added again)
}

// editQueued starts editing the queued message i in the input, which is empty.
func (c *chat) editQueued(i int) {
	if i < 0 || i >= len(c.queue) {
		return
	}
	c.editing = c.queue[i]
	c.in.set(c.editing.text)
	c.layout()
}

// moveEdit puts the input back into the message being edited and edits the one d places
// from it.
func (c *chat) moveEdit(d int) {
	i := c.queueIndex(c.editing)
	if i < 0 {
		return
	}
	j := min(max(i+d, 0), len(c.queue)-1)
	if j == i {
		return
	}
	c.editing.text = c.in.value()
	c.editQueued(j)
}

func (c *chat) queueIndex(q *queued) int {
	for i, x := range c.queue {
		if x == q {
			return i
		}
	}
	return -1
}

// commitEdit is Enter while editing a queued message: it takes the input's text, or is
// removed from the queue when the input was emptied; the queue then goes on.
func (c *chat) commitEdit() tea.Cmd {
	q := c.editing
	c.editing = nil
	text := trimBlankLines(c.in.value())
	c.in.reset()
	c.layout()
	if i := c.queueIndex(q); i >= 0 {
		if text == "" {
			c.queue = append(c.queue[:i], c.queue[i+1:]...)
			c.flash = "Removed from the queue."
		} else {
			q.text = text
		}
	}
	return c.next()
}

// cancelEdit leaves the message being edited as it was and empties the input.
func (c *chat) cancelEdit() {
	c.editing = nil
	c.in.reset()
	c.layout()
	c.flash = "The queued message is unchanged."
}

// maxQueueRows is the most rows the queue takes above the input.
const maxQueueRows = 3

// queueRows are the queued messages, one row each (their first line), above the input:
// the first ones, and how many more when they do not all fit.
func (c *chat) queueRows() []string {
	n := len(c.queue)
	if n == 0 {
		return nil
	}
	show := n
	if n > maxQueueRows {
		show = maxQueueRows - 1
	}
	rows := make([]string, 0, show+1)
	for i, q := range c.queue[:show] {
		label := fmt.Sprintf("queued %d", i+1)
		switch {
		case q == c.editing:
			label = fmt.Sprintf("editing %d", i+1)
		case q.e != nil && q.e.turn.State == Failed:
			label = fmt.Sprintf("not sent %d", i+1)
		}
		first, rest, more := strings.Cut(q.text, "\n")
		if more {
			first += fmt.Sprintf(" (+%d lines)", strings.Count(rest, "\n")+1)
		}
		rows = append(rows, fit(c.st.dim.Render(label+" · ")+clean(strings.ReplaceAll(first, "\t", " ")), c.width))
	}
	if show < n {
		rows = append(rows, c.st.dim.Render(fit(fmt.Sprintf("… and %d more queued", n-show), c.width)))
	}
	return rows
}

// clearInput empties the whole input at once (Ctrl+U); undoClear (Ctrl+Y) brings it back.
func (c *chat) clearInput() {
	v := c.in.value()
	if v == "" {
		return
	}
	c.undo = &v
	c.in.reset()
	c.layout()
	c.flash = "Input cleared · Ctrl+Y brings it back"
}

func (c *chat) undoClear() {
	v := *c.undo
	c.undo = nil
	c.in.insert(v)
	c.layout()
}
