package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/spinner"
	"github.com/charmbracelet/bubbles/textarea"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"
)

// Options tunes the chat. The zero value is usable.
type Options struct {
	// NoColor draws without colour (NO_COLOR); bold, faint and reverse stay.
	NoColor bool
	// Now is the clock (delegation time left, countdowns, elapsed time, turn times);
	// nil means time.Now.
	Now func() time.Time
	// OpenURL opens a link in the browser ('o' in the login panel); nil disables the key.
	OpenURL func(url string) error
	// Copy puts text on the clipboard ('c' in the login panel); nil writes an OSC 52
	// sequence to the terminal.
	Copy func(text string) error
	// Profile forces the colour profile. nil: New uses ANSI, Run detects it from the output
	// and the environment.
	Profile *termenv.Profile
}

// Model is the chat as a bubbletea model. Build it with New; it is driven by Run or by any
// tea.Program. A Model value is a handle: copies share the same state.
type Model struct{ c *chat }

type mode int

const (
	modeChat       mode = iota
	modeLogin           // device-code panel (step-up or /login)
	modeReceipt         // last receipt's claims
	modeConfirmNew      // "start a new conversation? (y/n)" after ErrContextClosed
)

// pending is a Send or Resend whose reply has not arrived.
type pending struct {
	seq     int
	text    string
	started time.Time
	cancel  context.CancelFunc
}

// loginState is a running device flow.
type loginState struct {
	seq    int
	stepUp *StepUp // nil for /login
	scopes []Scope
	code   *DeviceCode
	cancel context.CancelFunc
}

type chat struct {
	b    Backend
	opts Options
	now  func() time.Time
	st   styles

	width, height int

	header Header
	scopes []Scope
	sb     scroller
	last   *ReceiptMark // the most recent receipt in the scrollback

	ta       textarea.Model
	spin     spinner.Model
	spinning bool

	mode       mode
	flash      string // one-shot status message, cleared by the next key
	osc52      string // clipboard sequence to emit with the next frame
	seq        int
	pending    *pending
	login      *loginState
	closedText string // message to send again after "start a new conversation?"
	tickSeq    int
	quitting   bool                                                 // Ctrl+C or /quit: late results are ignored
	tick       func(time.Duration, func(time.Time) tea.Msg) tea.Cmd // tea.Tick; tests stub it
}

// Messages produced by commands.
type (
	replyMsg struct {
		seq   int
		reply Reply
		err   error
	}
	codeMsg struct {
		seq int
		dc  DeviceCode
	}
	loginDoneMsg struct {
		seq     int
		granted []string
		err     error
	}
	logoutMsg struct{ err error }
	tickMsg   struct{ seq int }
)

var commands = []string{"/help", "/new", "/login", "/logout", "/receipts", "/card", "/quit"}

// New builds the chat for b. It calls b.Header, b.History and b.Scopes once.
func New(b Backend, opts Options) Model {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	r := lipgloss.NewRenderer(io.Discard)
	prof := termenv.ANSI
	if opts.Profile != nil {
		prof = *opts.Profile
	}
	r.SetColorProfile(prof)
	c := &chat{b: b, opts: opts, now: opts.Now, st: newStyles(r, opts.NoColor), width: 80, height: 24, tick: tea.Tick}
	c.header = b.Header()
	c.scopes = b.Scopes()
	c.sb = scroller{follow: true, render: func(t Turn, w int) []string {
		return renderTurn(&c.st, t, w, c.brandName())
	}}
	c.addTurns(b.History()...)
	c.sb.unseen = false

	ta := textarea.New()
	ta.ShowLineNumbers = false
	ta.Prompt = "> "
	ta.CharLimit = 0
	ta.MaxHeight = 0
	ta.KeyMap.InsertNewline = key.NewBinding(key.WithKeys("alt+enter", "ctrl+j"))
	ta.Placeholder = "Message " + c.brandName() + " · /help for commands"
	plain := r.NewStyle()
	ts := textarea.Style{Base: plain, CursorLine: plain, CursorLineNumber: plain, EndOfBuffer: plain,
		LineNumber: plain, Placeholder: c.st.placeholder, Prompt: c.st.user, Text: plain}
	ta.FocusedStyle, ta.BlurredStyle = ts, ts
	ta.Cursor.Style = c.st.cursor
	ta.Cursor.TextStyle = plain
	ta.Focus()
	ta.Cursor.SetMode(cursor.CursorStatic)
	c.ta = ta

	c.spin = spinner.New(spinner.WithSpinner(spinner.Line), spinner.WithStyle(c.st.status))
	c.layout()
	return Model{c: c}
}

