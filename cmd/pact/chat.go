package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pact-cli/pact/agent"
	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/delegation"
	"github.com/pact-cli/pact/iostreams"
	"github.com/pact-cli/pact/tui"
)

func newChatCmd(a *app) *cobra.Command {
	var f sessionFlags
	cmd := &cobra.Command{
		Use:   "chat BRAND",
		Short: "Hold a conversation with a Brand's agent",
		Long: `Hold a conversation with a Brand's agent. On a terminal this is a full-screen
chat; otherwise each line of stdin is sent as a message and each reply printed
(JSON lines with --json, one object per reply, as pact send --json prints).

In that line mode a line whose first word is one of these commands runs it:
  /new              start a new conversation
  /login SCOPE...   let pact act on your account at the Brand
  /again            ask again for the answers to your messages that got none
  /drop             give up your messages that got no answer
  /help             list the commands
  /quit             leave (Ctrl+D, or the end of stdin, too)
Any other line is sent as typed, a path such as /home/me/a.pdf too. A line
starting with an unknown /word is reported and not sent, and the chat goes on;
to send it, type the slash twice: //text sends /text. A message
that fails does not end the chat either; at the end pact exits with the code
of the last failure (2 for a mistyped command), so scripts notice.
When you type at a terminal, a "you›" prompt on stderr shows that pact is
waiting for a line, also when stdout is piped, and the chat opens by saying
which of your messages got no answer before a chat was left: /again sends
them again under the same message id, to fetch the answer without the
Brand's agent acting twice (typing the same text does too).`,
		Args:              exactArgs(1, "chat needs a BRAND (a domain, an origin or a card URL)"),
		ValidArgsFunction: a.completeBrands,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.openConversation(cmd.Context(), args[0], f)
			c, err = a.trustInTUI(cmd.Context(), args[0], f, c, err)
			if err != nil {
				return err
			}
			if !a.json && a.io.Interactive() && a.tuiAvailable() {
				return a.runTUI(cmd.Context(), c)
			}
			return a.lineChat(cmd, c)
		},
	}
	f.add(cmd)
	return cmd
}

// lineChat sends each stdin line as a message. Failures of one message are
// reported and the chat goes on; the exit code is that of the last failure.
//
// A line starting with "/" is a command handled here, never sent: /new,
// /login, /help, /quit (lineCommands). "//text" sends "/text". When a
// person types (stdin and stderr are terminals) a prompt on stderr shows
// that input is expected, also when stdout is piped.
func (a *app) lineChat(cmd *cobra.Command, c agent.Conversation) error {
	prompt := a.io.IsStdinTTY() && a.io.IsStderrTTY()
	st := a.io.ErrStyles()
	if prompt {
		a.io.Eprintf("%s %s\n", st.Bold.Render(line(c.Facts().Card.Name())), st.Faint.Render("· type a message; /help for commands, Ctrl+D to quit"))
		if turns, err := c.History(cmd.Context()); err == nil && !a.json {
			for _, t := range turns {
				a.printTurn(t)
			}
		}
		a.offerUnanswered(cmd.Context(), c)
	}
	lines, readErr := readLines(a.io.In)
	ctx := cmd.Context()
	var last error
	for {
		if prompt {
			a.io.Eprintf("%s ", st.Accent.Render("you›"))
		}
		var (
			line string
			ok   bool
		)
		// Ctrl+C ends the chat at once, also while waiting for a line.
		select {
		case <-ctx.Done():
			if prompt {
				a.io.Eprintf("\n")
			}
			return ctx.Err()
		case line, ok = <-lines:
		}
		if !ok {
			break
		}
		in := tui.ParseInput(line, isLineCommand)
		switch in.Kind {
		case tui.InputCommand, tui.InputUnknown:
			quit, err := a.lineCommand(ctx, c, in)
			var reported silentError
			switch {
			case ctx.Err() != nil:
				return ctx.Err()
			case errors.As(err, &reported):
				last = err // a message /again sent, already reported
			case err != nil:
				last = silentError{code: a.reportLine(err)}
			}
			if quit {
				return last // the rest of stdin is not read
			}
			continue
		}
		text := in.Text // "//text" sends "/text"
		if text == "" {
			continue
		}
		if err := a.lineSend(ctx, c, text); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			last = err
		}
	}
	if err := <-readErr; err != nil {
		return fmt.Errorf("reading stdin: %w", err)
	}
	return last
}

