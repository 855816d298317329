package main

import (
	"bufio"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pact-cli/pact/conversation"
)

func newChatCmd(a *app) *cobra.Command {
	var f sessionFlags
	cmd := &cobra.Command{
		Use:   "chat BRAND",
		Short: "Hold a conversation with a Brand's agent",
		Long: `Hold a conversation with a Brand's agent. On a terminal this is a full-screen
chat; otherwise each line of stdin is sent as a message and each reply printed
(JSON lines with --json, one object per reply, as pact send --json prints).`,
		Args:              exactArgs(1, "chat needs a BRAND (a domain, an origin or a card URL)"),
		ValidArgsFunction: a.completeBrands,
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := a.openSession(cmd.Context(), args[0], f)
			s, err = a.trustInTUI(cmd.Context(), args[0], f, s, err)
			if err != nil {
				return err
			}
			if !a.json && a.io.Interactive() && a.tuiAvailable() {
				return a.runTUI(cmd.Context(), s)
			}
			return a.lineChat(cmd, s)
		},
	}
	f.add(cmd)
	return cmd
}

// lineChat sends each stdin line as a message. Failures of one message are
// reported and the chat goes on; the exit code is that of the last failure.
func (a *app) lineChat(cmd *cobra.Command, s *conversation.Session) error {
	prompt := a.io.Interactive() && !a.json
	st := a.io.ErrStyles()
	if prompt {
		a.io.Eprintf("%s %s\n", st.Bold.Render(s.Card.Name()), st.Faint.Render("· type a message, Ctrl+D to quit"))
		if turns, err := s.History(); err == nil {
			for _, t := range turns {
				a.printTurn(t)
			}
		}
	}
	in := bufio.NewScanner(a.io.In)
	in.Buffer(make([]byte, 64<<10), 1<<20)
	var last error
	for {
		if prompt {
			a.io.Eprintf("%s ", st.Accent.Render("you›"))
		}
		if !in.Scan() {
			break
		}
		text := strings.TrimSpace(in.Text())
		if text == "" {
			continue
		}
		if cmd.Context().Err() != nil {
			break
		}
		res, err := a.deliver(cmd.Context(), s, text)
		var pending *stepUpPending
		switch {
		case errors.As(err, &pending):
			last = silentError{code: exitConsent}
			if a.json {
				a.printJSONLine(pending.res)
			} else {
				a.io.Printf("%s\n", pending.res.Text())
				a.io.Eprintf("%s\n", pending.Error())
			}
		case err != nil:
			code := a.reportLine(err)
			last = silentError{code: code}
		case a.json:
			a.printJSONLine(res)
			if res.Receipt != nil && !res.Receipt.Verified {
				a.printReceiptNote(res)
			}
		default:
			a.printResult(res)
		}
	}
	if err := in.Err(); err != nil {
		return fmt.Errorf("reading stdin: %w", err)
	}
	return last
}

func (a *app) printTurn(t conversation.Turn) {
	st := a.io.ErrStyles()
	if t.Role == "user" {
		a.io.Eprintf("%s %s\n", st.Faint.Render("you›"), st.Faint.Render(t.Text))
		return
	}
	a.io.Eprintf("%s\n", st.Faint.Render(t.Text))
}

// reportLine reports one failed message in line mode and returns its code.
func (a *app) reportLine(err error) int {
	code, reason, status := classify(err)
	if a.json {
		a.printJSONLine(map[string]any{"error": map[string]any{"reason": reason, "message": err.Error(), "httpStatus": status}})
		return code
	}
	a.io.Eprintf("%s %s\n", a.io.ErrStyles().Error.Render("error:"), err.Error())
	return code
}
