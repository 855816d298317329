package providercheck

import (
	"context"
	"fmt"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// turn is one message:send of a conversation and its answer.
type turn struct {
	sent      string
	messageID string
	contextID string // the contextId sent ("" = a new conversation)
	body      []byte
	ex        exchange
	rep       *reply
	// problem says why the answer is not a 200 { message } or { task }.
	problem string
}

// sendTurn sends text in contextID with a new messageId.
func (r *runner) sendTurn(ctx context.Context, text, contextID string, extra map[string]string) *turn {
	t := &turn{messageID: randomID("pact-check-m-"), contextID: contextID}
	t.body = message(text, contextID, t.messageID, nil)
	return r.deliver(ctx, t, extra)
}

// deliver sends t.body with a good PA JWT and reads the answer.
func (r *runner) deliver(ctx context.Context, t *turn, extra map[string]string) *turn {
	t.sent = "POST message:send, messageId " + t.messageID
	if t.contextID != "" {
		t.sent += ", contextId " + t.contextID
	}
	t.ex = r.sendGood(ctx, t.body, extra)
	switch {
	case t.ex.err != nil:
		t.problem = "no answer"
	case t.ex.status != 200:
		t.problem = fmt.Sprintf("status %d, want 200", t.ex.status)
	default:
		rep, err := parseReply(t.ex.body)
		if err != nil {
			t.problem = "the body is not { message } or { task }: " + err.Error()
		}
		t.rep = rep
	}
	return t
}

// firstTurn is the run's first message: a new conversation (§4.2).
func (r *runner) firstTurn(ctx context.Context) *turn {
	if r.first == nil {
		r.first = r.sendTurn(ctx, "hello, this is a conformance check of this Provider; no action is needed", "", nil)
	}
	return r.first
}

// contextOf is the contextId of a reply ("" when none).
func (t *turn) contextOf() string {
	switch {
	case t.rep == nil:
		return ""
	case t.rep.Message != nil:
		return t.rep.Message.ContextID
	default:
		return t.rep.Task.ContextID
	}
}

// secondTurn continues the first turn's conversation.
func (r *runner) secondTurn(ctx context.Context) (*turn, string) {
	f := r.firstTurn(ctx)
	if f.contextOf() == "" {
		return nil, "the first message got no contextId"
	}
	if r.second == nil {
		r.second = r.sendTurn(ctx, "a second message in the same conversation", f.contextOf(), nil)
	}
	return r.second, ""
}

func conversationChecks() []Check {
	return []Check{
		{ID: "conversation.context-returned", Group: GroupConversation, Clause: "§4.2",
			Title:  "a message without contextId starts a conversation: the reply is a ROLE_AGENT message with contextId set",
			Sends:  "(the first message:send of routes.message-send, no contextId)",
			Expect: "200 { message } with role ROLE_AGENT, messageId and contextId",
			run:    checkContextReturned},
		{ID: "conversation.context-continued", Group: GroupConversation, Clause: "§4.2",
			Title:  "a message with that contextId continues the conversation",
			Sends:  "POST {interface}/message:send with the contextId returned, a new messageId",
			Expect: "200 { message } in the same contextId",
			run:    checkContextContinued},
		{ID: "conversation.retry", Group: GroupConversation, Clause: "§4.3",
			Title:  "a repeated messageId in the same context returns the stored reply without re-running the agent",
			Sends:  "the same message:send again: same messageId, same contextId, same body",
			Expect: "200 with the same reply (same reply messageId and text)",
			run:    checkRetry},
		{ID: "conversation.unknown-context", Group: GroupConversation, Clause: "§4.2, §6",
			Title:  "an unknown contextId is refused with INVALID_PARAMS",
			Sends:  "POST {interface}/message:send with a made-up contextId",
			Expect: "400 INVALID_PARAMS (INVALID_ARGUMENT)",
			run:    checkUnknownContext},
		{ID: "conversation.ignored-members", Group: GroupConversation, Clause: "§4.1",
			Title:  "configuration and metadata members are ignored, not refused",
			Sends:  `POST {interface}/message:send with "configuration" (acceptedOutputModes, historyLength) and "metadata" members`,
			Expect: "200",
			run:    checkIgnoredMembers},
	}
}

func checkContextReturned(ctx context.Context, r *runner) outcome {
	t := r.firstTurn(ctx)
	if t.problem != "" {
		return fail(t.sent, t.ex.describe(), "%s", t.problem)
	}
	m := t.rep.Message
	switch {
	case m == nil:
		return fail(t.sent, t.ex.describe(), "an ordinary turn answered with a task: ordinary turns create no A2A Task (§4.2)")
	case m.ContextID == "":
		return fail(t.sent, t.ex.describe(), "the reply has no contextId")
	case m.Role != a2a.MessageRoleAgent:
		return fail(t.sent, t.ex.describe(), "the reply's role is %q, want ROLE_AGENT", m.Role)
	case m.ID == "":
		return fail(t.sent, t.ex.describe(), "the reply has no messageId")
	}
	return pass(t.sent, t.ex.describe())
}

func checkContextContinued(ctx context.Context, r *runner) outcome {
	t, why := r.secondTurn(ctx)
	if t == nil {
		return skip("%s", why)
	}
	if t.problem != "" {
		return fail(t.sent, t.ex.describe(), "%s", t.problem)
	}
	if got := t.contextOf(); got != t.contextID {
		return fail(t.sent, t.ex.describe(), "the reply is in context %q, not the one continued", got)
	}
	return pass(t.sent, t.ex.describe())
}

func checkRetry(ctx context.Context, r *runner) outcome {
	t, why := r.secondTurn(ctx)
	if t == nil {
		return skip("%s", why)
	}
	if t.rep == nil || t.rep.Message == nil {
		return skip("the message to repeat got no { message } reply")
	}
	again := r.deliver(ctx, &turn{messageID: t.messageID, contextID: t.contextID, body: t.body}, nil)
	sent := again.sent + " (a repeat)"
	if again.problem != "" {
		return fail(sent, again.ex.describe(), "%s", again.problem)
	}
	if again.rep.Message == nil {
		return fail(sent, again.ex.describe(), "the repeat got a task, the first send a message")
	}
	if again.rep.Message.ID != t.rep.Message.ID {
		return fail(sent, again.ex.describe(), "the reply's messageId is %q, the stored reply's %q: the agent ran again", again.rep.Message.ID, t.rep.Message.ID)
	}
	if textOf(again.rep.Message) != textOf(t.rep.Message) {
		return fail(sent, again.ex.describe(), "same reply messageId but another text")
	}
	return pass(sent, again.ex.describe()+" (the stored reply)")
}

func textOf(m *a2a.Message) string {
	var s string
	for _, p := range m.Parts {
		if p != nil {
			s += p.Text() + "\n"
		}
	}
	return s
}

func checkUnknownContext(ctx context.Context, r *runner) outcome {
	id := randomID("pact-check-unknown-context-")
	e := r.sendGood(ctx, message("a message in a made-up conversation; the Provider must refuse it", id, randomID("pact-check-m-"), nil), nil)
	sent := "POST message:send, contextId " + id + " (made up)"
	return judge(sent, e, wantError(e, "INVALID_PARAMS"))
}

func checkIgnoredMembers(ctx context.Context, r *runner) outcome {
	h := 1
	body := message("a message with configuration and metadata members, which may be ignored", "", randomID("pact-check-m-"), map[string]any{
		"metadata": map[string]any{"pactProviderCheck": "ignore me"},
	})
	// configuration and metadata belong to the SendMessageRequest (A2A 1.0).
	var req map[string]any
	_ = jsonUnmarshal(body, &req)
	req["configuration"] = map[string]any{"acceptedOutputModes": []string{"text/plain"}, "historyLength": h}
	req["metadata"] = map[string]any{"pactProviderCheck": "ignore me"}
	body = jsonMarshal(req)
	t := r.deliver(ctx, &turn{messageID: "(new)", body: body}, nil)
	sent := `POST message:send with "configuration" and "metadata"`
	if t.problem != "" {
		return fail(sent, t.ex.describe(), "%s: configuration and metadata MAY be ignored, never refused", t.problem)
	}
	return pass(sent, t.ex.describe())
}