func (c *chat) brandName() string {
	if c.header.BrandName != "" {
		return clean(c.header.BrandName)
	}
	return "Agent"
}

// Init starts the slow tick that keeps the delegation time left current.
func (m Model) Init() tea.Cmd { return m.c.scheduleTick() }

func (c *chat) scheduleTick() tea.Cmd {
	c.tickSeq++
	seq := c.tickSeq
	d := 15 * time.Second
	if c.mode == modeLogin {
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

// maxInput is the tallest the input grows before it scrolls.
func (c *chat) maxInput() int { return max(1, min(5, (c.height-8)/3)) }

// layout sizes the input for the current window and contents.
func (c *chat) layout() {
	c.ta.SetWidth(max(c.width, 4))
	c.ta.SetHeight(min(max(c.ta.LineCount(), 1), c.maxInput()))
}

// scrollHeight is the number of scrollback lines on screen: the window minus the header
// (3), the rule, the status line, the input and the help line.
func (c *chat) scrollHeight() int { return max(1, c.height-6-c.ta.Height()) }

// Update handles one message.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	c := m.c
	c.osc52 = ""
	if c.quitting {
		return m, nil
	}
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		c.width, c.height = max(msg.Width, 1), max(msg.Height, 1)
		c.layout()
		return m, nil
	case tea.MouseMsg:
		if msg.Action == tea.MouseActionPress && c.mode == modeChat {
			switch msg.Button {
			case tea.MouseButtonWheelUp:
				c.sb.up(3, c.width, c.scrollHeight())
			case tea.MouseButtonWheelDown:
				c.sb.down(3, c.width, c.scrollHeight())
			}
		}
		return m, nil
	case tea.KeyMsg:
		return m, c.key(msg)
	case replyMsg:
		return m, c.onReply(msg)
	case codeMsg:
		if c.login != nil && c.login.seq == msg.seq {
			dc := msg.dc
			c.login.code = &dc
			return m, c.scheduleTick()
		}
		return m, nil
	case loginDoneMsg:
		return m, c.onLoginDone(msg)
	case logoutMsg:
		c.header = c.b.Header()
		if msg.err != nil {
			c.fail("logout: " + msg.err.Error())
		} else {
			c.notice("Logged out: the delegation token is forgotten. Identity only from now on (§3).")
		}
		return m, nil
	case tickMsg:
		if msg.seq != c.tickSeq {
			return m, nil
		}
		return m, c.scheduleTick()
	case spinner.TickMsg:
		if c.pending == nil && (c.login == nil || c.login.code != nil) {
			c.spinning = false
			return m, nil
		}
		var cmd tea.Cmd
		c.spin, cmd = c.spin.Update(msg)
		return m, cmd
	}
	var cmd tea.Cmd
	c.ta, cmd = c.ta.Update(msg)
	return m, cmd
}

func (c *chat) startSpinner() tea.Cmd {
	if c.spinning {
		return nil
	}
	c.spinning = true
	return c.spin.Tick
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
	if c.login != nil {
		c.login.cancel()
	}
}

