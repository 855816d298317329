package mcpserver

import (
	"context"
	"errors"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pact-cli/pact/agent"
	"github.com/pact-cli/pact/conversation"
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
			"pact has started the User's login for them (as start_login does; not when the Brand named a scope its card does not list: then login is null and the text says why). Tell the User to open the link and approve in their browser, " +
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

// open opens a session with brand (agent.Open: the card is fetched and
// checked, its signature and pin too) in the conversation st names.
func (s *Server) open(ctx context.Context, brand string, st agent.Start) (*conversation.Session, error) {
	if strings.TrimSpace(brand) == "" {
		return nil, errors.New("name the Brand: a domain, an origin or an Agent Card URL")
	}
	return agent.Open(ctx, s.cfg.Options, brand, st)
}

func cleanAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, x := range ss {
		out[i] = clean(x)
	}
	return out
}
