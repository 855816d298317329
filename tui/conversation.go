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
	{"/mouse", "", "the mouse: select text (as it starts) or scroll by wheel"},
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
		c.layout()
		return nil
	case keyMatches(k, ks.Clear):
		c.clearInput()
		return nil
	case keyMatches(k, ks.Undo) && c.undo != nil:
		c.undoClear()
		return nil
	case keyMatches(k, ks.EditQueued) && c.editing == nil && len(c.queue) > 0 && c.in.empty():
		c.editQueued(len(c.queue) - 1)
		return nil
	case keyMatches(k, ks.QueuePrev) && c.editing != nil:
		c.moveEdit(-1)
		return nil
	case keyMatches(k, ks.QueueNext) && c.editing != nil:
		c.moveEdit(1)
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
	case keyMatches(k, ks.Home) && c.in.empty():
		c.sb.home()
		return nil
	case keyMatches(k, ks.End) && c.in.empty():
		c.sb.end()
		return nil
	case keyMatches(k, ks.Receipt):
		c.openReceipt()
		return nil
	}
	if c.in.edit(k) {
		c.layout()
	}
	return nil
}

// stopWaiting handles Esc while a reply is on its way: the chat stops waiting, nothing
// more. The message stays sent and on record, the request goes on and its late answer is
// shown when it comes; the queue stays queued (it goes after that answer) and the input is
// left alone.
//
// A second Esc gives up on that answer (a Brand that never answers must not hold the
// queue forever): the request is abandoned, and the message, on record as sent and
// unanswered, waits at the head of the queue, where Enter asks for its answer again under
// the same messageId (§4.3).
func (c *chat) stopWaiting() {
	p := c.pending
	if p != nil && p.detached && c.editing == nil {
		p.cancel()
		c.pending = nil
		c.setState(p.q, Unanswered)
		c.queue = append([]*queued{p.q}, c.queue...)
		c.paused = true
		c.notice("Gave up waiting for the answer. Your message stays on record, unanswered, at the head of the queue: " +
			"Enter asks for its answer again with the same message id (the Brand's agent does not act twice).")
		return
	}
	if p == nil || p.detached {
		if c.editing != nil {
			c.cancelEdit()
		}
		return
	}
	p.detached = true
	c.hold = ""
	c.setState(p.q, Unanswered)
	c.notice("Stopped waiting. Your message was sent and stays on record; " + c.brandName() +
		"'s answer is shown when it comes, and the queued messages go after it.")
}

func (c *chat) openReceipt() {
	if c.last == nil {
		c.flash = "No receipt in this conversation yet: receipts come with replies sent under delegation."
		return
	}
	c.openPanel(&receiptPanel{r: c.last})
}

// submit handles Enter: a known command, a message to send (queued when a reply or a new
// conversation is on its way), or the queued message being edited put back. What is not a
// command is never run as one (ParseInput); an unknown /word stays in the input.
func (c *chat) submit() tea.Cmd {
	if c.editing != nil {
		return c.commitEdit()
	}
	in := ParseInput(c.in.value(), isCommand)
	switch in.Kind {
	case InputUnknown:
		c.flash = in.Name + " is not a command (/help lists them); to send it as a message, start it with //."
		return nil
	case InputCommand:
		return c.command(in.Name, in.Args)
	}
	if in.Text == "" {
		if c.paused { // Enter on an empty input sends the held queue again
			c.paused = false
			return c.next()
		}
		return nil
	}
	c.in.reset()
	c.layout()
	c.sb.end()
	q := &queued{text: in.Text}
	if c.paused && len(c.queue) > 0 {
		// A held queue (a failure, or messages kept from the last chat) goes only on an
		// Enter of its own: this message joins it, it does not set it off with it.
		c.queue = append(c.queue, q)
		c.flash = "Queued behind the held messages: Enter with an empty input sends them."
		return nil
	}
	c.paused = false
	if c.busyForSend() || len(c.queue) > 0 {
		c.queue = append(c.queue, q)
		return c.next()
	}
	return c.sendQueued(q)
}

// busyForSend reports whether a send must wait: a reply (waited for or not), a backend
// call or a panel.
func (c *chat) busyForSend() bool { return c.pending != nil || c.busy != "" || c.panel != nil }

// sendQueued shows q as the User's turn (the same turn again for a new attempt: a message
// is drawn once) and sends it.
func (c *chat) sendQueued(q *queued) tea.Cmd {
	if q.e == nil {
		c.addTurns(Turn{Role: RoleUser, Text: q.text, At: c.now(), State: Sending})
		q.e = c.sb.entries[len(c.sb.entries)-1]
	} else {
		q.e.turn.Text = q.text
		c.setState(q, Sending)
	}
	c.sb.end()
	return c.send(q, false)
}

