package tui

import (
	"context"
	"sync/atomic"
	"time"

	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// Options tunes the chat. The zero value is usable.
type Options struct {
	// NoColor draws without colour (NO_COLOR); bold, faint and reverse stay, and agent
	// replies are drawn as plain Markdown.
	NoColor bool
	// Now is the clock (delegation time left, countdowns, elapsed time, turn times);
	// nil means time.Now.
	Now func() time.Time
	// OpenURL starts the browser on a link ('o' in the login panel) without waiting for
	// it; exited (may be nil) receives once how the browser program ended, nil or why it
	// failed. nil disables the key. It runs as a command, off the UI goroutine.
	OpenURL func(url string) (exited <-chan error, err error)
	// Copy puts text on the clipboard ('c' in the login panel); nil asks the terminal to do
	// it with OSC 52 (and says so only as a request: a terminal may refuse it silently).
	Copy func(text string) error
	// SaveDir is where /save writes the files of a reply; "" is the working directory.
	SaveDir string
	// Width and Height are the window's size in cells when known before the first frame
	// (Run reads them from the terminal); 0 means 80×24 until the terminal reports it.
	Width, Height int
}

// Model is the chat as a bubbletea model. Build it with New; it is driven by Run or by any
// tea.Program. A Model value is a handle: copies share the same state.
type Model struct{ c *chat }

// pending is a Send or Resend whose reply has not arrived.
type pending struct {
	seq     int
	q       *queued // the message sent
	started time.Time
	cancel  context.CancelFunc
	// detached: the User stopped waiting (Esc); the request goes on and its answer is
	// shown when it comes.
	detached bool
}

// waiting reports whether the chat waits for a reply (a send not detached with Esc).
func (c *chat) waiting() bool { return c.pending != nil && !c.pending.detached }

// chat is the state behind a Model. Update never does I/O: every Backend call that may
// wait (Send, Resend, NewConversation, Login, Logout) and every browser, clipboard or file
// action runs as a tea.Cmd, and NewConversation and Login are never started while a send
// is in flight.
type chat struct {
	b    Backend
	opts Options
	now  func() time.Time
	st   styles
	keys keyMap
	md   *markdown

	width, height int

	header Header
	scopes []Scope
	sb     scroller
	last   *ReceiptMark // the most recent receipt of the current conversation

	in       input
	mouse    bool // the mouse wheel scrolls (/mouse); off, the terminal's mouse selects text
	spin     spinner.Model
	spinning bool

	panel      panel     // the open panel (login, receipt, question); nil: the conversation
	panelTop   int       // the first line of the open panel shown (a tall panel scrolls)
	flash      string    // one-shot status message, cleared by the next key
	seq        int       // numbers sends and logins, so that late results are recognised
	pending    *pending  // the send in flight
	live       *live     // the reply of pending as it streams (stream.go)
	queue      []*queued // messages submitted while waiting, sent in order
	paused     bool      // the queue is held after a failure until Enter
	editing    *queued   // the queued message in the input, being edited
	undo       *string   // the input as it was before Ctrl+U cleared it
	busy       string    // a non-send backend call in flight ("starting a new conversation")
	hold       string    // why a command must wait, shown with the wait until it ends
	tickSeq    int
	quitting   bool                                                 // Ctrl+C or /quit: late results are ignored
	tick       func(time.Duration, func(time.Time) tea.Msg) tea.Cmd // tea.Tick; tests stub it
	canSuspend func() bool                                          // whether a job-control shell can resume the chat after Ctrl+Z
	// suspending is set from a Ctrl+Z or SIGTSTP until the chat resumes: bubbletea then
	// stops the process with SIGTSTP, which Run, catching SIGTSTP, turns into SIGSTOP.
	suspending atomic.Bool
	settle     func(time.Duration, func(time.Time) tea.Msg) tea.Cmd // tea.Tick: a y/n answer's wait
}

// Messages produced by commands.
type (
	replyMsg struct {
		seq   int
		reply Reply
		err   error
	}
	newConvMsg struct {
		err  error
		then *queued // the message to send in the new conversation, nil for none
	}
	logoutMsg struct{ err error }
	tickMsg   struct{ seq int }
	// suspendMsg is a SIGTSTP sent to the chat from outside (kill -TSTP): the chat stops
	// as it does for Ctrl+Z.
	suspendMsg struct{}
	flashMsg   string
	// panelFlashMsg is a status message of panel p, shown only while p is open.
	panelFlashMsg struct {
		p    panel
		text string
	}
)

// New builds the chat for b. It calls b.Header, b.History and b.Scopes once.
func New(b Backend, opts Options) Model {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	c := &chat{b: b, opts: opts, now: opts.Now, st: newStyles(opts.NoColor), keys: defaultKeys(),
		md: newMarkdown(opts.NoColor), width: 80, height: 24, tick: tea.Tick, settle: tea.Tick, canSuspend: jobControl}
	if opts.Width > 0 && opts.Height > 0 {
		c.width, c.height = opts.Width, opts.Height
	}
	c.header = b.Header()
	c.scopes = b.Scopes()
	c.sb = scroller{follow: true, render: func(t Turn, w int) []string {
		if t.ID == liveTurnID {
			return c.renderLive(t, w)
		}
		return renderTurn(&c.st, c.md, t, w, c.brandName())
	}}
	c.addTurns(b.History()...)
	c.sb.unseen = false
	c.in = newInput(&c.st, "Message "+c.brandName()+" · /help for commands")
	c.restore()
	c.spin = spinner.New(spinner.WithSpinner(spinner.Line), spinner.WithStyle(c.st.status))
	c.layout()
	return Model{c: c}
}

func (c *chat) brandName() string {
	if n := cleanLine(c.header.BrandName); n != "" {
		return n
	}
	return "Agent"
}

// Init starts the slow tick that keeps the delegation time left current and asks the
// terminal for its background colour (to pick the Markdown theme). Nothing waits for the
// answer: a terminal that never answers keeps the dark theme.
func (m Model) Init() tea.Cmd {
	return tea.Batch(m.c.scheduleTick(), tea.RequestBackgroundColor)
}

func (c *chat) scheduleTick() tea.Cmd {
	c.tickSeq++
	seq := c.tickSeq
	d := 15 * time.Second
	if _, ok := c.panel.(*loginPanel); ok {
		d = time.Second
	}
	return c.tick(d, func(time.Time) tea.Msg { return tickMsg{seq} })
}

// addTurns appends turns to the scrollback and remembers the last receipt.
func (c *chat) addTurns(ts ...Turn) {
	for i := range ts {
		if ts[i].Receipt != nil {
			c.last = ts[i].Receipt
		}
	}
	c.sb.add(ts...)
}

func (c *chat) notice(text string) { c.addTurns(Turn{Role: RoleSystem, Text: text, At: c.now()}) }
func (c *chat) fail(text string)   { c.addTurns(Turn{Role: RoleError, Text: text, At: c.now()}) }

// layout sizes the input for the current window and contents.
func (c *chat) layout() { c.in.layout(c.width, c.height) }

// scrollHeight is the number of scrollback lines on screen: the window minus the header
// (3), the rule, the status line (wrapped), the queue, the input and the help line.
func (c *chat) scrollHeight() int {
	return max(1, c.height-5-len(c.statusRows(c.now()))-len(c.queueRows())-c.in.height())
}

// Update handles one message.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	c := m.c
	if c.quitting {
		return m, nil
	}
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		c.width, c.height = max(msg.Width, 1), max(msg.Height, 1)
		c.layout()
		return m, nil
	case tea.ModeReportMsg:
		// The terminal clusters graphemes (mode 2027): bubbletea's renderer then counts a
		// character's width as one grapheme, and so does the input (else per code point,
		// as tmux and most terminals do).
		if msg.Mode == ansi.ModeUnicodeCore && (msg.Value == ansi.ModeSet || msg.Value == ansi.ModeReset || msg.Value == ansi.ModePermanentlySet) {
			c.in.setMethod(ansi.GraphemeWidth)
			c.st.wm = ansi.GraphemeWidth
			c.sb.restyle()
			c.layout()
		}
		return m, nil
	case tea.BackgroundColorMsg:
		if c.md.setDark(msg.IsDark()) {
			c.sb.restyle()
		}
		return m, nil
	case tea.MouseWheelMsg:
		if msg.Button == tea.MouseWheelUp && c.scrollPanel(-3) || msg.Button == tea.MouseWheelDown && c.scrollPanel(3) {
			return m, nil
		}
		if c.panel == nil || c.panel.view(c, c.width, c.now()) == nil {
			switch msg.Button {
			case tea.MouseWheelUp:
				c.sb.up(3, c.width, c.scrollHeight())
			case tea.MouseWheelDown:
				c.sb.down(3, c.width, c.scrollHeight())
			}
		}
		return m, nil
	case tea.KeyPressMsg:
		return m, c.key(msg)
	case tea.PasteMsg:
		c.flash = ""
		text := unpaste(msg.Content)
		if c.panel != nil {
			if cmd, ok := c.panel.paste(c, text); ok {
				return m, cmd
			}
		}
		c.in.paste(text)
		if hasControls(text) {
			c.flash = "The paste holds control characters (shown as ␛ and the like): they are sent as pasted. Ctrl+U clears."
		}
		c.layout()
		return m, nil
	case replyMsg:
		return m, c.onReply(msg)
	case partialMsg:
		return m, c.onPartial(msg)
	case extCardMsg:
		c.onExtendedCard(msg)
		return m, nil
	case newConvMsg:
		return m, c.onNewConversation(msg)
	case codeMsg, loginDoneMsg, browserExitMsg:
		if l, ok := c.panel.(*loginPanel); ok {
			return m, l.update(c, msg)
		}
		return m, nil
	case logoutMsg:
		c.busy, c.hold = "", ""
		c.header = c.b.Header()
		if msg.err != nil {
			c.fail("Could not log out: " + clean(msg.err.Error()))
		} else {
			c.notice("Logged out: the delegation is forgotten. Identity only from now on.")
		}
		return m, c.next()
	case answerMsg:
		return m, msg.q.answer(c, msg)
	case suspendMsg:
		if !c.canSuspend() {
			return m, nil // nobody could continue it: the signal is ignored
		}
		return m, c.suspend()
	case tea.ResumeMsg:
		// bubbletea has put the terminal back in raw mode on the alternate screen and
		// redraws.
		c.suspending.Store(false)
		return m, nil
	case flashMsg:
		c.flash = string(msg)
		return m, nil
	case panelFlashMsg:
		if c.panel == msg.p { // a late result of a panel already closed says nothing
			c.flash = msg.text
		}
		return m, nil
	case savedMsg:
		c.onSaved(msg)
		return m, nil
	case abandonedMsg:
		if msg.err != nil {
			c.fail("Could not record that the unanswered message was given up; it may be offered again: " + clean(msg.err.Error()))
		}
		return m, nil
	case tickMsg:
		if msg.seq != c.tickSeq {
			return m, nil
		}
		return m, c.scheduleTick()
	case spinner.TickMsg:
		if !c.waiting() && c.busy == "" && !c.panelWaits() {
			c.spinning = false
			return m, nil
		}
		var cmd tea.Cmd
		c.spin, cmd = c.spin.Update(msg)
		return m, cmd
	}
	return m, nil
}

