package demoprovider

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// maxRequestBody caps a message:send body (1 MiB).
const maxRequestBody = 1 << 20

// conversation is one context (§4.2): owned by one (personal agent, sub)
// and one Brand, possibly closed, with the stored reply of every messageId
// (§4.3).
type conversation struct {
	id      string
	brandID string
	owner   paIdentity
	// delegatedSub is the Brand user the context has run as under a
	// delegation token; a token for another sub is refused (§5.5).
	delegatedSub string
	closed       bool
	replies      map[string][]byte // messageId → stored reply body
	inflight     map[string]bool   // messageIds whose turn is running
}

// firstKey identifies a first message (no contextId): who sent it, to
// which Brand, with which messageId.
type firstKey struct {
	owner     paIdentity
	brandID   string
	messageID string
}

// randomID returns prefix + 128 random bits, base64url.
func randomID(prefix string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return prefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// textOf validates the parts of a §4.1 message and returns the text of its
// text parts joined by newlines. Non-text parts → CONTENT_TYPE_NOT_SUPPORTED;
// no non-blank text → INVALID_PARAMS.
func textOf(parts a2a.ContentParts) (string, string) {
	var texts []string
	for _, p := range parts {
		if p == nil {
			return "", ReasonInvalidParams
		}
		t, ok := p.Content.(a2a.Text)
		if !ok {
			return "", ReasonContentTypeNotSupported
		}
		if strings.TrimSpace(string(t)) != "" {
			texts = append(texts, string(t))
		}
	}
	if len(texts) == 0 {
		return "", ReasonInvalidParams
	}
	return strings.Join(texts, "\n"), ""
}

// hasUnknownPartKind reports whether body is a JSON SendMessageRequest
// whose message has a part that is an object with no "text" member, so a
// part kind the SDK cannot decode (e.g. a legacy "file" part) is answered
// CONTENT_TYPE_NOT_SUPPORTED rather than as bad JSON.
func hasUnknownPartKind(body []byte) bool {
	var loose struct {
		Message struct {
			Parts []map[string]json.RawMessage `json:"parts"`
		} `json:"message"`
	}
	if json.Unmarshal(body, &loose) != nil {
		return false
	}
	for _, p := range loose.Message.Parts {
		if _, ok := p["text"]; !ok && len(p) > 0 {
			return true
		}
	}
	return false
}

// allow applies the RateLimit test knob per (personal agent, sub).
func (s *Server) allow(id paIdentity) bool {
	if s.cfg.RateLimit <= 0 {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	w := s.rate[id]
	if w == nil || now.Sub(w.start) >= time.Second {
		w = &rateWindow{start: now}
		s.rate[id] = w
	}
	w.count++
	return w.count <= s.cfg.RateLimit
}

// serveSend is POST {interface}/message:send (§4). The PA JWT has been
// verified; the delegation token (if any) is verified here before the body
// is read (§5.5).
func (s *Server) serveSend(w http.ResponseWriter, r *http.Request, b *brandDef, id paIdentity) {
	msg, text, del, ok := s.readMessage(w, r, b, id)
	if !ok {
		return
	}
	conv, stored, reason, errMsg := s.claimTurn(b, id, msg, del)
	if stored != nil {
		writeStored(w, stored)
		return
	}
	if reason != "" {
		writeA2AError(w, reason, errMsg)
		return
	}
	reply, err := s.runTurn(r, b, conv, msg.ID, text, del)
	if err != nil {
		s.mu.Lock()
		delete(conv.inflight, msg.ID)
		s.mu.Unlock()
		writeA2AError(w, ReasonInternal, "The agent failed")
		return
	}
	s.mu.Lock()
	fail := s.failReplies > 0 && msg.ContextID != ""
	if fail {
		s.failReplies--
	}
	s.mu.Unlock()
	if fail {
		writeA2AError(w, ReasonInternal, "Injected failure (FailReplies); retry with the same messageId")
		return
	}
	writeStored(w, reply)
}

// readMessage is the part of message:send and message:stream before the
// turn (§4.1, §5.5): the rate limit, the delegation token (verified before
// the body is read), then the SendMessageRequest and its text. On a
// failure it has written the answer and returns ok false.
func (s *Server) readMessage(w http.ResponseWriter, r *http.Request, b *brandDef, id paIdentity) (msg *a2a.Message, text string, del *delegation, ok bool) {
	if s.faultRateLimited(w) {
		return nil, "", nil, false
	}
	if !s.allow(id) {
		writeRateLimited(w, time.Second)
		return nil, "", nil, false
	}
	if h := r.Header.Get(delegationHeader); h != "" {
		d, err := s.as.verifyDelegation(h, b, id)
		if err != nil {
			writeUnauthorized(w, "invalid_token")
			return nil, "", nil, false
		}
		del = d
	}

	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBody+1))
	if err != nil || len(body) > maxRequestBody {
		writeA2AError(w, ReasonInvalidParams, "Request body unreadable or too large")
		return nil, "", nil, false
	}
	var req a2a.SendMessageRequest
	if err := json.Unmarshal(body, &req); err != nil {
		if hasUnknownPartKind(body) {
			writeA2AError(w, ReasonContentTypeNotSupported, "Only text parts are supported")
			return nil, "", nil, false
		}
		writeA2AError(w, ReasonInvalidParams, "Invalid JSON: "+err.Error())
		return nil, "", nil, false
	}
	msg = req.Message
	if s.fault("reject-configuration") && (req.Config != nil || len(req.Metadata) > 0) {
		writeA2AError(w, ReasonInvalidParams, "configuration and metadata are not accepted")
		return nil, "", nil, false
	}
	switch {
	case msg == nil:
		writeA2AError(w, ReasonInvalidParams, "message is required")
		return nil, "", nil, false
	case msg.TaskID != "":
		writeA2AError(w, ReasonTaskNotFound, "Task "+string(msg.TaskID)+" not found")
		return nil, "", nil, false
	case msg.Role != a2a.MessageRoleUser:
		writeA2AError(w, ReasonInvalidParams, "message.role must be ROLE_USER")
		return nil, "", nil, false
	case strings.TrimSpace(msg.ID) == "":
		writeA2AError(w, ReasonInvalidParams, "message.messageId is required")
		return nil, "", nil, false
	case req.Config != nil && req.Config.PushConfig != nil:
		writeA2AError(w, ReasonPushNotSupported, "Push notifications are not supported")
		return nil, "", nil, false
	}
	text, reason := textOf(msg.Parts)
	if reason == ReasonContentTypeNotSupported {
		writeA2AError(w, reason, "Only text parts are supported")
		return nil, "", nil, false
	} else if reason != "" {
		writeA2AError(w, reason, "message needs at least one non-blank text part")
		return nil, "", nil, false
	}

	return msg, text, del, true
}

