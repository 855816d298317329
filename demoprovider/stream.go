package demoprovider

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// DefaultStreamWordDelay is the pause between the words of a streamed
// reply (Config.StreamWordDelay).
const DefaultStreamWordDelay = 40 * time.Millisecond

// streamTask is one streamed reply (A2A 1.0 message:stream): a task whose
// events are produced once, in the background, whoever is connected, and
// kept, so that a client whose connection broke picks the task up with
// tasks/{id}:subscribe and a repeated messageId follows the same task: the
// agent acted once, when the turn ran (runTurn), never again (§4.3).
type streamTask struct {
	id        a2a.TaskID
	contextID string
	owner     paIdentity
	brandID   string

	mu      sync.Mutex
	events  [][]byte // StreamResponse JSON, in order
	text    strings.Builder
	status  a2a.TaskStatus
	done    bool
	changed chan struct{} // closed and replaced at every event
}

// streamKey finds the stream of a messageId of one (personal agent, sub)
// at one Brand.
type streamKey = firstKey

func (t *streamTask) push(ev a2a.Event, chunk string) {
	raw, _ := json.Marshal(a2a.StreamResponse{Event: ev})
	t.mu.Lock()
	defer t.mu.Unlock()
	t.events = append(t.events, raw)
	t.text.WriteString(chunk)
	switch e := ev.(type) {
	case *a2a.Task:
		t.status = e.Status
	case *a2a.TaskStatusUpdateEvent:
		t.status = e.Status
		t.done = finalStreamState(e.Status.State)
	}
	close(t.changed)
	t.changed = make(chan struct{})
}

func finalStreamState(s a2a.TaskState) bool {
	return s.Terminal() || s == a2a.TaskStateInputRequired || s == a2a.TaskStateAuthRequired
}

// state is the task's state now.
func (t *streamTask) state() a2a.TaskState {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.status.State
}

// snapshot is the task as it stands (A2A: a subscribe starts with the
// Task), and the index of the next event to follow.
func (t *streamTask) snapshot() ([]byte, int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	task := &a2a.Task{ID: t.id, ContextID: t.contextID, Status: t.status}
	if t.text.Len() > 0 {
		task.Artifacts = []*a2a.Artifact{{ID: a2a.ArtifactID("a-" + string(t.id)), Parts: a2a.ContentParts{a2a.NewTextPart(t.text.String())}}}
	}
	raw, _ := json.Marshal(a2a.StreamResponse{Event: task})
	return raw, len(t.events)
}

