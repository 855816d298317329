package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pact-cli/pact/agent"
	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/discovery"
	"github.com/pact-cli/pact/iostreams"
	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/receipts"
	"github.com/pact-cli/pact/store"
)

const safety = " pact keeps the User's keys, tokens and receipts; this tool never returns a key, a token, a device code or a password."

func (s *Server) addTools() {
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  "send_message",
		Title: "Send a message to a Brand",
		Description: "Send one message to a Brand's support agent as the User's personal agent and return the agent's reply. " +
			"The stored conversation with the Brand is continued unless new is true or context names another. " +
			"The result has the reply text, the contextId and messageId, and receipt (id, verified) when the Brand acted on the User's account. " +
			"If the Brand needs more permission the result is not an error: stepUp lists the missing scopes and gives a link and a code; " +
			"pact has started the User's login for them (as start_login does). Tell the User to open the link and approve in their browser, " +
			"check login_status until it is granted, then call send_message again with the same text." + safety,
		Annotations: &mcp.ToolAnnotations{OpenWorldHint: ptr(true), DestructiveHint: ptr(true)},
	}, s.sendMessage)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  "get_agent_card",
		Title: "Read a Brand's Agent Card",
		Description: "Fetch and check a Brand's Agent Card: its name, description and skills, the delegation scopes it offers with their descriptions " +
			"(the ids start_login takes), the Provider registration that serves it, problems found, and the state of the card's signature. " +
			"Read-only.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(true)},
	}, s.getAgentCard)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:        "list_conversations",
		Title:       "List stored conversations",
		Description: "List the conversations stored in this profile: Brand, contextId, last message time, open or closed, and which one send_message continues. Local, read-only.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, s.listConversations)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:        "get_conversation",
		Title:       "Read a stored conversation",
		Description: "Return the stored turns of one conversation: the one send_message continues with brand, or the one with this context (contextId). limit keeps the last N turns (default 100). Local, read-only.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, s.getConversation)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  "start_login",
		Title: "Ask the User to let pact act at a Brand",
		Description: "Start the Brand's consent flow (OAuth device code) for the scopes named, which must be scope ids from get_agent_card. " +
			"Returns at once with a link, a user code, the scopes with their descriptions and the expiry, and opens the User's browser on the Brand's own login page " +
			"(unless pact runs with --no-browser). Show the link and the code to the User. The User logs in with the Brand, sees the scopes and may refuse some; " +
			"pact waits for the answer meanwhile: check login_status. pact never asks for more scopes than named here." + safety,
		Annotations: &mcp.ToolAnnotations{OpenWorldHint: ptr(true), IdempotentHint: false},
	}, s.startLogin)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  "login_status",
		Title: "Check a login's answer",
		Description: "Report the state of the login started for a Brand: pending (waiting for the User), granted (with the scopes the User approved, " +
			"which may be fewer than asked, and the expiry), denied, or expired. Without a login in progress it reports the stored delegation, if any.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, s.loginStatus)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  "list_receipts",
		Title: "List signed receipts",
		Description: "List the signed receipts Brands gave for actions taken on the User's account (verified when archived): brand, scopes used, actions, time. " +
			"brand keeps one Brand's, since (RFC 3339 time or YYYY-MM-DD) drops older ones, limit keeps the newest N (default 100). " +
			"Each receipt can be attached as the resource pact://receipts/{id}. Local, read-only.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, s.listReceipts)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  "verify_receipts",
		Title: "Check receipts again",
		Description: "Verify archived receipts again: the signature with the Brand's current keys and the claims against the grant they were issued under. " +
			"ids (or unique prefixes of 4+ characters) name receipts; none checks every verified receipt.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(true)},
	}, s.verifyReceipts)
}

func ptr[T any](v T) *T { return &v }

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
	if in.New && in.Context != "" {
		return nil, SendOutput{}, errors.New("new and context cannot be used together")
	}
	if strings.TrimSpace(in.Brand) == "" {
		return nil, SendOutput{}, errors.New("name the Brand: a domain, an origin or an Agent Card URL")
	}
	sess, err := agent.Open(ctx, s.cfg.Options, in.Brand, agent.Start{New: in.New, Context: in.Context})
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

