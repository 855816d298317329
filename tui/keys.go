package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// keyMap is every key of the chat, in one place: the handlers match these bindings and the
// help line and /help list them, so a key cannot work without being listed or be listed
// without working.
type keyMap struct {
	// The conversation.
	Send, Newline, Complete, Stop, Quit key.Binding
	Suspend                             key.Binding
	Scroll, PageUp, PageDown            key.Binding
	Top, Bottom, Home, End              key.Binding
	Receipt                             key.Binding
	// The queue and the input.
	EditQueued, QueuePrev, QueueNext key.Binding
	Clear, Undo                      key.Binding
	// The login panel.
	Open, Copy, CopyLink, Cancel key.Binding
	// The receipt panel.
	Close key.Binding
	// Yes/no questions.
	Yes, No key.Binding
}

func defaultKeys() keyMap {
	b := func(help, desc string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
	}
	return keyMap{
		Send:     b("Enter", "send", "enter"),
		Newline:  b("Alt+Enter", "newline", "alt+enter", "ctrl+j", "shift+enter"),
		Complete: b("Tab", "complete", "tab"),
		Stop:     b("Esc", "stop waiting", "esc"),
		Quit:     b("Ctrl+C", "quit", "ctrl+c"),
		Suspend:  b("Ctrl+Z", "suspend (fg resumes)", "ctrl+z"),
		// Scroll is only the help entry of PageUp and PageDown.
		Scroll:   key.NewBinding(key.WithKeys("pgup", "pgdown"), key.WithHelp("PgUp/PgDn", "scroll")),
		PageUp:   key.NewBinding(key.WithKeys("pgup")),
		PageDown: key.NewBinding(key.WithKeys("pgdown")),
		Top:      b("Ctrl+Home", "first message", "ctrl+home"),
		Bottom:   b("Ctrl+End", "last message", "ctrl+end"),
		// Home and End jump only while the input is empty (else they move in the line).
		Home:    b("Home", "first message (empty input)", "home"),
		End:     b("End", "last message (empty input)", "end"),
		Receipt: b("Ctrl+R", "receipt", "ctrl+r"),
		// EditQueued works only while the input is empty (else ↑ moves in it).
		EditQueued: b("↑", "edit a queued message (empty input)", "up"),
		QueuePrev:  b("Alt+↑", "previous queued message", "alt+up"),
		QueueNext:  b("Alt+↓", "next queued message", "alt+down"),
		Clear:      b("Ctrl+U", "clear the input", "ctrl+u"),
		Undo:       b("Ctrl+Y", "bring the cleared input back", "ctrl+y"),
		Open:       b("o", "open link", "o", "O"),
		Copy:       b("c", "copy code", "c", "C"),
		CopyLink:   b("l", "copy link", "l", "L"),
		Cancel:     b("Esc", "cancel", "esc"),
		Close:      b("Esc", "close", "esc", "enter", "q", "ctrl+r"),
		Yes:        b("y", "yes", "y", "Y"),
		No:         b("n", "no", "n", "N", "esc"),
	}
}

// keyMatches reports whether k is one of the keys of the bindings.
func keyMatches(k tea.KeyPressMsg, bs ...key.Binding) bool { return key.Matches(k, bs...) }

// helpItems formats bindings as "Key desc" items, in order.
func helpItems(bs ...key.Binding) []string {
	out := make([]string, 0, len(bs))
	for _, b := range bs {
		if h := b.Help(); h.Key != "" {
			out = append(out, h.Key+" "+h.Desc)
		}
	}
	return out
}

// conversationHelp is the help line of the conversation: while waiting, and otherwise.
func (k keyMap) conversationHelp(waiting bool) []string {
	if waiting {
		items := helpItems(k.Stop, k.Quit, k.Scroll)
		return append(items, "Enter queues the next message")
	}
	items := helpItems(k.Send, k.Quit)
	items = append(items, "/help")
	return append(items, helpItems(k.Newline, k.Scroll, k.Complete, k.Receipt)...)
}

// commandHelp is what /help shows: the commands, then every key of the conversation, each
// in two aligned columns.
func (k keyMap) commandHelp() string {
	var b strings.Builder
	b.WriteString("Commands:\n")
	var rows [][2]string
	for _, c := range commands {
		name := c.name
		if c.args != "" {
			name += " " + c.args
		}
		rows = append(rows, [2]string{name, c.help})
	}
	writeColumns(&b, rows)
	b.WriteString("Keys:\n")
	rows = rows[:0]
	for _, kb := range []key.Binding{k.Send, k.Newline, k.Complete, k.Scroll, k.Top, k.Bottom, k.Home, k.End, k.Receipt, k.Stop, k.Clear, k.Undo, k.EditQueued, k.QueuePrev, k.QueueNext, k.Quit, k.Suspend} {
		if h := kb.Help(); h.Key != "" {
			rows = append(rows, [2]string{h.Key, h.Desc})
		}
	}
	writeColumns(&b, rows)
	b.WriteString("While a reply is on its way, Enter queues your next message; queued messages are shown above the input and sent in order. " +
		"A command is one line starting with its name; anything else is sent as typed. Start a message with // to send text that begins with /. " +
		"The mouse selects text as in any terminal; /mouse makes its wheel scroll instead.")
	return b.String()
}

// writeColumns writes rows as two columns, the second aligned after the widest first.
func writeColumns(b *strings.Builder, rows [][2]string) {
	w := 0
	for _, r := range rows {
		w = max(w, ansi.StringWidth(r[0]))
	}
	for _, r := range rows {
		b.WriteString("  " + r[0] + strings.Repeat(" ", w-ansi.StringWidth(r[0])+2) + r[1] + "\n")
	}
}
