package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// input is the message box: a textarea that grows with its content, wrapped lines
// included, up to a fifth of the window, and then scrolls so that the cursor stays in view.
// What the User types or pastes is inserted as is: keys arrive as key events and pastes as
// one PasteMsg (bubbletea v2 decodes the terminal's bytes, UTF-8 split across reads
// included), so text is never taken for keys.
type input struct{ ta textarea.Model }

func newInput(st *styles, placeholder string) input {
	ta := textarea.New()
	ta.ShowLineNumbers = false
	ta.Prompt = "> "
	ta.CharLimit = 0
	ta.DynamicHeight = true
	ta.MinHeight = 1
	ta.MaxHeight = 5
	ta.MaxContentHeight = 1 << 30 // never refuse input: the box scrolls instead
	ta.EndOfBufferCharacter = ' '
	// Enter is the chat's (send); the textarea inserts newlines only for the Newline keys,
	// which the chat hands it as a literal newline.
	ta.KeyMap.InsertNewline = key.NewBinding(key.WithDisabled())
	ta.Placeholder = placeholder
	plain := lipgloss.NewStyle()
	ts := textarea.StyleState{Base: plain, CursorLine: plain, CursorLineNumber: plain, EndOfBuffer: plain,
		LineNumber: plain, Placeholder: st.placeholder, Prompt: st.user, Text: plain, Selection: st.cursor}
	ta.SetStyles(textarea.Styles{Focused: ts, Blurred: ts, Cursor: textarea.CursorStyle{Color: nil, Blink: false}})
	ta.Focus()
	return input{ta: ta}
}

// maxInput is the tallest the input grows before it scrolls.
func maxInput(height int) int { return max(1, min(5, (height-8)/3)) }

// layout sizes the input for a w×h window; its height follows the wrapped lines of the
// content (DynamicHeight), and the textarea keeps the cursor's line in view.
func (in *input) layout(w, h int) {
	in.ta.MaxHeight = maxInput(h)
	in.ta.SetWidth(max(w, 4))
	in.follow()
}

func (in *input) height() int     { return in.ta.Height() }
func (in *input) value() string   { return in.ta.Value() }
func (in *input) view() string    { return in.ta.View() }
func (in *input) reset()          { in.ta.Reset() }
func (in *input) set(s string)    { in.ta.SetValue(s); in.follow() }
func (in *input) insert(s string) { in.ta.InsertString(s); in.follow() }

// paste inserts pasted text at the cursor, line ends normalised to "\n".
func (in *input) paste(s string) {
	in.insert(strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(s))
}

// edit hands a key to the textarea (typing, cursor movement, deletion).
func (in *input) edit(k tea.KeyPressMsg) tea.Cmd {
	var cmd tea.Cmd
	lines, h := in.ta.LineCount(), in.ta.Height()
	in.ta, cmd = in.ta.Update(k)
	// Only a box that changed shape or scrolls can lose the cursor (keeps typing cheap).
	if in.ta.LineCount() != lines || in.ta.Height() != h || h == in.ta.MaxHeight {
		in.follow()
	}
	return cmd
}

// follow scrolls the box to the cursor's line. The textarea scrolls its viewport before
// the viewport holds the new content (it is filled by View), so a paste of many lines
// left the view on the first lines while the cursor was on the last: refresh the content,
// then ask again.
func (in *input) follow() {
	_ = in.ta.View()
	in.ta.SetHeight(in.ta.Height())
}