func writeStored(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", a2aContentType)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// claimTurn applies the context rules of §4.2 and §4.3 under s.mu. It
// returns the stored reply of a repeated messageId, or an A2A error reason
// and message, or the conversation with messageId marked in flight.
func (s *Server) claimTurn(b *brandDef, id paIdentity, msg *a2a.Message, del *delegation) (*conversation, []byte, string, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var conv *conversation
	if msg.ContextID == "" {
		// Beyond §4.3, which dedupes messageIds within a contextId: a first
		// message has no contextId, so a client that lost the reply (a
		// connection reset after the turn ran) retries it without one. The
		// same messageId from the same (personal agent, sub) to the same
		// Brand finds the context its first attempt created, so the stored
		// reply is returned and the agent does not run twice.
		key := firstKey{owner: id, brandID: b.id, messageID: msg.ID}
		if c, ok := s.firsts[key]; ok {
			conv = c
		} else {
			conv = &conversation{
				id:       a2a.NewContextID(),
				brandID:  b.id,
				owner:    id,
				replies:  map[string][]byte{},
				inflight: map[string]bool{},
			}
			s.contexts[conv.id] = conv
			s.firsts[key] = conv
		}
	} else {
		c, ok := s.contexts[msg.ContextID]
		// Same answer whether the context is unknown, another Brand's or
		// another (personal agent, sub)'s (§4.2).
		if (!ok || c.brandID != b.id || c.owner != id) && !s.fault("unknown-context-new") {
			return nil, nil, ReasonInvalidParams, "Unknown contextId"
		} else if !ok {
			c = &conversation{id: a2a.NewContextID(), brandID: b.id, owner: id, replies: map[string][]byte{}, inflight: map[string]bool{}}
			s.contexts[c.id] = c
		}
		conv = c
	}
	if stored, ok := conv.replies[msg.ID]; ok && !s.fault("retry-reruns") {
		return conv, stored, "", ""
	}
	if conv.inflight[msg.ID] {
		return nil, nil, ReasonInvalidParams, "messageId is already being processed; retry later"
	}
	if conv.closed {
		return nil, nil, ReasonUnsupportedOperation, "This conversation is closed; start a new one without contextId"
	}
	if del != nil && conv.delegatedSub != "" && conv.delegatedSub != del.sub {
		return nil, nil, ReasonInvalidParams, "Delegation token is for a different user than this conversation"
	}
	conv.inflight[msg.ID] = true
	return conv, nil, "", ""
}

// runTurn runs the Brand's agent for one claimed turn and stores the reply
// body under messageId (§4.3).
func (s *Server) runTurn(r *http.Request, b *brandDef, conv *conversation, messageID, text string, del *delegation) ([]byte, error) {
	if d := s.cfg.AgentDelay; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return nil, r.Context().Err()
		}
	}
	if g := s.cfg.AgentGate; g != nil {
		select {
		case <-g:
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
	}
	t := turn{text: text}
	if del != nil {
		t.delegated, t.user, t.scopes = true, del.sub, del.scopes
	}
	s.mu.Lock()
	out := b.respond(t)
	s.runs++
	if del != nil {
		conv.delegatedSub = del.sub
	}
	if out.close {
		conv.closed = true
	}
	s.mu.Unlock()

	agentMsg := &a2a.Message{
		ID:        randomID("r-"),
		ContextID: conv.id,
		Role:      a2a.MessageRoleAgent,
		Parts:     a2a.ContentParts{a2a.NewTextPart(out.text)},
	}
	if s.fault("no-context-id") {
		agentMsg.ContextID = ""
	}
	var resp any
	var meta map[string]any
	if len(out.missingScopes) > 0 && !s.fault("stepup-fails") {
		link, err := s.as.stepUpLink(b, conv.owner, out.missingScopes)
		if err != nil {
			return nil, err
		}
		task := &a2a.Task{
			ID:        a2a.TaskID(randomID("t-")),
			ContextID: conv.id,
			Status:    a2a.TaskStatus{State: a2a.TaskStateAuthRequired, Message: agentMsg},
			Metadata: map[string]any{
				"pact.missingScopes":           out.missingScopes,
				"pact.verificationUriComplete": link,
			},
		}
		meta = task.Metadata
		resp = map[string]any{"task": task}
	} else {
		resp = map[string]any{"message": agentMsg}
	}
	if del != nil {
		rc, err := s.as.receipt(b, del, out)
		if err != nil {
			return nil, err
		}
		if meta == nil {
			agentMsg.Metadata = map[string]any{}
			meta = agentMsg.Metadata
		}
		meta["pact.receipt"] = rc
	}
	body, err := json.Marshal(resp)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	delete(conv.inflight, messageID)
	conv.replies[messageID] = body
	s.mu.Unlock()
	return body, nil
}

// serveListTasks is GET {interface}/tasks (§2.2): always an empty
// ListTasksResponse; pageSize must be 1–100 (default 50).
func (s *Server) serveListTasks(w http.ResponseWriter, r *http.Request) {
	size := 50
	if v, ok := r.URL.Query()["pageSize"]; ok {
		n, err := strconv.Atoi(strings.TrimSpace(v[0]))
		if err != nil || n < 1 || n > 100 {
			writeA2AError(w, ReasonInvalidParams, "pageSize must be an integer from 1 to 100")
			return
		}
		size = n
	}
	writeJSON(w, http.StatusOK, a2aContentType, a2a.ListTasksResponse{Tasks: []*a2a.Task{}, PageSize: size})
}
