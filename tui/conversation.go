package tui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// The conversation panel: the scrollback, sending, the queue of messages typed while a
// reply is on its way, and the slash commands.

// command is a slash command of the input.
type command struct{ name, args, help string }

var commands = []command{
	{"/help", "", "list commands and keys"},
	{"/new", "", "start a new conversation"},
	{"/login", "SCOPE…", "approve delegation scopes (Tab completes them)"},
	{"/logout", "", "forget the delegation"},
	{"/receipts", "", "show the last receipt (also Ctrl+R)"},
	{"/save", "", "save the files of the last reply that has files"},
	{"/card", "", "show the Agent Card"},
	{"/quit", "", "leave (also Ctrl+C)"},
}

// conversationKey handles a key in the conversation: scrolling, sending, stopping the
// wait; every other key edits the input.
func (c *chat) conversationKey(k tea.KeyPressMsg) tea.Cmd {
	h := c.scrollHeight()
	ks := &c.keys
	switch {
	case keyMatches(k, ks.Stop):
		c.stopWaiting()
		return nil
	case keyMatches(k, ks.Send):
		return c.submit()
	case keyMatches(k, ks.Newline):
		c.in.insert("\n")
		return nil
	case keyMatches(k, ks.Complete):
		c.complete()
		return nil
	case keyMatches(k, ks.PageUp):
		c.sb.up(max(1, h-1), c.width, h)
		return nil
	case keyMatches(k, ks.PageDown):
		c.sb.down(max(1, h-1), c.width, h)
		return nil
	case keyMatches(k, ks.Top):
		c.sb.home()
		return nil
	case keyMatches(k, ks.Bottom):
		c.sb.end()
		return nil
	case keyMatches(k, ks.Home) && c.in.value() == "":
		c.sb.home()
		return nil
	case keyMatches(k, ks.End) && c.in.value() == "":
		c.sb.end()
		return nil
	case keyMatches(k, ks.Receipt):
		c.openReceipt()
		return nil
	}
	return c.in.edit(k)
}

// stopWaiting handles Esc while a reply is on its way: the wait (and the queue) is
// abandoned and nothing the User wrote is lost. With an empty input the unanswered message
// comes back alone and Enter sends it again under the same message id, so a Brand that got
// it answers it once; otherwise the unanswered and queued messages are put back in the
// input above the draft.
func (c *chat) stopWaiting() {
	if c.pending == nil {
		return
	}
	p := c.pending
	p.cancel()
	c.pending, c.hold = nil, ""
	queued := c.queue
	c.queue = nil
	draft := c.in.value()
	if draft == "" && len(queued) == 0 {
		c.in.set(p.text)
		c.notice("Stopped waiting for the reply; the Brand may still have got your message. " +
			"It is back in the input: press Enter to send it again (a Brand that got it answers it only once).")
		return
	}
	parts := append([]string{p.text}, queued...)
	if draft != "" {
		parts = append(parts, draft)
	}
	c.in.set(strings.Join(parts, "\n"))
	c.notice("Stopped waiting for the reply; the Brand may still have got your message. " +
		"Your unanswered and queued messages are back in the input, with what you were typing below them.")
}

func (c *chat) openReceipt() {
	if c.last == nil {
		c.flash = "No receipt in this conversation yet: receipts come with replies sent under delegation."
		return
	}
	c.openPanel(&receiptPanel{r: c.last})
}

// submit handles Enter: a slash command, or a message to send (queued when a reply or a
// new conversation is on its way).
func (c *chat) submit() tea.Cmd {
	text := strings.TrimSpace(c.in.value())
	if text == "" {
		return nil
	}
	if strings.HasPrefix(text, "/") && !strings.HasPrefix(text, "//") {
		return c.command(text)
	}
	text = strings.TrimPrefix(text, "/") // "//x" sends "/x"
	c.in.reset()
	c.sb.end()
	if c.pending != nil || c.busy != "" || c.panel != nil {
		c.queue = append(c.queue, text)
		return nil
	}
	return c.sendText(text)
}

// sendText shows text as the User's turn and sends it.
func (c *chat) sendText(text string) tea.Cmd {
	c.addTurns(Turn{Role: RoleUser, Text: text, At: c.now()})
	c.sb.end()
	return c.send(text, false)
}