// panelWaits reports whether the open panel shows a wait (the spinner keeps turning).
func (c *chat) panelWaits() bool {
	l, ok := c.panel.(*loginPanel)
	return ok && l.code == nil
}

func (c *chat) startSpinner() tea.Cmd {
	if c.spinning {
		return nil
	}
	c.spinning = true
	return c.spin.Tick
}

// suspend handles Ctrl+Z and SIGTSTP: the chat stops (the terminal restored) and the shell's fg
// brings it back. Without a shell that does job control (the chat started directly by a
// terminal window, tmux or ssh), a stopped chat could never be resumed: the status line
// says so instead and the chat goes on.
func (c *chat) suspend() tea.Cmd {
	if !c.canSuspend() {
		c.flash = "Ctrl+Z does nothing here: no shell started this chat with job control to resume it. /quit leaves."
		return nil
	}
	c.suspending.Store(true)
	return tea.Suspend
}

// quit abandons every running request and ends the program.
func (c *chat) quit() tea.Cmd {
	c.quitting = true
	c.cancelAll()
	return tea.Quit
}

// cancelAll abandons every running request.
func (c *chat) cancelAll() {
	if c.pending != nil {
		c.pending.cancel()
	}
	if l, ok := c.panel.(*loginPanel); ok {
		l.cancel()
	}
}

// key routes a key press: Ctrl+C always quits; an open panel sees the key first; what it
// leaves goes to the conversation and the input.
func (c *chat) key(k tea.KeyPressMsg) tea.Cmd {
	c.flash = ""
	if keyMatches(k, c.keys.Quit) {
		return c.quit()
	}
	if keyMatches(k, c.keys.Suspend) {
		return c.suspend()
	}
	if c.panel != nil {
		if cmd, handled := c.panel.key(c, k); handled {
			return cmd
		}
		// A panel taller than the window scrolls.
		page := max(1, c.scrollHeight()-2)
		if keyMatches(k, c.keys.PageUp) && c.scrollPanel(-page) || keyMatches(k, c.keys.PageDown) && c.scrollPanel(page) {
			return nil
		}
	}
	return c.conversationKey(k)
}

// openPanel shows p; closePanel returns to the conversation, and the panel's notices
// (a copy or browser result in the status line) go with it.
func (c *chat) openPanel(p panel) { c.panel, c.panelTop = p, 0 }
func (c *chat) closePanel()       { c.panel, c.flash, c.panelTop = nil, "", 0 }