// follow writes the events from index from on, waiting for new ones,
// until the task is done or ctx ends.
func (t *streamTask) follow(ctx context.Context, from int, write func([]byte) error) error {
	for i := from; ; {
		t.mu.Lock()
		pending := t.events[i:]
		done, changed := t.done, t.changed
		t.mu.Unlock()
		for _, ev := range pending {
			if err := write(ev); err != nil {
				return err
			}
		}
		i += len(pending)
		if done {
			t.mu.Lock()
			more := len(t.events) > i
			t.mu.Unlock()
			if !more {
				return nil
			}
			continue
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// chunks splits text into words, each with the spaces after it, so that
// the chunks joined give text back exactly.
func chunks(text string) []string {
	var out []string
	start := 0
	inSpace := false
	for i, r := range text {
		sp := unicode.IsSpace(r)
		if inSpace && !sp {
			out = append(out, text[start:i])
			start = i
		}
		inSpace = sp
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}

// sseWriter writes Server-Sent Events, flushing each.
type sseWriter struct {
	w       http.ResponseWriter
	started bool
}

func (sw *sseWriter) write(ev []byte) error {
	if !sw.started {
		sw.started = true
		sw.w.Header().Set("Content-Type", "text/event-stream")
		sw.w.Header().Set("Cache-Control", "no-store")
		sw.w.WriteHeader(http.StatusOK)
	}
	if _, err := fmt.Fprintf(sw.w, "data: %s\n\n", ev); err != nil {
		return err
	}
	if f, ok := sw.w.(http.Flusher); ok {
		f.Flush()
	}
	return nil
}

// serveStream is POST {interface}/message:stream for a Brand whose card
// declares streaming. The checks and the turn are message:send's
// (readMessage, claimTurn, runTurn); the reply is then streamed: a task
// (working), the reply's words as artifact chunks, then a status update
// completing the task with the whole reply message, receipt included. A
// step-up task or a stored reply that is not streaming any more is one
// event. A repeated messageId whose stream runs follows that stream.
func (s *Server) serveStream(w http.ResponseWriter, r *http.Request, b *brandDef, id paIdentity) {
	msg, text, del, ok := s.readMessage(w, r, b, id)
	if !ok {
		return
	}
	sw := &sseWriter{w: w}
	key := streamKey{owner: id, brandID: b.id, messageID: msg.ID}
	s.mu.Lock()
	st := s.streams[key]
	s.mu.Unlock()
	if st != nil {
		_ = st.follow(r.Context(), 0, sw.write)
		return
	}
	conv, stored, reason, errMsg := s.claimTurn(b, id, msg, del)
	if stored != nil {
		_ = sw.write(stored) // {"message": …} or {"task": …} is a StreamResponse
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
	var sr a2a.StreamResponse
	if err := json.Unmarshal(reply, &sr); err != nil {
		writeA2AError(w, ReasonInternal, "The agent failed")
		return
	}
	agentMsg, isMsg := sr.Event.(*a2a.Message)
	if !isMsg {
		_ = sw.write(reply)
		return
	}
	st = s.startStream(key, conv, agentMsg)
	_ = st.follow(r.Context(), 0, sw.write)
}

// startStream registers and starts the stream of agentMsg, produced in
// the background at the Brand's pace (Config.StreamWordDelay per word).
func (s *Server) startStream(key streamKey, conv *conversation, agentMsg *a2a.Message) *streamTask {
	st := &streamTask{id: a2a.TaskID(randomID("t-")), contextID: conv.id, owner: key.owner, brandID: key.brandID, changed: make(chan struct{})}
	s.mu.Lock()
	if s.streams == nil {
		s.streams, s.streamTasks = map[streamKey]*streamTask{}, map[a2a.TaskID]*streamTask{}
	}
	s.streams[key] = st
	s.streamTasks[st.id] = st
	s.mu.Unlock()
	st.push(&a2a.Task{ID: st.id, ContextID: st.contextID, Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}, "")
	delay := s.cfg.StreamWordDelay
	if delay == 0 {
		delay = DefaultStreamWordDelay
	}
	artifact := a2a.ArtifactID("a-" + string(st.id))
	words := chunks(conversationText(agentMsg))
	go func() {
		for i, wd := range words {
			if delay > 0 {
				select {
				case <-time.After(delay):
				case <-s.done:
					return
				}
			}
			st.push(&a2a.TaskArtifactUpdateEvent{
				TaskID: st.id, ContextID: st.contextID, Append: i > 0, LastChunk: i == len(words)-1,
				Artifact: &a2a.Artifact{ID: artifact, Parts: a2a.ContentParts{a2a.NewTextPart(wd)}},
			}, wd)
		}
		now := s.now().UTC()
		st.push(&a2a.TaskStatusUpdateEvent{TaskID: st.id, ContextID: st.contextID,
			Status: a2a.TaskStatus{State: a2a.TaskStateCompleted, Message: agentMsg, Timestamp: &now}}, "")
	}()
	return st
}

// conversationText is the text of a message's text parts.
func conversationText(m *a2a.Message) string {
	var out []string
	for _, p := range m.Parts {
		if p != nil && p.Text() != "" {
			out = append(out, p.Text())
		}
	}
	return strings.Join(out, "\n")
}

// serveSubscribe is POST (or GET) {interface}/tasks/{id}:subscribe for a
// streaming Brand: the task as it stands, then its remaining events. Only
// the (personal agent, sub) that started it may follow it; anyone else,
// like an unknown id, gets TASK_NOT_FOUND. A task in a terminal state
// (completed) has nothing left to follow: UNSUPPORTED_OPERATION, as A2A 1.0
// answers SubscribeToTask then (its stored reply comes back by sending the
// same messageId again, §4.3). A delegation token, if sent, must be valid
// (§5.5).
func (s *Server) serveSubscribe(w http.ResponseWriter, r *http.Request, b *brandDef, id paIdentity, taskID string) {
	if h := r.Header.Get(delegationHeader); h != "" {
		if _, err := s.as.verifyDelegation(h, b, id); err != nil {
			writeUnauthorized(w, "invalid_token")
			return
		}
	}
	s.mu.Lock()
	st := s.streamTasks[a2a.TaskID(taskID)]
	s.mu.Unlock()
	if st == nil || st.owner != id || st.brandID != b.id {
		writeA2AError(w, ReasonTaskNotFound, "Task "+taskID+" not found")
		return
	}
	if state := st.state(); state.Terminal() {
		writeA2AError(w, ReasonUnsupportedOperation, "Task "+taskID+" is in a terminal state ("+string(state)+"): there is nothing to subscribe to")
		return
	}
	sw := &sseWriter{w: w}
	snap, next := st.snapshot()
	if err := sw.write(snap); err != nil {
		return
	}
	_ = st.follow(r.Context(), next, sw.write)
}