// open opens a session with brand (the card is fetched and checked).
func (s *Server) open(ctx context.Context, brand string) (*conversation.Session, error) {
	if strings.TrimSpace(brand) == "" {
		return nil, errors.New("name the Brand: a domain, an origin or an Agent Card URL")
	}
	return conversation.Open(ctx, s.cfg.Options, brand)
}

func cleanAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, x := range ss {
		out[i] = clean(x)
	}
	return out
}

// ---- get_agent_card

// BrandInput names a Brand.
type BrandInput struct {
	Brand string `json:"brand" jsonschema:"the Brand: a domain (shop.example.com), an origin (https://shop.example.com) or an Agent Card URL"`
}

// CardOutput is get_agent_card's structured result: the `pact card --json`
// shape ({card, pact}) with the signature state in pact.signature.
type CardOutput struct {
	Card any          `json:"card" jsonschema:"the Agent Card as served (A2A AgentCard JSON)"`
	Pact CardFindings `json:"pact"`
}

// CardFindings is what pact found about a card.
type CardFindings struct {
	Brand        string                `json:"brand" jsonschema:"the card URL (the same as cardUrl)"`
	BrandName    string                `json:"brandName" jsonschema:"the card's name (the same as name)"`
	CardURL      string                `json:"cardUrl"`
	InterfaceURL string                `json:"interfaceUrl"`
	Name         string                `json:"name"`
	Description  string                `json:"description"`
	Skills       []Skill               `json:"skills"`
	Provider     *profile.Registration `json:"provider" jsonschema:"the Provider registration (URL, audience) that serves this Brand; null when not registered"`
	Delegation   *Delegation           `json:"delegation" jsonschema:"the delegation the Brand offers; null when identity only"`
	Problems     []string              `json:"problems"`
	Signature    Signature             `json:"signature" jsonschema:"whether the card's signature was verified"`
	Pin          PinState              `json:"pin" jsonschema:"how the card compares with what the User accepted for this Brand (read only: looking records nothing)"`
}

// PinState is how a card compares with its Brand's pin, as `pact card`
// would judge it, without recording anything.
type PinState struct {
	State       string     `json:"state" jsonschema:"new: no pin yet (the first send records it); same: matches what the User accepted; updated: a key rotation announced by the accepted key, or a Brand that started signing, accepted on the next send; changed: send_message and start_login refuse until the User runs pact card BRAND --trust"`
	Changes     []string   `json:"changes" jsonschema:"what differs, in plain words (changed only)"`
	Old         *store.Pin `json:"old" jsonschema:"what the User accepted; null when new"`
	New         store.Pin  `json:"new" jsonschema:"what accepting this card records"`
	Fingerprint string     `json:"fingerprint" jsonschema:"short fingerprint of the new values (pact card BRAND --trust --expect FINGERPRINT)"`
}

// pinState compares card with its Brand's pin without recording a pin.
func (s *Server) pinState(ctx context.Context, card *discovery.Card) (PinState, error) {
	l, err := agent.LookPin(ctx, s.cfg.Options.Pins, card, time.Now())
	if err != nil {
		return PinState{}, err
	}
	st := PinState{State: l.State, Changes: l.Changes, Old: l.Old, New: l.New, Fingerprint: l.Fingerprint}
	st.New.PinnedAt = seconds(st.New.PinnedAt)
	if st.Old != nil {
		old := *st.Old
		old.PinnedAt = seconds(old.PinnedAt)
		st.Old = &old
	}
	return st, nil
}

// Skill is one skill of the card.
type Skill struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

// Delegation mirrors discovery.Delegation: scope id → description.
type Delegation struct {
	Scopes                 map[string]string `json:"scopes"`
	DeviceAuthorizationURL string            `json:"deviceAuthorizationUrl"`
	TokenURL               string            `json:"tokenUrl"`
	OAuth2MetadataURL      string            `json:"oauth2MetadataUrl"`
}