// lineSend sends text as one line of the chat and prints the reply, or what
// went wrong. It returns nil when the reply came, the failure as a
// silentError with its exit code (already reported), or ctx's error when
// the chat was interrupted.
func (a *app) lineSend(ctx context.Context, c agent.Conversation, text string) error {
	res, err := a.deliver(ctx, c, text)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var pending *agent.StepUpPending
	var saveErr *conversation.SaveError
	var mismatch *conversation.ContextMismatchError
	switch {
	case (errors.As(err, &saveErr) || errors.As(err, &mismatch)) && res != nil:
		// The Brand acted: show the reply and its receipt anyway.
		if a.json {
			a.printJSONLine(res)
		} else {
			a.printUnsaved(res, nil, "")
		}
		return silentError{code: a.reportLine(err)}
	case errors.As(err, &pending):
		if a.json {
			a.printJSONLine(pending.StepUp.Result)
		} else {
			a.printStepUpText(pending.StepUp.Result)
			// The chat's own command, as the full-screen chat says it.
			a.io.Eprintf("%s\n", safe(pending.StepUp.Words(agent.ChatLogin, agent.ChatNoScopes)))
		}
		return silentError{code: exitConsent}
	case err != nil:
		return silentError{code: a.reportLine(err)}
	case a.json:
		a.printJSONLine(res)
		if res.Receipt != nil && !res.Receipt.Verified {
			a.printReceiptNote(res)
		}
	default:
		if err := a.printResult(res, ""); err != nil {
			return silentError{code: a.reportLine(err)}
		}
	}
	return nil
}

// offerUnanswered says, as the chat opens on a terminal, which of the
// User's messages of this conversation got no answer before a chat was
// left (sent, their outcome unknown: PACT §4.3), as the full-screen chat
// does, and offers /again (the same messageId, so the Brand's agent does
// not act twice) and /drop.
func (a *app) offerUnanswered(ctx context.Context, c agent.Conversation) {
	un, err := c.Unanswered(ctx)
	if err != nil || len(un) == 0 {
		return
	}
	st := a.io.ErrStyles()
	for _, t := range un {
		a.io.Eprintf("%s %s  %s\n", st.Faint.Render("you›"), st.Faint.Render(safe(t.Text)), st.Warning.Render("· no answer yet"))
	}
	what := "Your last message got no answer before the chat was left; " + line(c.Facts().Card.Name()) + " may have received it. Type /again to ask for its answer with the same message id (the Brand's agent does not act twice), or /drop to give it up."
	if len(un) > 1 {
		what = fmt.Sprintf("%d of your messages got no answer before the chat was left; %s may have received them. Type /again to ask for their answers with the same message ids (the Brand's agent does not act twice), or /drop to give them up.", len(un), line(c.Facts().Card.Name()))
	}
	a.io.Eprintf("%s %s\n", st.Warning.Render("!"), what)
}

// readLines reads r line by line (up to 1 MiB a line) on its own goroutine:
// the lines, then the read error (nil at the end of input) once lines is
// closed.
func readLines(r io.Reader) (<-chan string, <-chan error) {
	lines, errc := make(chan string), make(chan error, 1)
	go func() {
		in := bufio.NewScanner(r)
		in.Buffer(make([]byte, 64<<10), 1<<20)
		for in.Scan() {
			lines <- in.Text()
		}
		errc <- in.Err()
		close(lines)
	}()
	return lines, errc
}

// lineHelp lists the line-mode commands.
const lineHelp = `Type a message and press Enter to send it. Commands:
  /new              start a new conversation
  /login SCOPE...   let pact act on your account at the Brand (/login alone lists its permissions)
  /again            ask again for the answers to your messages that got none (same message ids)
  /drop             give up your messages that got no answer (they may still have been delivered)
  /help             this help
  /quit             leave (Ctrl+D too)
Any other line is sent as typed (a path such as /home/me/a.pdf too); a line
starting with an unknown /word is not sent. To send a message that starts
with /, type the slash twice: //text sends /text.`

// isLineCommand reports whether name is a line-mode command.
func isLineCommand(name string) bool {
	switch name {
	case "/quit", "/exit", "/q", "/help", "/?", "/new", "/login", "/again", "/drop":
		return true
	}
	return false
}

