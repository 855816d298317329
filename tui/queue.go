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
	var abandon tea.Cmd
	if i := c.queueIndex(q); i >= 0 {
		unanswered := q.e != nil && q.e.turn.State == Unanswered
		switch {
		case text == "":
			c.queue = append(c.queue[:i], c.queue[i+1:]...)
			c.flash = "Removed from the queue."
			if unanswered {
				abandon = c.abandon(q, false)
			}
		case unanswered && text != q.text:
			// A message on record as sent and unanswered is not rewritten: it may
			// have been delivered as it was. The new text is a new message, and
			// the old one is abandoned on record, not offered again.
			c.queue[i] = &queued{text: text}
			abandon = c.abandon(q, true)
		default:
			q.text = text
		}
	}
	return tea.Batch(abandon, c.next())
}

// abandonedMsg is the outcome of Abandoner.Abandon.
type abandonedMsg struct{ err error }

// abandon tells a Backend that keeps the record of messages sent (Abandoner) that the
// User replaced or removed q, a message sent and left unanswered, so that the record
// no longer offers it.
func (c *chat) abandon(q *queued, replaced bool) tea.Cmd {
	a, ok := c.b.(Abandoner)
	if !ok {
		return nil
	}
	t := q.e.turn
	return func() tea.Msg { return abandonedMsg{err: a.Abandon(t, replaced)} }
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
		case q.e != nil && q.e.turn.State == Unanswered:
			label = fmt.Sprintf("unanswered %d", i+1) // sent, maybe received: never "not sent"
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

// restore takes up what an earlier chat left: the User's messages that were sent but never
// answered (their turns in the history), then the kept queue, all held at the head of the
// queue until Enter, and the kept input. Nothing is sent without the User's Enter.
func (c *chat) restore() {
	var un []*queued
	for _, e := range c.sb.entries {
		if e.turn.Role == RoleUser && e.turn.State == Unanswered {
			un = append(un, &queued{text: e.turn.Text, e: e})
		}
	}
	if len(un) > 0 {
		c.queue = append(c.queue, un...)
		what := "Your last message got no answer before the chat was left. Enter sends it again"
		if len(un) > 1 {
			what = fmt.Sprintf("%d of your messages got no answer before the chat was left. Enter sends them again", len(un))
		}
		c.notice(what + " with the same message id to fetch the answer (the Brand's agent does not act twice); ↑ edits.")
	}
	defer func() { c.paused = len(c.queue) > 0 }()
	d, ok := c.b.(Drafts)
	if !ok {
		return
	}
	input, queue := d.LoadDraft()
	for _, t := range queue {
		c.queue = append(c.queue, &queued{text: t})
	}
	switch len(queue) {
	case 0:
	case 1:
		c.notice("A queued message was kept from the last chat: Enter sends it; ↑ edits it.")
	default:
		c.notice(fmt.Sprintf("%d queued messages were kept from the last chat: Enter sends them; ↑ edits them.", len(queue)))
	}
	if input != "" {
		c.in.set(input)
	}
}

// keepDraft saves, with a Backend that keeps drafts, what was not sent: the input and the
// queue (the message being edited with what the input holds). A message on its way is on
// record already and is not part of it.
func (c *chat) keepDraft() error {
	d, ok := c.b.(Drafts)
	if !ok {
		return nil
	}
	input := c.in.value()
	var queue []string
	for _, q := range c.queue {
		switch {
		case q == c.editing:
			if t := trimBlankLines(input); t != "" {
				queue = append(queue, t)
			}
			input = ""
		case q.e != nil && q.e.turn.State == Unanswered:
			// On record as unanswered: offered again from there.
		default:
			queue = append(queue, q.text)
		}
	}
	return d.SaveDraft(input, queue)
}
