package tui

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// The login panel: a device-code login (§5.3) started by /login or by a step-up (§5.5).

type (
	codeMsg struct {
		seq int
		dc  DeviceCode
	}
	loginDoneMsg struct {
		seq     int
		granted []string
		err     error
	}
	// browserExitMsg is how the browser started on the login link ended.
	browserExitMsg struct {
		seq int
		err error
	}
)

// loginPanel is a running device flow.
type loginPanel struct {
	seq    int
	stepUp *StepUp // nil for /login
	scopes []Scope
	code   *DeviceCode
	ctx    context.Context
	cancel context.CancelFunc
}

// startLogin runs the device flow for scopes as a command and opens the panel. su is the
// step-up that asked for it, nil for /login.
func (c *chat) startLogin(su *StepUp, scopes []Scope) tea.Cmd {
	c.seq++
	seq := c.seq
	ctx, cancel := context.WithCancel(context.Background())
	c.openPanel(&loginPanel{seq: seq, stepUp: su, scopes: scopes, ctx: ctx, cancel: cancel})
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
	return tea.Batch(run, wait, c.startSpinner(), c.scheduleTick())
}

// update handles the flow's messages.
func (l *loginPanel) update(c *chat, msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case codeMsg:
		if msg.seq == l.seq {
			dc := msg.dc
			l.code = &dc
			return l.watchBrowser(dc.BrowserExit)
		}
		return nil
	case browserExitMsg:
		if msg.seq == l.seq && msg.err != nil && l.code != nil {
			l.code.BrowserOpened, l.code.BrowserErr = false, msg.err
		}
		return nil
	case loginDoneMsg:
		if msg.seq == l.seq {
			return l.done(c, msg)
		}
	}
	return nil
}

// browserWait is how long 'o' waits for the browser to fail before saying it was asked.
const browserWait = 3 * time.Second

// watchBrowser waits, as a command, for the browser started on the link to end, so that
// a browser that fails after starting is reported in the panel.
func (l *loginPanel) watchBrowser(exited <-chan error) tea.Cmd {
	if exited == nil {
		return nil
	}
	seq, ctx := l.seq, l.ctx
	return func() tea.Msg {
		select {
		case err := <-exited:
			return browserExitMsg{seq: seq, err: err}
		case <-ctx.Done():
			return nil
		}
	}
}

func (l *loginPanel) done(c *chat, msg loginDoneMsg) tea.Cmd {
	l.cancel()
	c.closePanel()
	c.header = c.b.Header()
	tick := c.scheduleTick()
	if msg.err != nil {
		text := "Login failed: " + clean(msg.err.Error())
		if l.stepUp != nil {
			text += ". The message that needed it was not sent again."
		}
		c.fail(text)
		c.pauseQueue()
		return tick
	}
	var missing []string
	for _, s := range l.scopes {
		if !slices.Contains(msg.granted, s.ID) {
			missing = append(missing, clean(s.ID))
		}
	}
	c.notice("Granted: " + cleanList(msg.granted) + ".")
	if len(missing) > 0 {
		text := "Not granted: " + strings.Join(missing, ", ") + "."
		if l.stepUp != nil {
			text += " The message that needed it was not sent again."
		}
		c.notice(text)
		return tea.Batch(tick, c.next())
	}
	if l.stepUp != nil {
		c.notice("Sending your message again with the new permission.")
		c.sb.end()
		return tea.Batch(tick, c.send(c.lastUser(), true))
	}
	return tea.Batch(tick, c.next())
}

// lastUser is the latest user turn as a message (what Resend sends again).
func (c *chat) lastUser() *queued {
	for i := len(c.sb.entries) - 1; i >= 0; i-- {
		if e := c.sb.entries[i]; e.turn.Role == RoleUser {
			return &queued{text: e.turn.Text, e: e}
		}
	}
	return &queued{}
}

func (l *loginPanel) key(c *chat, k tea.KeyPressMsg) (tea.Cmd, bool) {
	switch {
	case keyMatches(k, c.keys.Cancel):
		l.cancel()
		c.closePanel()
		msg := "Login cancelled."
		if l.stepUp != nil {
			msg += " The message that needed it was not sent again."
		}
		c.notice(msg)
		return tea.Batch(c.scheduleTick(), c.next()), true
	case l.code == nil || !c.in.empty():
		// Typing goes on in the input below the panel (Enter queues the message); once
		// the input holds text, o and c are letters too.
		return nil, false
	case keyMatches(k, c.keys.Open):
		if c.opts.OpenURL == nil {
			c.flash = "No browser is set up here; open the link yourself."
			return nil, true
		}
		open, link, ctx := c.opts.OpenURL, l.code.VerificationURIComplete, l.ctx
		c.flash = "Opening the link in your browser…"
		say := func(text string) tea.Msg { return panelFlashMsg{p: l, text: text} }
		return func() tea.Msg {
			exited, err := open(link)
			if err == nil && exited != nil {
				// A browser that fails soon after starting is reported; one still
				// running after browserWait has the link.
				select {
				case err = <-exited:
				case <-time.After(browserWait):
				case <-ctx.Done():
					return nil
				}
			}
			if err != nil {
				return say("Could not open the browser: " + clean(err.Error()) + ". Open the link yourself.")
			}
			return say("Asked your browser to open the link.")
		}, true
	case keyMatches(k, c.keys.CopyLink):
		return c.copyText(l, "the link", l.code.VerificationURIComplete), true
	case keyMatches(k, c.keys.Copy):
		code := l.code.UserCode
		if c.opts.Copy != nil {
			cp := c.opts.Copy
			return func() tea.Msg {
				if err := cp(code); err != nil {
					return panelFlashMsg{p: l, text: "Could not copy: " + clean(err.Error()) + ". Select the code " + clean(code) + " yourself."}
				}
				return panelFlashMsg{p: l, text: "Copied the code " + clean(code) + "."}
			}, true
		}
		// OSC 52: the terminal may refuse it without telling, so this is only a request.
		// The code comes first: a narrow window still shows it.
		c.flash = clean(code) + ": asked your terminal to copy it; if it cannot, select it yourself."
		return tea.SetClipboard(clean(code)), true
	}
	return nil, false
}