func (s *Server) getAgentCard(ctx context.Context, _ *mcp.CallToolRequest, in BrandInput) (*mcp.CallToolResult, CardOutput, error) {
	if strings.TrimSpace(in.Brand) == "" {
		return nil, CardOutput{}, errors.New("name the Brand: a domain, an origin or an Agent Card URL")
	}
	cardURL, err := discovery.CardURL(in.Brand)
	if err != nil {
		return nil, CardOutput{}, toolError(err)
	}
	card, err := discovery.Fetch(ctx, s.cfg.Options.HTTP, cardURL)
	if err != nil {
		return nil, CardOutput{}, toolError(err)
	}
	f := CardFindings{Brand: card.URL, BrandName: clean(card.Name()), CardURL: card.URL, InterfaceURL: card.InterfaceURL, Name: clean(card.Name()), Skills: []Skill{},
		Problems: cleanAll(card.Problems), Signature: cardSignature(card)}
	f.Signature.Problems = cleanAll(f.Signature.Problems)
	if card.Card != nil {
		f.Description = clean(card.Card.Description)
		for _, sk := range card.Card.Skills {
			f.Skills = append(f.Skills, Skill{ID: clean(sk.ID), Name: clean(sk.Name), Description: clean(sk.Description)})
		}
	}
	if d := card.Delegation; d != nil {
		f.Delegation = &Delegation{Scopes: map[string]string{}, DeviceAuthorizationURL: d.DeviceAuthorizationURL, TokenURL: d.TokenURL, OAuth2MetadataURL: d.OAuth2MetadataURL}
		for id, desc := range d.Scopes {
			f.Delegation.Scopes[clean(id)] = clean(desc)
		}
	}
	if cfg, err := s.cfg.Options.Profile.Load(); err == nil {
		if reg, ok := cfg.Match(card.InterfaceURL); ok {
			f.Provider = reg
		}
	}
	if f.Pin, err = s.pinState(ctx, card); err != nil {
		return nil, CardOutput{}, toolError(err)
	}
	if f.Pin.State == "changed" {
		f.Problems = append(f.Problems, fmt.Sprintf("CARD_CHANGED: the card changed since the User accepted it (%s); send_message and start_login refuse it until the User checks and accepts it with: %s",
			strings.Join(f.Pin.Changes, ", "), clean(iostreams.CommandHint("pact", "card", in.Brand, "--trust", "--expect", f.Pin.Fingerprint))))
	}
	lines := []string{f.Name}
	if f.Description != "" {
		lines = append(lines, f.Description)
	}
	lines = append(lines, "card: "+f.CardURL, "interface: "+f.InterfaceURL)
	if f.Provider != nil {
		lines = append(lines, "provider: "+f.Provider.URL+" (registered)")
	} else {
		lines = append(lines, "provider: not registered in this profile (the User runs: pact provider add "+conversation.SuggestProviderURL(card)+" --audience AUD)")
	}
	if f.Delegation != nil {
		lines = append(lines, "delegation scopes (for start_login):")
		ids := make([]string, 0, len(f.Delegation.Scopes))
		for id := range f.Delegation.Scopes {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			lines = append(lines, "  "+id+": "+f.Delegation.Scopes[id])
		}
	} else {
		lines = append(lines, "delegation: not offered (identity only)")
	}
	for _, sk := range f.Skills {
		lines = append(lines, "skill: "+sk.Name+": "+sk.Description)
	}
	lines = append(lines, "signature: "+f.Signature.Label)
	switch f.Pin.State {
	case "new":
		lines = append(lines, "pinned: not yet (the first message records its Provider, interface and key)")
	case "same":
		lines = append(lines, "pinned: matches what the User accepted")
	case "updated":
		lines = append(lines, "pinned: the Brand's key changed, announced by the key the User accepted (accepted on the next message)")
	case "changed":
		lines = append(lines, "pinned: CHANGED since the User accepted it ("+strings.Join(f.Pin.Changes, ", ")+")")
	}
	if len(f.Signature.Problems) > 0 {
		lines = append(lines, "signature problems: "+strings.Join(f.Signature.Problems, "; "))
	}
	for _, p := range f.Problems {
		lines = append(lines, "problem: "+p)
	}
	return textResult(lines...), CardOutput{Card: rawJSON(card.Raw), Pact: f}, nil
}