func (c *chat) key(k tea.KeyMsg) tea.Cmd {
	c.flash = ""
	if k.Type == tea.KeyCtrlC {
		return c.quit()
	}
	switch c.mode {
	case modeLogin:
		return c.loginKey(k)
	case modeReceipt:
		switch k.Type {
		case tea.KeyEsc, tea.KeyEnter, tea.KeyCtrlR:
			c.mode = modeChat
		case tea.KeyRunes:
			if s := string(k.Runes); s == "q" || s == "r" {
				c.mode = modeChat
			}
		}
		return nil
	case modeConfirmNew:
		return c.confirmKey(k)
	}

	h := c.scrollHeight()
	switch k.Type {
	case tea.KeyEsc:
		if c.pending != nil {
			p := c.pending
			p.cancel()
			c.pending = nil
			c.notice("Stopped waiting for the reply. The Brand may still have received the message; " +
				"press Enter to send it again with the same message id, which a Provider answers from its stored reply (§4.3).")
			if c.ta.Value() == "" {
				c.ta.SetValue(p.text)
				c.layout()
			}
		}
		return nil
	case tea.KeyEnter:
		if !k.Alt {
			return c.submit()
		}
	case tea.KeyTab:
		c.complete()
		return nil
	case tea.KeyPgUp:
		c.sb.up(max(1, h-1), c.width, h)
		return nil
	case tea.KeyPgDown:
		c.sb.down(max(1, h-1), c.width, h)
		return nil
	case tea.KeyCtrlHome:
		c.sb.home()
		return nil
	case tea.KeyCtrlEnd:
		c.sb.end()
		return nil
	case tea.KeyHome, tea.KeyEnd:
		if c.ta.Value() == "" {
			if k.Type == tea.KeyHome {
				c.sb.home()
			} else {
				c.sb.end()
			}
			return nil
		}
	case tea.KeyCtrlR:
		c.openReceipt()
		return nil
	}

	// Everything else edits the input. Grow it first so that the viewport of the textarea
	// keeps its first line visible when a line is added.
	add := 0
	if key.Matches(k, c.ta.KeyMap.InsertNewline) {
		add = 1
	} else if k.Type == tea.KeyRunes {
		if slices.Contains(k.Runes, '\r') { // pasted CRLF or CR line ends
			k.Runes = []rune(strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(string(k.Runes)))
		}
		add = strings.Count(string(k.Runes), "\n")
	}
	if add > 0 {
		c.ta.SetHeight(min(c.ta.LineCount()+add, c.maxInput()))
	}
	var cmd tea.Cmd
	c.ta, cmd = c.ta.Update(k)
	c.layout()
	return cmd
}

func (c *chat) openReceipt() {
	if c.last == nil {
		c.flash = "No receipt in this conversation yet (receipts come with delegated replies, §5.6)."
		return
	}
	c.mode = modeReceipt
}

// submit handles Enter: a slash command, or a message to send.
func (c *chat) submit() tea.Cmd {
	text := strings.TrimSpace(c.ta.Value())
	if text == "" {
		return nil
	}
	if strings.HasPrefix(text, "/") && !strings.HasPrefix(text, "//") {
		return c.command(text)
	}
	if c.pending != nil {
		c.flash = "Still waiting for the last reply. Esc stops waiting."
		return nil
	}
	text = strings.TrimPrefix(text, "/") // "//x" sends "/x"
	c.ta.Reset()
	c.layout()
	c.addTurns(Turn{Role: RoleUser, Text: text, At: c.now()})
	c.sb.end()
	return c.send(text, false)
}

// send starts Send (or Resend) and the spinner.
func (c *chat) send(text string, resend bool) tea.Cmd {
	c.seq++
	seq := c.seq
	ctx, cancel := context.WithCancel(context.Background())
	c.pending = &pending{seq: seq, text: text, started: c.now(), cancel: cancel}
	b := c.b
	run := func() tea.Msg {
		var r Reply
		var err error
		if resend {
			r, err = b.Resend(ctx)
		} else {
			r, err = b.Send(ctx, text)
		}
		return replyMsg{seq: seq, reply: r, err: err}
	}
	return tea.Batch(run, c.startSpinner())
}

func (c *chat) onReply(msg replyMsg) tea.Cmd {
	if c.pending == nil || c.pending.seq != msg.seq {
		return nil // abandoned with Esc
	}
	p := c.pending
	c.pending = nil
	p.cancel()
	c.header = c.b.Header()
	if msg.err != nil {
		if errors.Is(msg.err, ErrContextClosed) {
			c.fail(msg.err.Error() + " (§4.2). Start a new conversation and send your message again? (y/n)")
			c.closedText = p.text
			c.mode = modeConfirmNew
			return nil
		}
		c.fail(msg.err.Error())
		return nil
	}
	c.addTurns(msg.reply.Turns...)
	if su := msg.reply.StepUp; su != nil {
		ids := make([]string, len(su.MissingScopes))
		for i, s := range su.MissingScopes {
			ids[i] = s.ID
		}
		text := strings.TrimSpace(su.Text)
		if text == "" {
			text = "The Brand needs more permission."
		}
		c.notice(text + " Asking you to approve: " + strings.Join(ids, ", ") + " (§5.5).")
		return c.startLogin(su, su.MissingScopes)
	}
	return nil
}