// copyText copies text (the link) for panel p, with the clipboard of Options.Copy or,
// without one, by asking the terminal (OSC 52), which may refuse without telling.
func (c *chat) copyText(p panel, what, text string) tea.Cmd {
	text = clean(text)
	if c.opts.Copy != nil {
		cp := c.opts.Copy
		return func() tea.Msg {
			if err := cp(text); err != nil {
				return panelFlashMsg{p: p, text: "Could not copy " + what + ": " + clean(err.Error()) + "."}
			}
			return panelFlashMsg{p: p, text: "Copied " + what + "."}
		}
	}
	c.flash = "Asked your terminal to copy " + what + "; some terminals refuse without telling."
	return tea.SetClipboard(text)
}

func (l *loginPanel) paste(*chat, string) (tea.Cmd, bool) { return nil, false }

func (l *loginPanel) help(c *chat) []string {
	if l.code == nil {
		return helpItems(c.keys.Cancel, c.keys.Quit)
	}
	return helpItems(c.keys.Open, c.keys.Copy, c.keys.Cancel, c.keys.Quit, c.keys.CopyLink)
}

// status keeps the countdown in view whatever the size of the window.
func (l *loginPanel) status(c *chat, now time.Time) string {
	if l.code == nil {
		return c.spin.View() + c.st.status.Render(" asking "+c.brandName()+" for a login code")
	}
	if left := l.code.ExpiresAt.Sub(now); left > 0 {
		return c.st.status.Render("Code expires in " + countdown(left) + " · waiting for approval")
	}
	return c.st.bad.Render("The code has expired.") + c.st.status.Render(" Esc, then try again.")
}

func (l *loginPanel) view(c *chat, w int, now time.Time) []string {
	title := "Log in to " + c.brandName()
	var head []string
	if l.stepUp != nil {
		title = "Permission needed"
		if t := clean(l.stepUp.Text); t != "" {
			// The Brand's words under its name, in the gutter, wrapped here: none of
			// its lines, nor a line one of them wraps into, reads as one of pact's
			// rows below ("Code:", "Link:", the scopes) (issue 31, 10).
			head = append(head, c.brandName()+" writes:")
			inner := max(max(w-2, 4)-2, 2)
			for _, para := range strings.Split(t, "\n") {
				for _, ln := range wrapStyled(para, inner) {
					head = append(head, c.st.dim.Render("│ ")+ln)
				}
			}
			head = append(head, "")
		}
	}
	scopes := []string{"Scopes asked:"}
	for _, s := range l.scopes {
		line := "• " + c.st.title.Render(cleanLine(s.ID))
		if d := cleanLine(s.Description); d != "" {
			line += " — " + d
		}
		scopes = append(scopes, line)
	}
	if l.code == nil {
		body := append(head, scopes...)
		body = append(body, "", c.spin.View()+" Asking "+c.brandName()+" for a login code…")
		return c.panelFrame(w, title, body)
	}
	// The code and the link come first: a small window still shows them.
	dc := l.code
	head = append(head, "Code: "+c.st.code.Render(" "+cleanLine(dc.UserCode)+" "), "Link:")
	out := c.panelFrame(w, title, head)
	link, fits := linkLine(cleanLine(dc.VerificationURIComplete), w)
	out = append(out, link)
	var tail []string
	if !fits {
		tail = append(tail, c.st.status.Render("Cut to fit: widen the window, or press l to copy the link, o to open it."))
	}
	switch {
	case dc.BrowserOpened:
		tail = append(tail, "Asked your browser to open it: log in with "+c.brandName()+" and approve.")
	case dc.BrowserErr != nil:
		tail = append(tail, c.st.err.Render("Could not open the browser: "+clean(dc.BrowserErr.Error())+".")+" Open the link yourself.")
	default:
		tail = append(tail, "Open the link, log in with "+c.brandName()+" and approve.")
	}
	tail = append(tail, "")
	tail = append(tail, scopes...)
	return append(out, c.panelBody(w, tail)...)
}

// linkLine draws a link at the left edge, unindented, on one row: a hyperlink (OSC 8) to
// the whole link. A link wider than the window is cut short with "…" rather than broken
// over several rows (a selection across rows copies a line break into it); fits is then
// false and the panel says how to get the whole link.
func linkLine(link string, w int) (line string, fits bool) {
	w = max(w, 1)
	fits = ansi.StringWidth(link) <= w
	shown := link
	if !fits {
		shown = ansi.Truncate(link, w, "…")
	}
	return ansi.SetHyperlink(link) + shown + ansi.ResetHyperlink(), fits
}