// ---- conversations

// Conversations is list_conversations' result: `pact conversations --json`
// under "conversations".
type Conversations struct {
	Conversations []conversation.Summary `json:"conversations"`
}

func (s *Server) listConversations(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, Conversations, error) {
	list, err := s.cfg.Options.Store.List()
	if err != nil {
		return nil, Conversations{}, toolError(err)
	}
	out := Conversations{Conversations: []conversation.Summary{}}
	lines := []string{}
	for _, c := range list {
		c.BrandName = clean(c.BrandName)
		out.Conversations = append(out.Conversations, c)
		name := c.BrandName
		if name == "" {
			name = c.Brand
		}
		cur := ""
		if c.Current {
			cur = ", continued by send_message"
		}
		lines = append(lines, fmt.Sprintf("%s  context %s  last message %s  %s%s", name, c.ContextID, c.LastMessageAt.UTC().Format(time.RFC3339), c.State, cur))
	}
	if len(lines) == 0 {
		lines = append(lines, "No conversations yet.")
	}
	return textResult(lines...), out, nil
}

// defaultTurnLimit is how many turns get_conversation returns when the
// call sets no limit.
const defaultTurnLimit = 100

// ConversationInput is get_conversation's input.
type ConversationInput struct {
	Brand   string `json:"brand,omitempty" jsonschema:"the Brand whose current conversation to read"`
	Context string `json:"context,omitempty" jsonschema:"the contextId of the conversation to read"`
	Limit   int    `json:"limit,omitempty" jsonschema:"keep only the last N turns (default 100)"`
}

// ConversationOutput is one stored conversation with its turns.
type ConversationOutput struct {
	conversation.Summary
	Turns []conversation.Turn `json:"turns"`
}

func (s *Server) getConversation(ctx context.Context, _ *mcp.CallToolRequest, in ConversationInput) (*mcp.CallToolResult, ConversationOutput, error) {
	if (in.Brand == "") == (in.Context == "") {
		if in.Brand == "" {
			return nil, ConversationOutput{}, errors.New("give brand (its current conversation) or context (a contextId)")
		}
		return nil, ConversationOutput{}, errors.New("give brand (its current conversation) or context (a contextId), not both")
	}
	if in.Limit < 0 {
		return nil, ConversationOutput{}, errors.New("limit must be 0 (all) or more")
	}
	st := s.cfg.Options.Store
	var sum *conversation.Summary
	if in.Brand != "" {
		cardURL, err := discovery.CardURL(in.Brand)
		if err != nil {
			return nil, ConversationOutput{}, toolError(err)
		}
		if sum, err = st.Current(cardURL); err != nil {
			return nil, ConversationOutput{}, toolError(err)
		}
		if sum == nil {
			return nil, ConversationOutput{}, fmt.Errorf("no stored conversation with %s (see list_conversations)", in.Brand)
		}
	} else {
		list, err := st.List()
		if err != nil {
			return nil, ConversationOutput{}, toolError(err)
		}
		for i := range list {
			if list[i].ContextID == in.Context {
				sum = &list[i]
				break
			}
		}
		if sum == nil {
			return nil, ConversationOutput{}, fmt.Errorf("no stored conversation has context %s (see list_conversations)", clean(in.Context))
		}
	}
	turns, err := st.Turns(sum.InterfaceURL, sum.ContextID)
	if err != nil {
		return nil, ConversationOutput{}, toolError(err)
	}
	limit := in.Limit
	if limit == 0 {
		limit = defaultTurnLimit
	}
	if len(turns) > limit {
		turns = turns[len(turns)-limit:]
	}
	out := ConversationOutput{Summary: *sum, Turns: []conversation.Turn{}}
	out.BrandName = clean(out.BrandName)
	lines := []string{}
	for _, t := range turns {
		t.Text = clean(t.Text)
		out.Turns = append(out.Turns, t)
		lines = append(lines, fmt.Sprintf("[%s] %s: %s", t.At.UTC().Format(time.RFC3339), t.Role, t.Text))
	}
	if len(lines) == 0 {
		lines = append(lines, "No turns stored.")
	}
	return textResult(lines...), out, nil
}