func (c *chat) confirmKey(k tea.KeyMsg) tea.Cmd {
	answer := ""
	if k.Type == tea.KeyRunes && len(k.Runes) == 1 {
		answer = strings.ToLower(string(k.Runes))
	}
	if k.Type == tea.KeyEsc {
		answer = "n"
	}
	switch answer {
	case "y":
		c.mode = modeChat
		if err := c.b.NewConversation(); err != nil {
			c.fail(err.Error())
			return nil
		}
		c.header = c.b.Header()
		c.notice("New conversation started; sending your message again.")
		text := c.closedText
		c.closedText = ""
		c.addTurns(Turn{Role: RoleUser, Text: text, At: c.now()})
		c.sb.end()
		return c.send(text, false)
	case "n":
		c.mode = modeChat
		c.notice("Kept the closed conversation; your message was not sent again. /new starts a new one.")
		c.closedText = ""
	}
	return nil
}

// startLogin runs the device flow for scopes and opens the panel. su is the step-up that
// asked for it, nil for /login.
func (c *chat) startLogin(su *StepUp, scopes []Scope) tea.Cmd {
	c.seq++
	seq := c.seq
	ctx, cancel := context.WithCancel(context.Background())
	c.login = &loginState{seq: seq, stepUp: su, scopes: scopes, cancel: cancel}
	c.mode = modeLogin
	ids := make([]string, len(scopes))
	for i, s := range scopes {
		ids[i] = s.ID
	}
	ch := make(chan DeviceCode, 1)
	var once sync.Once
	shown := func(dc DeviceCode) { once.Do(func() { ch <- dc }) }
	b := c.b
	run := func() tea.Msg {
		g, err := b.Login(ctx, ids, shown)
		return loginDoneMsg{seq: seq, granted: g, err: err}
	}
	wait := func() tea.Msg {
		select {
		case dc := <-ch:
			return codeMsg{seq: seq, dc: dc}
		case <-ctx.Done():
			return nil
		}
	}
	return tea.Batch(run, wait, c.startSpinner())
}

func (c *chat) loginKey(k tea.KeyMsg) tea.Cmd {
	l := c.login
	if k.Type == tea.KeyEsc {
		l.cancel()
		c.login = nil
		c.mode = modeChat
		msg := "Login cancelled."
		if l.stepUp != nil {
			msg += " The message that needed it was not sent again."
		}
		c.notice(msg)
		return c.scheduleTick()
	}
	if k.Type != tea.KeyRunes || len(k.Runes) != 1 || l.code == nil {
		return nil
	}
	switch k.Runes[0] {
	case 'o', 'O':
		if c.opts.OpenURL == nil {
			c.flash = "No browser configured; open the link yourself."
		} else if err := c.opts.OpenURL(l.code.VerificationURIComplete); err != nil {
			c.flash = "Could not open the browser: " + clean(err.Error())
		} else {
			c.flash = "Opened the link in the browser."
		}
	case 'c', 'C':
		if c.opts.Copy != nil {
			if err := c.opts.Copy(l.code.UserCode); err != nil {
				c.flash = "Could not copy: " + clean(err.Error())
				return nil
			}
		} else {
			c.osc52 = ansi.SetSystemClipboard(l.code.UserCode)
		}
		c.flash = "Copied the code " + l.code.UserCode + " to the clipboard."
	}
	return nil
}

func (c *chat) onLoginDone(msg loginDoneMsg) tea.Cmd {
	if c.login == nil || c.login.seq != msg.seq {
		return nil
	}
	l := c.login
	c.login = nil
	l.cancel()
	c.mode = modeChat
	c.header = c.b.Header()
	tick := c.scheduleTick()
	if msg.err != nil {
		text := "login: " + msg.err.Error()
		if l.stepUp != nil {
			text += ". The message that needed it was not sent again."
		}
		c.fail(text)
		return tick
	}
	var missing []string
	for _, s := range l.scopes {
		if !slices.Contains(msg.granted, s.ID) {
			missing = append(missing, s.ID)
		}
	}
	granted := strings.Join(msg.granted, ", ")
	if granted == "" {
		granted = "none"
	}
	c.notice("Granted: " + granted + ".")
	if len(missing) > 0 {
		text := "Not granted: " + strings.Join(missing, ", ") + "."
		if l.stepUp != nil {
			text += " The message that needed it was not sent again."
		}
		c.notice(text)
		return tick
	}
	if l.stepUp != nil {
		c.notice("Sending your message again with the new permission.")
		c.sb.end()
		return tea.Batch(tick, c.send(c.lastUserText(), true))
	}
	return tick
}

