package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pact-cli/pact/conversation"
)

// ---- conversations

// Conversations is list_conversations' result: `pact conversations --json`
// under "conversations".
type Conversations struct {
	Conversations []conversation.Summary `json:"conversations"`
	ThirdParty    *ThirdParty            `json:"thirdParty,omitempty" jsonschema:"which members hold the Brands' words"`
}

func (s *Server) listConversations(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, Conversations, error) {
	list, err := s.cfg.Agent.Conversations(ctx)
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
		return newReply().say("pact: no conversations yet.").result(out), out, nil
	}
	out.ThirdParty = thirdParty("the Brands of these conversations", "/conversations/*/brandName")
	r := newReply().say(fmt.Sprintf("pact: %d stored conversations. Each Brand's name is as its card gives it:", len(lines)))
	return r.quote("the Brands' names, as their cards give them", lines...).result(out), out, nil
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
	Turns      []conversation.Turn `json:"turns"`
	ThirdParty *ThirdParty         `json:"thirdParty" jsonschema:"which members hold the Brand's words"`
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
	ag := s.cfg.Agent
	var sum *conversation.Summary
	if in.Brand != "" {
		var err error
		if sum, err = ag.CurrentConversation(ctx, in.Brand); err != nil {
			return nil, ConversationOutput{}, toolError(err)
		}
		if sum == nil {
			return nil, ConversationOutput{}, fmt.Errorf("no stored conversation with %s (see list_conversations)", in.Brand)
		}
	} else {
		list, err := ag.Conversations(ctx)
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
	turns, err := ag.Turns(ctx, sum.InterfaceURL, sum.ContextID)
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
		t.Parts = nil // the stored parts (names, URLs, data: the Brand's words) are not for the model
		out.Turns = append(out.Turns, t)
		lines = append(lines, fmt.Sprintf("[%s] %s: %s", t.At.UTC().Format(time.RFC3339), t.Role, t.Text))
	}
	src := brandSource(out.Brand)
	out.ThirdParty = thirdParty(src, "/brandName", "/turns/*/text")
	if len(lines) == 0 {
		return newReply().say("pact: no turns stored.").result(out), out, nil
	}
	r := newReply().say(fmt.Sprintf("pact: conversation %s with %s, %d turns (user: the User's messages; agent: the Brand's replies):", out.ContextID, src, len(lines)))
	return r.quote(src+", the stored turns of the conversation", lines...).result(out), out, nil
}