// setState shows q's turn in state st.
func (c *chat) setState(q *queued, st SendState) {
	if q == nil || q.e == nil || q.e.turn.State == st {
		return
	}
	q.e.turn.State = st
	q.e.version++
}

// next sends the first queued message when nothing else is running and the queue is not
// held (after a failure) or being edited at its head.
func (c *chat) next() tea.Cmd {
	if len(c.queue) == 0 || c.busyForSend() || c.paused || c.queue[0] == c.editing {
		return nil
	}
	q := c.queue[0]
	c.queue = c.queue[1:]
	return c.sendQueued(q)
}

// send starts Send (or Resend) of q and the spinner.
func (c *chat) send(q *queued, resend bool) tea.Cmd {
	c.seq++
	seq := c.seq
	ctx, cancel := context.WithCancel(context.Background())
	c.pending = &pending{seq: seq, q: q, started: c.now(), cancel: cancel}
	b, text := c.b, q.text
	if sb, ok := b.(Streamer); ok {
		// The reply may stream: show it as it grows (stream.go).
		put, wait, done := partials(seq)
		run := func() tea.Msg {
			defer done()
			var r Reply
			var err error
			if resend {
				r, err = sb.ResendStreaming(ctx, put)
			} else {
				r, err = sb.SendStreaming(ctx, text, put)
			}
			return replyMsg{seq: seq, reply: r, err: err}
		}
		return tea.Batch(run, wait, c.startSpinner())
	}
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

// holdBack puts q, which was not sent, back at the head of the queue and holds the queue:
// Enter sends it again (the same text reuses its messageId), ↑ edits it.
func (c *chat) holdBack(q *queued) {
	if q != nil {
		c.setState(q, Failed)
		c.queue = append([]*queued{q}, c.queue...)
	}
	c.pauseQueue()
}

// pauseQueue holds the queue after a failure and says how to go on.
func (c *chat) pauseQueue() {
	if len(c.queue) == 0 {
		return
	}
	c.paused = true
	const how = "The queue waits: Enter with an empty input sends it again; ↑ edits a queued message."
	if !c.saidSinceLastTurn(how) {
		c.notice(how) // said once, not after every failure in a row
	}
}

// saidSinceLastTurn reports whether notice text was shown after the last turn of the User
// or the Brand, that is among the notices and errors at the end of the scrollback.
func (c *chat) saidSinceLastTurn(text string) bool {
	for i := len(c.sb.entries) - 1; i >= 0; i-- {
		t := c.sb.entries[i].turn
		if t.Role != RoleSystem && t.Role != RoleError {
			return false
		}
		if t.Role == RoleSystem && t.Text == text {
			return true
		}
	}
	return false
}

func (c *chat) onReply(msg replyMsg) tea.Cmd {
	if c.live != nil && c.live.seq == msg.seq {
		c.dropLive() // the complete reply (or the error) replaces what streamed
	}
	if c.pending == nil || c.pending.seq != msg.seq {
		return nil
	}
	p := c.pending
	c.pending = nil
	c.hold = ""
	p.cancel()
	c.header = c.b.Header()
	if msg.err != nil {
		return c.onSendError(p.q, msg.err)
	}
	c.setState(p.q, Delivered)
	c.addTurns(msg.reply.Turns...)
	if su := msg.reply.StepUp; su != nil {
		ids := make([]string, len(su.MissingScopes))
		for i, s := range su.MissingScopes {
			ids[i] = clean(s.ID)
		}
		// The Brand's sentence in the Brand's voice (an agent turn, drawn as its replies
		// are), pact's in a note: the Brand's words are never drawn as one of pact's.
		ask := "Asking you to approve: " + strings.Join(ids, ", ") + "."
		if strings.TrimSpace(su.Text) != "" {
			c.addTurns(Turn{Role: RoleAgent, Text: su.Text, At: c.now()})
		} else {
			ask = c.brandName() + " needs more permission. " + ask
		}
		c.notice(ask)
		return c.startLogin(su, su.MissingScopes)
	}
	return c.next()
}

// onSendError shows a failed send in plain words and offers the way out: a new
// conversation when the Brand closed or forgot this one, identity only when the delegation
// died. The message is never lost: it waits at the head of the queue, drawn once.
func (c *chat) onSendError(q *queued, err error) tea.Cmd {
	switch {
	case errors.Is(err, ErrContextClosed) && errors.Is(err, ErrSentUnanswered):
		// Closed after the message may have reached the Brand: its answer can no longer
		// be fetched, and sending it again in a new conversation could make the Brand's
		// agent act twice. It is not offered again; the User decides (§4.3).
		c.setState(q, Unanswered)
		c.fail(clean(err.Error()))
		c.last = nil
		c.pauseQueue()
		return nil
	case errors.Is(err, ErrContextClosed), errors.Is(err, ErrContextUnknown):
		what := c.brandName() + " closed this conversation."
		if !errors.Is(err, ErrContextClosed) {
			what = c.brandName() + " no longer knows this conversation (it may have restarted, or the conversation expired)."
		}
		c.setState(q, Failed)
		c.fail(what)
		c.last = nil
		c.openPanel(&question{
			text:     "Start a new conversation and send your message again?",
			yesLabel: "new conversation", noLabel: "keep this one",
			yes: func(c *chat) tea.Cmd {
				c.busy = "starting a new conversation"
				return tea.Batch(c.newConversation(q), c.startSpinner())
			},
			no: func(c *chat) tea.Cmd {
				c.notice("Kept this conversation; nothing was sent again. /new starts a new one.")
				c.holdBack(q)
				return nil
			},
		})
		return nil
	case errors.Is(err, ErrDelegationLost):
		c.fail("The delegation for " + c.brandName() + " stopped working: continuing with identity only (/login approves it again).")
		c.holdBack(q)
		return nil
	case errors.Is(err, ErrSentUnanswered):
		// It may have reached the Brand: on record, unanswered, never a draft (§4.3).
		c.fail(clean(err.Error()))
		c.setState(q, Unanswered)
		c.queue = append([]*queued{q}, c.queue...)
		c.pauseQueue()
		return nil
	}
	// Any other failure (a refusal: the message was not processed).
	c.fail(clean(err.Error()))
	c.holdBack(q)
	return nil
}

// newConversation starts a new conversation on the Backend as a command; then, when not
// nil, is sent in it.
func (c *chat) newConversation(then *queued) tea.Cmd {
	b := c.b
	return func() tea.Msg { return newConvMsg{err: b.NewConversation(), then: then} }
}

func (c *chat) onNewConversation(msg newConvMsg) tea.Cmd {
	c.busy, c.hold = "", ""
	c.header = c.b.Header()
	if msg.err != nil {
		c.fail("Could not start a new conversation: " + clean(msg.err.Error()))
		c.holdBack(msg.then)
		return nil
	}
	c.last = nil
	if msg.then != nil {
		c.leaveUnanswered()
		c.notice("New conversation started; sending your message again.")
		return c.sendQueued(msg.then)
	}
	c.notice("New conversation: your next message starts it.")
	c.leaveUnanswered()
	c.sb.end()
	return c.next()
}

// leaveUnanswered takes out of the queue the messages sent in the conversation just left
// whose outcome is unknown (Unanswered): asked about again, they would go in the new
// conversation under a new messageId, and the Brand's agent could act twice (§4.3, issue
// 31 item 1). They stay on record with the conversation they were sent in; the User is
// told, and decides.
func (c *chat) leaveUnanswered() {
	var left []string
	kept := c.queue[:0]
	for _, q := range c.queue {
		if q.e != nil && q.e.turn.State == Unanswered {
			left = append(left, clean(q.text))
			continue
		}
		kept = append(kept, q)
	}
	c.queue = kept
	if len(left) == 0 {
		return
	}
	if len(c.queue) == 0 {
		c.paused = false
	}
	c.notice(fmt.Sprintf("Not sent in the new conversation: %q got no answer in the one left, and %s may have received it. "+
		"It stays on record with that conversation; check with %s before you type it again.", strings.Join(left, `", "`), c.brandName(), c.brandName()))
}

// command runs a known command typed in the input (ParseInput). The input is cleared only
// when the command runs: a command that must wait, or fails, stays in the input as typed.
func (c *chat) command(name string, args []string) tea.Cmd {
	done := func() { c.in.reset(); c.layout() }
	switch name {
	case "/help":
		done()
		c.notice(c.keys.commandHelp())
	case "/new":
		if c.pending != nil || c.busy != "" {
			c.hold = "wait for the reply before starting a new conversation"
			return nil
		}
		done()
		c.busy = "starting a new conversation"
		return tea.Batch(c.newConversation(nil), c.startSpinner())
	case "/login":
		if len(c.scopes) == 0 {
			c.flash = c.brandName() + " offers no delegation: its card lists no scopes."
			return nil
		}
		if len(args) == 0 {
			if c.offerSkillScopes() {
				return nil
			}
			c.flash = "usage: /login SCOPE… (Tab completes): " + strings.Join(c.scopeIDs(), " ")
			return nil
		}
		if c.pending != nil || c.busy != "" {
			c.hold = "wait for the reply before logging in"
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
		if c.pending != nil || c.busy != "" {
			c.hold = "wait for the reply before logging out"
			return nil
		}
		done()
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
		return c.fetchExtendedCard()
	case "/mouse":
		done()
		c.mouse = !c.mouse
		if c.mouse {
			c.flash = "The mouse wheel scrolls; selecting text now needs Shift in most terminals. /mouse again gives the mouse back."
		} else {
			c.flash = "The mouse selects text again; PgUp and PgDn scroll."
		}
	case "/quit", "/exit":
		done() // the command is not a draft to keep for the next chat
		return c.quit()
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