// lastUserText is the text of the latest user turn (what Resend sends again).
func (c *chat) lastUserText() string {
	for i := len(c.sb.entries) - 1; i >= 0; i-- {
		if t := c.sb.entries[i].turn; t.Role == RoleUser {
			return t.Text
		}
	}
	return ""
}

// command runs a slash command typed in the input.
func (c *chat) command(line string) tea.Cmd {
	fields := strings.Fields(line)
	name, args := fields[0], fields[1:]
	resetInput := func() {
		c.ta.Reset()
		c.layout()
	}
	switch name {
	case "/help":
		resetInput()
		c.notice(helpText)
	case "/new":
		if c.pending != nil {
			c.flash = "Wait for the reply (or Esc) before starting a new conversation."
			return nil
		}
		resetInput()
		if err := c.b.NewConversation(); err != nil {
			c.fail(err.Error())
			return nil
		}
		c.header = c.b.Header()
		c.notice("New conversation: your next message starts a new context (§4.2).")
		c.sb.end()
	case "/login":
		if len(c.scopes) == 0 {
			resetInput()
			c.fail("This Brand offers no delegation: its card lists no scopes (§5.1).")
			return nil
		}
		if len(args) == 0 {
			c.flash = "usage: /login SCOPE… (Tab completes): " + strings.Join(c.scopeIDs(), " ")
			return nil
		}
		if c.pending != nil {
			c.flash = "Wait for the reply (or Esc) before logging in."
			return nil
		}
		var want []Scope
		for _, a := range args {
			i := slices.IndexFunc(c.scopes, func(s Scope) bool { return s.ID == a })
			if i < 0 {
				c.flash = fmt.Sprintf("unknown scope %q; the card lists: %s", a, strings.Join(c.scopeIDs(), " "))
				return nil
			}
			if !slices.Contains(want, c.scopes[i]) {
				want = append(want, c.scopes[i])
			}
		}
		resetInput()
		return c.startLogin(nil, want)
	case "/logout":
		resetInput()
		b := c.b
		return func() tea.Msg { return logoutMsg{err: b.Logout()} }
	case "/receipts":
		resetInput()
		c.openReceipt()
	case "/card":
		resetInput()
		c.notice(c.b.Card())
	case "/quit", "/exit":
		return c.quit()
	default:
		c.flash = "unknown command " + name + "; /help lists them (//text sends text starting with /)"
	}
	return nil
}

func (c *chat) scopeIDs() []string {
	ids := make([]string, len(c.scopes))
	for i, s := range c.scopes {
		ids[i] = s.ID
	}
	return ids
}

const helpText = `Commands:
/new  start a new conversation
/login SCOPE…  approve delegation scopes (Tab completes them)
/logout  forget the delegation token
/receipts  show the last receipt (also Ctrl+R)
/card  show the Agent Card
/quit  leave (also Ctrl+C)
Keys: Enter sends · Alt+Enter or Ctrl+J adds a line · Tab completes · PgUp/PgDn, wheel scroll · Home/End (empty input) or Ctrl+Home/Ctrl+End jump · Esc stops waiting for a reply. Start a message with // to send text that begins with /.`

// complete handles Tab: command names, then scope ids after /login.
func (c *chat) complete() {
	v := c.ta.Value()
	if !strings.HasPrefix(v, "/") || strings.Contains(v, "\n") {
		return
	}
	var cands []string
	prefix, word := "", v
	if i := strings.LastIndexByte(v, ' '); i >= 0 {
		if !strings.HasPrefix(v, "/login ") {
			return
		}
		prefix, word = v[:i+1], v[i+1:]
		have := strings.Fields(v)[1:]
		for _, id := range c.scopeIDs() {
			if strings.HasPrefix(id, word) && !slices.Contains(have, id) {
				cands = append(cands, id)
			}
		}
	} else {
		for _, cmd := range commands {
			if strings.HasPrefix(cmd, word) {
				cands = append(cands, cmd)
			}
		}
	}
	switch len(cands) {
	case 0:
		c.flash = "no completion"
		return
	case 1:
		c.ta.SetValue(prefix + cands[0] + " ")
	default:
		c.ta.SetValue(prefix + commonPrefix(cands))
		c.flash = strings.Join(cands, "  ")
	}
	c.layout()
}

func commonPrefix(ss []string) string {
	p := ss[0]
	for _, s := range ss[1:] {
		for !strings.HasPrefix(s, p) {
			p = p[:len(p)-1]
		}
	}
	return p
}