// ---- receipts

// ReceiptsInput is list_receipts' input.
type ReceiptsInput struct {
	Brand string `json:"brand,omitempty" jsonschema:"only this Brand's receipts (a domain, an origin, a card URL or an interface URL)"`
	Since string `json:"since,omitempty" jsonschema:"only receipts at or after this time (RFC 3339, or YYYY-MM-DD)"`
	Limit int    `json:"limit,omitempty" jsonschema:"keep only the newest N receipts (default 100)"`
}

// defaultReceiptLimit is how many receipts list_receipts returns when the
// call sets no limit: a model's context is not the place for an archive.
const defaultReceiptLimit = 100

// ReceiptItem mirrors an item of `pact receipts list --json`: brand is the
// receipt's signed brand claim (the interface URL), cardUrl and brandName
// name the Brand as pact knows it ("" when it does not).
type ReceiptItem struct {
	ID         string   `json:"id"`
	Brand      string   `json:"brand" jsonschema:"the receipt's brand claim: the interface URL"`
	GrantID    string   `json:"grantId"`
	User       string   `json:"user"`
	ScopesUsed []string `json:"scopesUsed"`
	Actions    []any    `json:"actions"`
	TS         string   `json:"ts"`
	Verified   bool     `json:"verified"`
	Problems   []string `json:"problems" jsonschema:"why a receipt kept apart failed; empty when verified"`
	CardURL    string   `json:"cardUrl" jsonschema:"the Brand's Agent Card URL"`
	BrandName  string   `json:"brandName" jsonschema:"the card's name"`
	// URI is the receipt's MCP resource.
	URI string `json:"uri"`
}

// ReceiptList is list_receipts' result.
type ReceiptList struct {
	Receipts []ReceiptItem `json:"receipts"`
	// Total is how many receipts matched before limit.
	Total int `json:"total"`
	// Problems names archive entries that could not be read (they are
	// left out of receipts).
	Problems []string `json:"problems"`
}

