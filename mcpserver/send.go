package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

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
	BrandName    string                      `json:"brandName" jsonschema:"the card's name (the Brand's words)"`
	InterfaceURL string                      `json:"interfaceUrl"`
	ContextID    string                      `json:"contextId"`
	MessageID    string                      `json:"messageId" jsonschema:"the messageId sent"`
	Reply        any                         `json:"reply" jsonschema:"the A2A response as received: {message} or {task} (the Brand's words)"`
	Receipt      *conversation.ReceiptStatus `json:"receipt,omitempty" jsonschema:"the reply's signed receipt: its id and whether it verified"`
	Text         string                      `json:"text" jsonschema:"the agent's reply text (the Brand's words)"`
	StepUp       *StepUp                     `json:"stepUp,omitempty" jsonschema:"present when the Brand needs more permission"`
	Earlier      []Unanswered                `json:"earlier,omitempty" jsonschema:"messages to this Brand whose send_message was cancelled after they left: the Brand may have received them"`
	ThirdParty   *ThirdParty                 `json:"thirdParty" jsonschema:"which members hold the Brand's words"`
}

// Unanswered is a message whose send_message was cancelled after the
// request left pact: the Brand may have received it, and acted on it.
type Unanswered struct {
	ContextID string    `json:"contextId"`
	MessageID string    `json:"messageId"`
	Text      string    `json:"text"`
	SentAt    time.Time `json:"sentAt"`
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

func (s *Server) sendMessage(ctx context.Context, req *mcp.CallToolRequest, in SendInput) (*mcp.CallToolResult, SendOutput, error) {
	if req != nil && req.Params.RequestState != "" {
		// The User answered the step-up's login request (askUser).
		res, out, err := s.resume(req)
		o, _ := out.(SendOutput)
		return res, o, err
	}
	if strings.TrimSpace(in.Text) == "" {
		return nil, SendOutput{}, errors.New("the message is empty")
	}
	st := agent.Start{New: in.New, Context: in.Context}
	if errors.Is(st.Err(), agent.ErrNewAndContext) {
		return nil, SendOutput{}, errors.New("new and context cannot be used together") // the tool's inputs
	}
	conv, err := s.open(ctx, in.Brand, st)
	if err != nil {
		return nil, SendOutput{}, toolError(err)
	}
	cardURL := conv.Facts().Card.URL
	src := brandSource(cardURL)
	r := newReply()
	earlier := s.peekUnanswered(cardURL)
	for _, u := range earlier {
		r.say(fmt.Sprintf("Note: an earlier send_message to %s (messageId %s, %s) was cancelled after the message left pact: the Brand may have received it and acted on it. Tell the User before sending it again.",
			src, u.MessageID, u.SentAt.Format(time.RFC3339)))
	}
	// The turn is agent's; the tool answers its events in its result: a
	// closed conversation is started anew and noted, a step-up is returned
	// with the login pact started for it (below).
	// The same text as a message on record as sent and unanswered (its outcome
	// unknown) is asked about again under its messageId (§4.3).
	messageID, again, err := conv.MessageIDFor(ctx, in.Text)
	if err != nil {
		return nil, SendOutput{}, toolError(err)
	}
	if again != nil {
		r.say(fmt.Sprintf("Note: this text was sent to %s before (messageId %s, %s) and got no answer; pact asked again under the same messageId, so the Brand's agent does not act twice.",
			src, again.MessageID, again.At.UTC().Format(time.RFC3339)))
	}
	sentAt := seconds(time.Now())
	res, err := agent.SendID(ctx, conv, in.Text, messageID, agent.Front{Restart: func(closed *conversation.ClosedError) bool {
		r.say(fmt.Sprintf("(%s closed conversation %s; this message started a new one.)", src, closed.ContextID))
		return true
	}})
	if err != nil && ctx.Err() != nil {
		// Cancelled while the message was on its way: it may have
		// arrived. No answer goes to the client (it cancelled); the next
		// send_message to the Brand says so.
		s.noteUnanswered(cardURL, Unanswered{ContextID: conv.ContextID(), MessageID: messageID, Text: clean(in.Text), SentAt: sentAt})
		s.logf("send_message to %s was cancelled after the message left: the Brand may have received it (messageId %s)", src, messageID)
		return nil, SendOutput{}, errors.New("cancelled after the message left pact: the Brand may have received it; a later send_message to this Brand says so")
	}
	var pending *agent.StepUpPending
	if errors.As(err, &pending) {
		err = nil
	}
	var unknown *conversation.OutcomeUnknownError
	if errors.As(err, &unknown) {
		// It may have been delivered and acted on: the User decides (§4.3).
		words := unknown.What() + " Tell the User before anything is sent again."
		if !unknown.Closed {
			words = unknown.What() + " " + unknown.Remedy("call send_message again with the same text") + " Tell the User."
		}
		return nil, SendOutput{}, toolError(errors.New(words))
	}
	// The reply arrived but could not be saved, or its receipt not
	// archived: the Brand acted, so the reply is the result (never an
	// error the model might answer by sending again), saying so.
	var unsaved *conversation.SaveError
	var mismatch *conversation.ContextMismatchError
	if (errors.As(err, &unsaved) || errors.As(err, &mismatch)) && res != nil {
		err = nil
	}
	var stale *conversation.StaleContextError
	if errors.As(err, &stale) {
		// The CLI's remedy is --new; the tool's is its new input.
		if stale.Resent {
			// It may have been acted on: the User decides whether it goes again (§4.3).
			return nil, SendOutput{}, toolError(errors.New(stale.What() + " tell the User, and send this text again only if the User says so (with new: true, in a new conversation)."))
		}
		return nil, SendOutput{}, toolError(errors.New(stale.What() + " start a new conversation: call send_message again with new: true"))
	}
	if err != nil {
		return nil, SendOutput{}, toolError(err)
	}
	s.takeUnanswered(cardURL)
	out := SendOutput{Brand: res.Brand, BrandName: clean(res.BrandName), InterfaceURL: res.InterfaceURL, ContextID: res.ContextID, MessageID: res.MessageID,
		Reply: rawJSON(res.Reply), Receipt: res.Receipt, Text: clean(res.Text()), Earlier: earlier,
		ThirdParty: thirdParty(src, "/brandName", "/reply", "/text", "/receipt/problems", "/stepUp/missingScopes", "/stepUp/undeclared", "/stepUp/login/brandName", "/stepUp/login/scopes/*/description")}
	if out.Receipt != nil {
		rc := *out.Receipt
		rc.Problems = cleanAll(rc.Problems)
		out.Receipt = &rc
	}
	r.say(fmt.Sprintf("pact sent the message to %s (contextId %s, messageId %s). The reply:", src, out.ContextID, out.MessageID))
	r.quote(src+", its reply", out.Text)
	if rc := out.Receipt; rc != nil && rc.ArchiveError != "" {
		verdict := "verified"
		if !rc.Verified {
			verdict = "FAILED verification"
		}
		r.say(fmt.Sprintf("pact: signed receipt %s %s, but pact could NOT archive it, so pact keeps no copy of it. Give the User this receipt (jws, the Brand's signed proof of what it did) to keep:", rc.ID, verdict))
		r.quote("the receipt as the Brand signed it", clean(rc.JWS))
		r.say("pact could not archive it because: " + clean(rc.ArchiveError))
	} else if rc != nil {
		if rc.Verified {
			r.say(fmt.Sprintf("pact: signed receipt %s verified and archived: pact://receipts/%s", rc.ID, rc.ID))
		} else {
			r.say(fmt.Sprintf("pact: receipt %s FAILED verification and was kept apart. pact's findings:", rc.ID))
			r.quote("pact's findings, which may quote the receipt's claims", strings.Join(rc.Problems, "; "))
		}
	} else {
		r.say("pact: no signed receipt came with this reply; whatever the reply says, pact has no proof that the Brand acted.")
	}
	if mismatch != nil {
		r.say("pact: " + mismatch.Error() + ".")
	}
	if unsaved != nil && !unsaved.Receipt {
		r.say("pact: the reply arrived, but pact could not save the conversation: " + clean(unsaved.Err.Error()))
		if rc := out.Receipt; rc != nil && rc.JWS != "" {
			r.say(fmt.Sprintf("Give the User the receipt %s (the Brand's signed proof of what it did) to keep:", rc.ID))
			r.quote("the receipt as the Brand signed it", clean(rc.JWS))
		}
	}
	if pending != nil {
		su := pending.StepUp
		out.StepUp = &StepUp{MissingScopes: cleanAll(su.IDs()), Undeclared: cleanAll(su.Unknown)}
		if !su.Askable() {
			// Nothing the User could approve: no login is started.
			r.say("", fmt.Sprintf("pact: %s needs more permission before it can do this; the message was not acted on. pact's words on it (they name the Brand's scope ids):", src))
			r.quote("pact's words, quoting the scope ids the Brand named", clean(su.Words(mcpLogin, "ask the User which permissions to give, call start_login with them, then send_message again with the same text")))
			return r.result(out), out, nil
		}
		started, err := s.beginLogin(ctx, req, conv, su.IDs())
		if err != nil {
			return nil, SendOutput{}, toolError(fmt.Errorf("the Brand needs more permission (%s), but the login could not be started: %w",
				strings.Join(su.IDs(), ", "), err))
		}
		out.StepUp.Login = started
		finish := func() (*mcp.CallToolResult, any) {
			r.say("", fmt.Sprintf("pact: %s needs more permission before it can do this; the message was not acted on. The scopes it asks for:", src))
			started.describe(r)
			return r.result(out), out
		}
		if started.AskedVia == "elicitation" {
			// The reply is kept with the request to the User: the call
			// resumes with the answer, the message is not sent again.
			return s.askUser(started, finish), SendOutput{}, nil
		}
		res, _ := finish()
		return res, out, nil
	}
	return r.result(out), out, nil
}

// noteUnanswered keeps u for the next send_message to brand.
func (s *Server) noteUnanswered(brand string, u Unanswered) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unanswered[brand] = append(s.unanswered[brand], u)
}

// peekUnanswered returns what noteUnanswered kept for brand.
func (s *Server) peekUnanswered(brand string) []Unanswered {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Unanswered(nil), s.unanswered[brand]...)
}

// takeUnanswered returns (and forgets) what noteUnanswered kept for brand.
func (s *Server) takeUnanswered(brand string) []Unanswered {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.unanswered[brand]
	delete(s.unanswered, brand)
	return u
}
