package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pact-cli/pact/agent"
	"github.com/pact-cli/pact/conversation"
)

// ---- send_message

// SendInput is send_message's input.
type SendInput struct {
	Brand   string `json:"brand" jsonschema:"the Brand: a domain (shop.example.com), an origin (https://shop.example.com) or an Agent Card URL"`
	Text    string `json:"text" jsonschema:"the message to send, as the User would write it"`
	New     bool   `json:"new,omitempty" jsonschema:"start a new conversation instead of continuing the stored one"`
	Context string `json:"context,omitempty" jsonschema:"continue the conversation with this contextId"`
}

// SendOutput is send_message's structured result: the `pact send --json`
// shape, plus the reply text and, for a step-up, stepUp.
type SendOutput struct {
	Brand        string                      `json:"brand" jsonschema:"the card URL"`
	BrandName    string                      `json:"brandName" jsonschema:"the card's name"`
	InterfaceURL string                      `json:"interfaceUrl"`
	ContextID    string                      `json:"contextId"`
	MessageID    string                      `json:"messageId" jsonschema:"the messageId sent"`
	Reply        any                         `json:"reply" jsonschema:"the A2A response as received: {message} or {task}"`
	Receipt      *conversation.ReceiptStatus `json:"receipt,omitempty" jsonschema:"the reply's signed receipt: its id and whether it verified"`
	Text         string                      `json:"text" jsonschema:"the agent's reply text"`
	StepUp       *StepUp                     `json:"stepUp,omitempty" jsonschema:"present when the Brand needs more permission"`
}

// StepUp is a Brand's request for more permission (PACT §5.5) and the
// login pact started for it (agent.StepUp). MissingScopes are the ids the
// card declares; Undeclared the ids it does not list, which pact never asks
// for: with any of those, or with no scope named, no login is started and
// Login is null.
type StepUp struct {
	MissingScopes []string      `json:"missingScopes" jsonschema:"the missing scope ids the card declares"`
	Undeclared    []string      `json:"undeclared,omitempty" jsonschema:"ids the Brand asked for that its card does not list; pact never asks for these"`
	Login         *LoginStarted `json:"login" jsonschema:"the login pact started; null when there is nothing the User could approve"`
}

// mcpLogin is the tool's remedy in a step-up's words (agent.StepUp.Words).
func mcpLogin(ids []string) string {
	return "call start_login with scopes " + strings.Join(ids, ", ") + ", then send_message again with the same text"
}

func (s *Server) sendMessage(ctx context.Context, _ *mcp.CallToolRequest, in SendInput) (*mcp.CallToolResult, SendOutput, error) {
	if strings.TrimSpace(in.Text) == "" {
		return nil, SendOutput{}, errors.New("the message is empty")
	}
	st := agent.Start{New: in.New, Context: in.Context}
	if errors.Is(st.Err(), agent.ErrNewAndContext) {
		return nil, SendOutput{}, errors.New("new and context cannot be used together") // the tool's inputs
	}
	sess, err := s.open(ctx, in.Brand, st)
	if err != nil {
		return nil, SendOutput{}, toolError(err)
	}
	// The turn is agent's; the tool answers its events in its result: a
	// closed conversation is started anew and noted, a step-up is returned
	// with the login pact started for it (below).
	var notes []string
	res, err := agent.Send(ctx, sess, in.Text, agent.Front{Restart: func(closed *conversation.ClosedError) bool {
		notes = append(notes, fmt.Sprintf("(%s closed conversation %s; this message started a new one.)", clean(sess.Card.Name()), closed.ContextID))
		return true
	}})
	var pending *agent.StepUpPending
	if errors.As(err, &pending) {
		err = nil
	}
	var stale *conversation.StaleContextError
	if errors.As(err, &stale) {
		// The CLI's remedy is --new; the tool's is its new input.
		return nil, SendOutput{}, toolError(errors.New(stale.What() + " start a new conversation: call send_message again with new: true"))
	}
	if err != nil {
		return nil, SendOutput{}, toolError(err)
	}
	out := SendOutput{Brand: res.Brand, BrandName: clean(res.BrandName), InterfaceURL: res.InterfaceURL, ContextID: res.ContextID, MessageID: res.MessageID,
		Reply: rawJSON(res.Reply), Receipt: res.Receipt, Text: clean(res.Text())}
	if out.Receipt != nil {
		r := *out.Receipt
		r.Problems = cleanAll(r.Problems)
		out.Receipt = &r
	}
	lines := []string{out.Text}
	lines = append(lines, notes...)
	if r := out.Receipt; r != nil {
		if r.Verified {
			lines = append(lines, fmt.Sprintf("(Signed receipt %s verified and archived: pact://receipts/%s)", r.ID, r.ID))
		} else {
			lines = append(lines, fmt.Sprintf("(Receipt %s FAILED verification and was kept apart: %s)", r.ID, strings.Join(r.Problems, "; ")))
		}
	}
	if pending != nil {
		su := pending.StepUp
		out.StepUp = &StepUp{MissingScopes: cleanAll(su.IDs()), Undeclared: cleanAll(su.Unknown)}
		if !su.Askable() {
			// Nothing the User could approve: no login is started.
			lines = append(lines, "", fmt.Sprintf("%s needs more permission before it can do this. The message was not acted on.", clean(sess.Card.Name())),
				clean(su.Words(mcpLogin, "ask the User which permissions to give, call start_login with them, then send_message again with the same text")))
			return textResult(lines...), out, nil
		}
		started, err := s.beginLogin(ctx, sess, su.IDs())
		if err != nil {
			return nil, SendOutput{}, toolError(fmt.Errorf("%s needs more permission (%s), but the login could not be started: %w",
				sess.Card.Name(), strings.Join(su.IDs(), ", "), err))
		}
		out.StepUp.Login = started
		lines = append(lines, "", fmt.Sprintf("%s needs more permission before it can do this: %s. The message was not acted on.",
			clean(sess.Card.Name()), strings.Join(out.StepUp.MissingScopes, ", ")))
		lines = append(lines, started.instructions())
	}
	return textResult(lines...), out, nil
}
