package tui

import (
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"
)

// panel is a view that the chat opens over the conversation: the login panel, the receipt
// panel, a yes/no question. A new panel (e.g. a "pin this card? (y/n)" question) is a type
// with these four methods, opened with chat.openPanel and closed with chat.closePanel;
// nothing else in the chat needs to change.
type panel interface {
	// view returns the lines drawn between the header and the status line at width w,
	// or nil to leave the conversation visible there.
	view(c *chat, w int, now time.Time) []string
	// key sees every key press but Ctrl+C first. handled=false passes the key on to the
	// conversation and the input, so that typing is never lost while a panel is open.
	key(c *chat, k tea.KeyPressMsg) (cmd tea.Cmd, handled bool)
	// paste sees a bracketed paste first, like key.
	paste(c *chat, text string) (cmd tea.Cmd, handled bool)
	// status is the status line while the panel is open ("" leaves the usual status) and
	// help the items of the help line.
	status(c *chat, now time.Time) string
	help(c *chat) []string
}

// panelFrame draws a titled block of lines wrapped to width w, indented by two cells.
func (c *chat) panelFrame(w int, title string, body []string) []string {
	return append([]string{c.st.panelTitle.Render(fit(title, w)), ""}, c.panelBody(w, body)...)
}

// panelBody is lines wrapped to width w, indented by two cells.
func (c *chat) panelBody(w int, body []string) []string {
	inner := max(w-2, 4)
	var out []string
	for _, b := range body {
		if b == "" {
			out = append(out, "")
			continue
		}
		for _, l := range wrapStyled(b, inner) {
			out = append(out, "  "+l)
		}
	}
	return out
}

// question is a yes/no question in the status line; the conversation stays visible and
// keys other than y, n and Esc go to the input.
//
// Only a discrete key press answers: y or n is an answer only while the input is empty
// and when no other key follows it within answerSettle. Text that arrives in one burst
// ("yes please" typed by an auto-typer, pasted without bracketed paste, sent by a remote
// session) starts with a y or n followed at once by more keys: the held y or n is then
// typed into the input with the rest, and the question stays open. Esc answers no at once.
type question struct {
	text     string
	yes, no  func(c *chat) tea.Cmd
	yesLabel string
	noLabel  string

	held    *tea.KeyPressMsg // a y or n waiting for answerSettle to pass without another key
	heldSeq int
}

// answerSettle is how long a y or n waits before it answers: the keys of a burst arrive
// within a millisecond or two of each other, a person's next key press far later.
const answerSettle = 40 * time.Millisecond

// answerMsg is the end of a y or n's settle time.
type answerMsg struct {
	q   *question
	seq int
}

func (q *question) view(*chat, int, time.Time) []string { return nil }

// release types a held y or n into the input: a key followed it, so it was text.
func (q *question) release(c *chat) {
	if q.held == nil {
		return
	}
	k := *q.held
	q.held = nil
	c.in.edit(k)
	c.layout()
}

func (q *question) key(c *chat, k tea.KeyPressMsg) (tea.Cmd, bool) {
	q.release(c)
	if !c.in.empty() && !keyMatches(k, c.keys.Stop) {
		return nil, false
	}
	if keyMatches(k, c.keys.Stop) {
		c.closePanel()
		return q.no(c), true
	}
	if keyMatches(k, c.keys.Yes) || keyMatches(k, c.keys.No) {
		q.heldSeq++
		held := k
		q.held = &held
		msg := answerMsg{q: q, seq: q.heldSeq}
		return c.settle(answerSettle, func(time.Time) tea.Msg { return msg }), true
	}
	return nil, false
}

// answer is the held key's settle time running out with no other key: it answers.
func (q *question) answer(c *chat, msg answerMsg) tea.Cmd {
	if c.panel != q || q.held == nil || msg.seq != q.heldSeq {
		return nil
	}
	k := *q.held
	q.held = nil
	c.closePanel()
	if keyMatches(k, c.keys.Yes) {
		return q.yes(c)
	}
	return q.no(c)
}

func (q *question) paste(c *chat, _ string) (tea.Cmd, bool) {
	q.release(c)
	return nil, false
}

// status is the question, and how many messages wait to be sent.
func (q *question) status(c *chat, _ time.Time) string {
	s := q.text + " (y/n)"
	if n := len(c.queue); n > 0 {
		s += fmt.Sprintf(" · %d queued", n)
	}
	return c.st.status.Render(s)
}

// help says what the keys do now: with text in the input, y and n are typed into it and
// Enter queues the message; only Esc still answers.
func (q *question) help(c *chat) []string {
	if !c.in.empty() {
		return append([]string{"Enter queue the message", "Esc " + q.noLabel, "clear the input to answer y/n"}, helpItems(c.keys.Quit)...)
	}
	return append([]string{"y " + q.yesLabel, "n " + q.noLabel}, helpItems(c.keys.Quit)...)
}