// next sends the first queued message when nothing else is running.
func (c *chat) next() tea.Cmd {
	if len(c.queue) == 0 || c.pending != nil || c.busy != "" || c.panel != nil {
		return nil
	}
	text := c.queue[0]
	c.queue = c.queue[1:]
	return c.sendText(text)
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

// requeue puts the queued messages back in the input (above any draft) after a failure
// stopped the queue, and says so.
func (c *chat) requeue() {
	n := len(c.queue)
	if n == 0 {
		return
	}
	parts := slices.Clone(c.queue)
	c.queue = nil
	if d := c.in.value(); d != "" {
		parts = append(parts, d)
	}
	c.in.set(strings.Join(parts, "\n"))
	if n == 1 {
		c.notice("1 message was not sent; it is back in the input.")
	} else {
		c.notice(fmt.Sprintf("%d messages were not sent; they are back in the input, one per line.", n))
	}
}

func (c *chat) onReply(msg replyMsg) tea.Cmd {
	if c.pending == nil || c.pending.seq != msg.seq {
		return nil // abandoned with Esc
	}
	p := c.pending
	c.pending = nil
	c.hold = ""
	p.cancel()
	c.header = c.b.Header()
	if msg.err != nil {
		return c.onSendError(p.text, msg.err)
	}
	c.addTurns(msg.reply.Turns...)
	if su := msg.reply.StepUp; su != nil {
		ids := make([]string, len(su.MissingScopes))
		for i, s := range su.MissingScopes {
			ids[i] = clean(s.ID)
		}
		text := clean(su.Text)
		if text == "" {
			text = c.brandName() + " needs more permission."
		}
		c.notice(text + " Asking you to approve: " + strings.Join(ids, ", ") + ".")
		return c.startLogin(su, su.MissingScopes)
	}
	return c.next()
}

// onSendError shows a failed send in plain words and offers the way out: a new
// conversation when the Brand closed or forgot this one, identity only when the delegation
// died. The message is never lost: it is offered again or put back in the input.
func (c *chat) onSendError(text string, err error) tea.Cmd {
	switch {
	case errors.Is(err, ErrContextClosed), errors.Is(err, ErrContextUnknown):
		what := c.brandName() + " closed this conversation."
		if !errors.Is(err, ErrContextClosed) {
			what = c.brandName() + " no longer knows this conversation (it may have restarted, or the conversation expired)."
		}
		c.fail(what)
		c.last = nil
		queued := c.queue
		c.queue = nil
		c.openPanel(&question{
			text:     "Start a new conversation and send your message again?",
			yesLabel: "new conversation", noLabel: "keep this one",
			// What was submitted while the question was open (c.queue) goes after the
			// messages queued before it.
			yes: func(c *chat) tea.Cmd {
				c.queue = append(queued, c.queue...)
				c.busy = "starting a new conversation"
				return tea.Batch(c.newConversation(text), c.startSpinner())
			},
			no: func(c *chat) tea.Cmd {
				c.queue = append(append([]string{text}, queued...), c.queue...)
				c.requeue()
				c.notice("Kept this conversation; nothing was sent again. /new starts a new one.")
				return nil
			},
		})
		return nil
	case errors.Is(err, ErrDelegationLost):
		c.fail("The delegation for " + c.brandName() + " stopped working: continuing with identity only (/login approves it again).")
		c.queue = append([]string{text}, c.queue...)
		c.requeue()
		return nil
	}
	// Any other failure (the network, a refusal): the message is back in the input, above
	// the queued ones, to be sent again (the same text reuses its message id) or edited.
	c.fail(clean(err.Error()))
	c.queue = append([]string{text}, c.queue...)
	c.requeue()
	return nil
}

// newConversation starts a new conversation on the Backend as a command; then, when not
// empty, is sent in it.
func (c *chat) newConversation(then string) tea.Cmd {
	b := c.b
	return func() tea.Msg { return newConvMsg{err: b.NewConversation(), then: then} }
}

func (c *chat) onNewConversation(msg newConvMsg) tea.Cmd {
	c.busy, c.hold = "", ""
	c.header = c.b.Header()
	if msg.err != nil {
		c.fail("Could not start a new conversation: " + clean(msg.err.Error()))
		if msg.then != "" {
			c.queue = append([]string{msg.then}, c.queue...)
		}
		c.requeue()
		return nil
	}
	c.last = nil
	if msg.then != "" {
		c.notice("New conversation started; sending your message again.")
		return c.sendText(msg.then)
	}
	c.notice("New conversation: your next message starts it.")
	c.sb.end()
	return c.next()
}

// command runs a slash command typed in the input. The input is cleared for every command
// but an incomplete /login, whose text stays to be completed.
func (c *chat) command(line string) tea.Cmd {
	fields := strings.Fields(line)
	name, args := fields[0], fields[1:]
	done := func() { c.in.reset() }
	switch name {
	case "/help":
		done()
		c.notice(c.keys.commandHelp())
	case "/new":
		done()
		if c.pending != nil || c.busy != "" {
			c.hold = "wait for the reply (or press Esc) before starting a new conversation"
			return nil
		}
		c.busy = "starting a new conversation"
		return tea.Batch(c.newConversation(""), c.startSpinner())
	case "/login":
		if len(c.scopes) == 0 {
			done()
			c.fail(c.brandName() + " offers no delegation: its card lists no scopes.")
			return nil
		}
		if len(args) == 0 {
			c.flash = "usage: /login SCOPE… (Tab completes): " + strings.Join(c.scopeIDs(), " ")
			return nil
		}
		if c.pending != nil || c.busy != "" {
			c.hold = "wait for the reply (or press Esc) before logging in"
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
		done()
		return c.startLogin(nil, want)
	case "/logout":
		done()
		if c.pending != nil || c.busy != "" {
			c.hold = "wait for the reply (or press Esc) before logging out"
			return nil
		}
		c.busy = "logging out"
		b := c.b
		return tea.Batch(func() tea.Msg { return logoutMsg{err: b.Logout()} }, c.startSpinner())
	case "/receipts":
		done()
		c.openReceipt()
	case "/save":
		done()
		return c.save()
	case "/card":
		done()
		c.notice(clean(c.b.Card()))
	case "/quit", "/exit":
		return c.quit()
	default:
		done()
		c.flash = "Unknown command " + name + ". /help lists them; start with // to send text that begins with /."
	}
	return nil
}

func (c *chat) scopeIDs() []string {
	ids := make([]string, len(c.scopes))
	for i, s := range c.scopes {
		ids[i] = clean(s.ID)
	}
	return ids
}

// complete handles Tab: command names, then scope ids after /login.
func (c *chat) complete() {
	v := c.in.value()
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
			if strings.HasPrefix(cmd.name, word) {
				cands = append(cands, cmd.name)
			}
		}
	}
	switch len(cands) {
	case 0:
		c.flash = "no completion"
		return
	case 1:
		c.in.set(prefix + cands[0] + " ")
	default:
		c.in.set(prefix + commonPrefix(cands))
		c.flash = strings.Join(cands, "  ")
	}
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