func (s *Server) listReceipts(ctx context.Context, _ *mcp.CallToolRequest, in ReceiptsInput) (*mcp.CallToolResult, ReceiptList, error) {
	arch := s.cfg.Options.Receipts
	if arch == nil {
		return nil, ReceiptList{}, errors.New("this profile keeps no receipt archive")
	}
	if in.Limit < 0 {
		return nil, ReceiptList{}, errors.New("limit must be 0 (all) or more")
	}
	lo := receipts.ListOptions{Brand: in.Brand} // the Brand by receipts.BrandFilter, as pact receipts list --brand
	if in.Since != "" {
		var err error
		if lo.Since, err = time.Parse(time.RFC3339, in.Since); err != nil {
			if lo.Since, err = time.Parse(time.DateOnly, in.Since); err != nil {
				return nil, ReceiptList{}, fmt.Errorf("since %q is not a time: give RFC 3339 (2026-05-01T09:00:00Z) or a date (2026-05-01)", clean(in.Since))
			}
		}
	}
	limit := in.Limit
	if limit == 0 {
		limit = defaultReceiptLimit
	}
	// The archive selects (brand, since) and gives the oldest first; the
	// newest limit are kept as they come, so memory stays bounded, and
	// Total counts every match.
	out := ReceiptList{Receipts: []ReceiptItem{}, Problems: []string{}}
	var ring []receipts.Item // the newest limit; ring[Total%limit] is the oldest once full
	err := arch.ListFunc(ctx, lo, func(it receipts.Item) error {
		if len(ring) < limit {
			ring = append(ring, it)
		} else {
			ring[out.Total%limit] = it
		}
		out.Total++
		return nil
	})
	if err != nil {
		out.Problems = append(out.Problems, clean(err.Error()))
	}
	kept := ring
	if out.Total > limit {
		i := out.Total % limit
		kept = append(append([]receipts.Item{}, ring[i:]...), ring[:i]...)
	}
	brands := conversation.KnownBrands(s.cfg.Options)
	lines := []string{}
	if out.Total > len(kept) {
		lines = append(lines, fmt.Sprintf("The newest %d of %d receipts (limit gives more):", len(kept), out.Total))
	}
	for _, it := range kept {
		ref := brands.Receipt(it.Brand, it.CardURL, it.BrandName) // the same rule as `pact receipts list`
		ri := ReceiptItem{ID: it.ID, Brand: clean(it.Brand), GrantID: clean(it.GrantID), User: clean(it.User), ScopesUsed: cleanAll(it.ScopesUsed),
			Actions: []any{}, TS: clean(it.TS), Verified: it.Verified, Problems: cleanAll(it.Problems),
			CardURL: clean(ref.CardURL), BrandName: clean(ref.Name), URI: receiptURI(it.ID)}
		var tools []string
		for _, a := range it.Actions {
			v := rawJSON(a)
			ri.Actions = append(ri.Actions, v)
			if m, ok := v.(map[string]any); ok {
				if t, ok := m["tool"].(string); ok {
					tools = append(tools, t)
				}
			}
		}
		out.Receipts = append(out.Receipts, ri)
		v := "verified"
		if !ri.Verified {
			v = "NOT verified"
		}
		lines = append(lines, fmt.Sprintf("%s  %s  %s  scopes %s  actions %s  %s", receipts.ShortID(ri.ID), ri.TS, agent.ReceiptLabel(conversation.BrandRef{Name: ri.BrandName, CardURL: ri.CardURL}, ri.Brand),
			strings.Join(ri.ScopesUsed, " "), strings.Join(tools, ", "), v))
	}
	if len(lines) == 0 {
		lines = append(lines, "No receipts.")
	}
	lines = append(lines, out.Problems...)
	return textResult(lines...), out, nil
}

// VerifyInput is verify_receipts' input.
type VerifyInput struct {
	IDs []string `json:"ids,omitempty" jsonschema:"receipt ids or unique prefixes (4+ characters); none = every verified receipt"`
}

// VerifyOutput mirrors `pact receipts verify --json`.
type VerifyOutput struct {
	Verified  int              `json:"verified"`
	Failed    int              `json:"failed"`
	Unchecked int              `json:"unchecked"`
	Results   []receipts.Check `json:"results"`
}

func (s *Server) verifyReceipts(ctx context.Context, _ *mcp.CallToolRequest, in VerifyInput) (*mcp.CallToolResult, VerifyOutput, error) {
	arch := s.cfg.Options.Receipts
	if arch == nil {
		return nil, VerifyOutput{}, errors.New("this profile keeps no receipt archive")
	}
	for _, id := range in.IDs {
		if _, err := arch.Get(id); err != nil {
			return nil, VerifyOutput{}, toolError(err)
		}
	}
	var checks []receipts.Check
	if len(in.IDs) == 0 {
		var err error
		if checks, err = arch.VerifyAll(ctx, true); err != nil {
			return nil, VerifyOutput{}, toolError(err)
		}
	} else {
		checks = arch.VerifyIDs(ctx, in.IDs, true)
	}
	tally := agent.Count(checks) // the count of pact receipts verify
	out := VerifyOutput{Verified: tally.Verified, Failed: tally.Failed, Unchecked: tally.Unchecked, Results: []receipts.Check{}}
	lines := []string{}
	for _, c := range checks {
		c.Problems = cleanAll(c.Problems)
		switch {
		case c.Verified:
			lines = append(lines, receipts.ShortID(c.ID)+"  verified")
		case c.Unchecked:
			lines = append(lines, receipts.ShortID(c.ID)+"  not checked: "+strings.Join(c.Problems, "; "))
		default:
			lines = append(lines, receipts.ShortID(c.ID)+"  FAILED: "+strings.Join(c.Problems, "; "))
		}
		out.Results = append(out.Results, c)
	}
	lines = append(lines, tally.String())
	return textResult(lines...), out, nil
}
