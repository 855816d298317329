package tui

import (
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
	inner := max(w-2, 4)
	out := []string{c.st.panelTitle.Render(fit(title, w)), ""}
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
// keys other than y, n and Esc go to the input (when the input holds text, y and n are
// typed, not answers).
type question struct {
	text     string
	yes, no  func(c *chat) tea.Cmd
	yesLabel string
	noLabel  string
}

func (q *question) view(*chat, int, time.Time) []string { return nil }

func (q *question) key(c *chat, k tea.KeyPressMsg) (tea.Cmd, bool) {
	if c.in.value() != "" && !keyMatches(k, c.keys.Stop) {
		return nil, false
	}
	switch {
	case keyMatches(k, c.keys.Yes):
		c.closePanel()
		return q.yes(c), true
	case keyMatches(k, c.keys.No):
		c.closePanel()
		return q.no(c), true
	}
	return nil, false
}

func (q *question) paste(*chat, string) (tea.Cmd, bool) { return nil, false }

func (q *question) status(c *chat, _ time.Time) string { return c.st.status.Render(q.text + " (y/n)") }

func (q *question) help(c *chat) []string {
	return append([]string{"y " + q.yesLabel, "n " + q.noLabel}, helpItems(c.keys.Quit)...)
}