// lineCommand runs one line-mode command, or reports an unknown /word (tui.ParseInput).
// It reports whether the chat should end.
func (a *app) lineCommand(ctx context.Context, c agent.Conversation, in tui.Input) (quit bool, err error) {
	st := a.io.ErrStyles()
	card := c.Facts().Card
	f := append([]string{in.Name}, in.Args...)
	switch f[0] {
	case "/quit", "/exit", "/q":
		return true, nil
	case "/help", "/?":
		a.io.Eprintf("%s\n", lineHelp)
	case "/again":
		// Each message that got no answer, under its own messageId
		// (agent.Send: Conversation.MessageIDFor), oldest first.
		un, err := c.Unanswered(ctx)
		if err != nil {
			return false, err
		}
		if len(un) == 0 {
			a.io.Eprintf("None of your messages is waiting for its answer.\n")
			return false, nil
		}
		var last error
		for _, t := range un {
			a.io.Eprintf("%s %s\n", st.Faint.Render("you›"), st.Faint.Render(safe(t.Text)))
			if err := a.lineSend(ctx, c, t.Text); err != nil {
				if ctx.Err() != nil {
					return true, err
				}
				last = err // reported: a silentError
			}
		}
		return false, last
	case "/drop":
		un, err := c.Unanswered(ctx)
		if err != nil {
			return false, err
		}
		for _, t := range un {
			if err := c.Abandon(ctx, t.MessageID, conversation.AbandonRemoved); err != nil {
				return false, err
			}
		}
		switch len(un) {
		case 0:
			a.io.Eprintf("None of your messages is waiting for its answer.\n")
		case 1:
			a.io.Eprintf("%s Gave up your message that got no answer; it may still have reached %s.\n", st.Success.Render("✓"), line(card.Name()))
		default:
			a.io.Eprintf("%s Gave up your %d messages that got no answer; they may still have reached %s.\n", st.Success.Render("✓"), len(un), line(card.Name()))
		}
	case "/new":
		if err := c.StartNew(ctx); err != nil {
			return false, err
		}
		a.io.Eprintf("%s The next message starts a new conversation with %s.\n", st.Success.Render("✓"), line(card.Name()))
	case "/login":
		d := card.Delegation
		if d == nil {
			return false, conversation.ErrNoDelegation
		}
		if len(f) == 1 {
			a.io.Eprintf("%s can be given these permissions; type /login and the ones you want:\n", line(card.Name()))
			ids := make([]string, 0, len(d.Scopes))
			for id := range d.Scopes {
				ids = append(ids, id)
			}
			sort.Strings(ids)
			for _, id := range ids {
				a.io.Eprintf("  %s  %s\n", st.Accent.Render(line(id)), line(d.Scopes[id]))
			}
			a.offerSkillScopes(card)
			return false, nil
		}
		g, err := a.login(ctx, c, f[1:])
		if err != nil {
			return false, err
		}
		a.reportGrant(f[1:], g)
	default:
		return false, usageError{fmt.Errorf("unknown command %s: type /help for the commands; to send a message that starts with /, type //%s", f[0], strings.TrimPrefix(strings.Join(f, " "), "/"))}
	}
	return false, nil
}

func (a *app) printTurn(t conversation.Turn) {
	st := a.io.ErrStyles()
	if t.Role == "user" {
		a.io.Eprintf("%s %s\n", st.Faint.Render("you›"), st.Faint.Render(safe(t.Text)))
		return
	}
	// In the gutter, as a live reply is: a line of the Brand's must not pass for one of
	// pact's (issue 31).
	for _, l := range strings.Split(iostreams.Gutter(safe(t.Text), iostreams.GutterMark), "\n") {
		a.io.Eprintf("%s\n", st.Faint.Render(l))
	}
}

// reportLine reports one failed message in line mode and returns its code.
func (a *app) reportLine(err error) int {
	code, reason, status := classify(err)
	if a.json {
		a.printJSONLine(map[string]any{"error": map[string]any{"reason": reason, "message": jsonMessage(err), "httpStatus": status}})
		return code
	}
	msg := a.humanError(err)
	var stale *conversation.StaleContextError
	var lr *delegation.LoginRequiredError
	var unknown *conversation.OutcomeUnknownError
	if errors.As(err, &unknown) {
		// In the chat, the way to ask again is to type the same message.
		msg = safe(unknown.What())
		if !unknown.Closed {
			msg += " " + safe(unknown.Remedy("type the same message again"))
		}
		if d := errDetail(err); a.debug && d != "" {
			msg += "\n  detail: " + safe(d)
		}
	} else if errors.As(err, &lr) {
		// In the chat, the command is /login, with the same scopes.
		msg = safe(lr.What()) + "; type " + safe(strings.TrimSpace("/login "+iostreams.CommandHint(lr.Scopes...))) + " to delegate again"
		if d := errDetail(err); a.debug && d != "" {
			msg += "\n  detail: " + safe(d)
		}
	} else if errors.As(err, &stale) {
		msg = safe(stale.What()) + " type /new to start a new conversation"
		if d := errDetail(err); a.debug && d != "" {
			msg += "\n  detail: " + safe(d)
		}
	}
	a.io.Eprintf("%s %s\n", a.io.ErrStyles().Error.Render("error:"), msg)
	return code
}
