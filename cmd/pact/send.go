package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pact-cli/pact/agent"
	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/delegation"
	"github.com/pact-cli/pact/receipts"
)

type sessionFlags struct {
	new     bool
	context string
}

func (f *sessionFlags) add(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&f.new, "new", false, "start a new conversation instead of continuing the stored one")
	cmd.Flags().StringVar(&f.context, "context", "", "continue the conversation with this contextId")
}

// openConversation opens a conversation with brand, honouring
// --new/--context (agent.Agent.Open: card, signature and pin checked
// before anything is sent).
func (a *app) openConversation(ctx context.Context, brand string, f sessionFlags) (agent.Conversation, error) {
	st := agent.Start{New: f.new, Context: f.context}
	if err := st.Err(); err != nil {
		return nil, usageError{err}
	}
	ag, err := a.agent()
	if err != nil {
		return nil, err
	}
	sp := a.spinner("Fetching the Agent Card")
	c, err := ag.Open(ctx, brand, st)
	sp.Stop()
	return c, err
}

type stopper interface{ Stop() }
type noSpinner struct{}

func (noSpinner) Stop() {}

// spinner shows a wait on stderr for people; nothing under --json.
func (a *app) spinner(label string) stopper {
	if a.json {
		return noSpinner{}
	}
	sp := a.io.StartSpinner(label)
	a.held.spinning(sp) // a PIN prompt stops it (keys_held.go)
	return sp
}

// deliver sends one message as agent.Send does and answers its events as
// the CLI contract asks: a spinner while waiting; a closed context is told
// and a new one started (under --json it is reported instead; the core asks
// only when the message never reached the Brand, else the turn ends with
// *conversation.OutcomeUnknownError); a dead grant is noted; a step-up on a
// terminal asks the User (a.stepUp), otherwise it stays pending
// (*agent.StepUpPending: exit 4 with the task). The same text as a message
// left unanswered goes under its messageId, and is noted.
func (a *app) deliver(ctx context.Context, c agent.Conversation, text string) (*conversation.Result, error) {
	name := c.Facts().Card.Name()
	f := agent.Front{
		Again: func(earlier *conversation.Turn) {
			if a.json {
				return
			}
			a.io.Eprintf("%s Asking again for the answer to your message of %s (the same message id, so the Brand's agent does not act twice).\n",
				a.io.ErrStyles().Faint.Render("·"), earlier.At.Local().Format("2006-01-02 15:04"))
		},
		Waiting: func(agent.Conversation) func() { return a.spinner("Waiting for " + line(name)).Stop },
		Restart: func(*conversation.ClosedError) bool {
			if a.json {
				return false
			}
			a.io.Eprintf("%s %s ended the conversation. Starting a new conversation.\n",
				a.io.ErrStyles().Warning.Render("!"), line(name))
			return true
		},
		DeadGrant: a.noteDeadGrant,
		Resending: func() { a.io.Eprintf("Sending your message again in the same conversation…\n") },
	}
	if !a.json && a.io.Interactive() {
		f.NeedsScopes = func(ctx context.Context, su *agent.StepUp) (*delegation.Grant, error) { return a.stepUp(ctx, c, su) }
	}
	a.streamFront(&f)
	res, err := agent.Send(ctx, c, text, f)
	if err != nil {
		err = explainDeadGrant(a.explainRefusal(ctx, c.Facts().Provider, err))
	}
	return res, err
}

// printUnsaved shows a reply that arrived but could not be saved (a full
// disk): the Brand has acted, so the reply and its receipt are printed
// all the same — under --json the reply document with an error member,
// else the reply, then the receipt's JWS on stderr — and err decides the
// exit code as before.
func (a *app) printUnsaved(res *conversation.Result, err error, saveDir string) error {
	if a.json {
		code, reason, status := classify(err)
		raw, merr := json.Marshal(res)
		doc := map[string]any{}
		if merr == nil {
			json.Unmarshal(raw, &doc)
		}
		doc["error"] = map[string]any{"reason": reason, "message": jsonMessage(err), "httpStatus": status}
		if perr := a.printJSON(doc); perr != nil {
			return perr
		}
		a.io.Eprintf("%s %s\n", a.io.ErrStyles().Error.Render("error:"), safe(err.Error()))
		return silentError{code: code}
	}
	a.printResult(res, saveDir)
	if res.Receipt != nil && res.Receipt.JWS != "" && res.Receipt.ArchiveError == "" { // else printReceiptNote gave it
		a.io.Eprintf("%s the receipt %s may not have been saved; keep it, it is the Brand's signed proof of what it did:\n%s\n",
			a.io.ErrStyles().Warning.Render("!"), receipts.ShortID(res.Receipt.ID), safe(res.Receipt.JWS))
	}
	return err
}

func (a *app) printResult(res *conversation.Result, saveDir string) error {
	err := a.printReply(res, saveDir)
	a.printReceiptNote(res)
	return err
}

func (a *app) printReceiptNote(res *conversation.Result) {
	if res.Receipt == nil {
		return
	}
	st := a.io.ErrStyles()
	if rc := res.Receipt; rc.ArchiveError != "" {
		// Not in the archive: whatever it says, the User holds the only copy.
		verdict := "verified"
		if !rc.Verified {
			var why []string
			for _, p := range rc.Problems {
				if !strings.HasPrefix(p, "archiving failed: ") {
					why = append(why, p)
				}
			}
			verdict = "FAILED verification (" + safe(strings.Join(why, "; ")) + ")"
		}
		a.io.Eprintf("%s receipt %s %s, but pact could NOT archive it (%s); keep it, it is the Brand's signed proof of what it did:\n%s\n",
			st.Warning.Render("!"), receipts.ShortID(rc.ID), verdict, safe(rc.ArchiveError), safe(rc.JWS))
		return
	}
	if res.Receipt.Verified {
		a.io.Eprintf("%s receipt %s verified\n", st.Success.Render("✓"), receipts.ShortID(res.Receipt.ID))
		return
	}
	if res.Receipt.Replayed {
		a.io.Eprintf("%s receipt %s is NOT a receipt of this turn: %s\n", st.Warning.Render("!"), receipts.ShortID(res.Receipt.ID), safe(strings.Join(res.Receipt.Problems, "; ")))
		return
	}
	a.io.Eprintf("%s receipt %s FAILED verification and was kept apart: %s\n", st.Warning.Render("!"), receipts.ShortID(res.Receipt.ID), safe(strings.Join(res.Receipt.Problems, "; ")))
}

func newSendCmd(a *app) *cobra.Command {
	var (
		f          sessionFlags
		saveFiles  string
		jsonStream bool
	)
	cmd := &cobra.Command{
		Use:   "send BRAND TEXT...",
		Short: "Send one message to a Brand's agent and print the reply",
		Long: `Send one message and print the agent's reply. The stored conversation with the
Brand is continued (one contextId per profile and Brand) unless --new;
--context names one. Retries after a network error or 5xx reuse the same
messageId, so the agent never acts twice; an error answer is final. A message
whose answer never came (it may have been delivered) stays on record: sending
the same text again in the same conversation asks for its answer under the
same messageId.

On a terminal with colour the reply is rendered as Markdown (theme: dark, or
PACT_MARKDOWN_STYLE=light or plain); with NO_COLOR or when stdout is not a
terminal it is printed as plain text. Data parts are shown as indented JSON,
file parts as name, type and size; --save-files DIR writes the files to DIR.

When the Brand's card declares streaming, the reply is printed as it arrives
(as plain text; message:stream, resumed if the connection breaks, without the
agent acting twice) and the other parts follow when it is complete.

With --json (sent by message:send, never streamed), stdout holds one object:
  {"brand", "brandName", "interfaceUrl", "contextId", "messageId", "reply", "receipt"?}
With --json-stream, stdout holds JSON Lines: {"event": …} for each event of
a streamed reply as the Provider sent it, then that same object on one line.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usageError{errors.New("send needs a BRAND and the TEXT to send\nUsage: " + cmd.UseLine())}
			}
			return nil
		},
		ValidArgsFunction: a.completeBrands,
		RunE: func(cmd *cobra.Command, args []string) error {
			if jsonStream {
				a.json, a.jsonLines, a.jsonStreamOut = true, true, true
			}
			text := strings.Join(args[1:], " ")
			if strings.TrimSpace(text) == "" {
				return usageError{errors.New("the message is empty")}
			}
			c, err := a.openConversation(cmd.Context(), args[0], f)
			if err != nil {
				return err
			}
			res, err := a.deliver(cmd.Context(), c, text)
			var pending *agent.StepUpPending
			if errors.As(err, &pending) {
				if a.json {
					if err := a.printJSON(pending.StepUp.Result); err != nil {
						return err
					}
				} else {
					a.printStepUpText(pending.StepUp.Result)
					a.io.Eprintf("%s\n", safe(pending.Error()))
				}
				return silentError{code: exitConsent}
			}
			var saveErr *conversation.SaveError
			var mismatch *conversation.ContextMismatchError
			if (errors.As(err, &saveErr) || errors.As(err, &mismatch)) && res != nil {
				// Delivered: the reply is shown with what went wrong after it.
				return a.printUnsaved(res, err, saveFiles)
			}
			if err != nil {
				return err
			}
			if a.json {
				if res.Receipt != nil && !res.Receipt.Verified {
					a.printReceiptNote(res)
				}
				return a.printJSON(res)
			}
			return a.printResult(res, saveFiles)
		},
	}
	f.add(cmd)
	cmd.Flags().BoolVar(&jsonStream, "json-stream", false, "print the streamed reply's events as JSON Lines, then the --json object on one line")
	cmd.Flags().StringVar(&saveFiles, "save-files", "", "save the files in the reply to this folder (never overwriting a file)")
	return cmd
}
