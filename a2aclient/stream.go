package a2aclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pact-cli/pact/httpx"
)

// Reasons of streamed replies (message:stream, A2A 1.0 HTTP+JSON with
// Server-Sent Events).
const (
	// ReasonNotStream: a 200 answer to message:stream whose body is not
	// text/event-stream. The caller sends the message by message:send
	// instead (the same messageId, so the agent does not act twice).
	ReasonNotStream = "NOT_A_STREAM"
	// ReasonStalled: the stream sent nothing for the stall timeout and
	// could not be resumed.
	ReasonStalled = "STREAM_STALLED"
	// ReasonTooLarge: an event or the whole stream broke a size limit
	// (Client.MaxStreamEvent, MaxStreamSize); Message names the limit.
	ReasonTooLarge = "STREAM_TOO_LARGE"
	// ReasonTooLong: the reply kept streaming (events kept coming, so it
	// never stalled) past Client.MaxStreamDuration; pact stopped reading.
	// The message may have been delivered and acted on: its outcome is
	// unknown, and it stays on record under its messageId (PACT §4.3).
	ReasonTooLong = "STREAM_TOO_LONG"
)

// DefaultMaxStreamDuration is the longest a streamed reply is read, every
// attempt and resume included (10 minutes): a stream whose events keep
// coming never stalls, and would otherwise be read forever.
const DefaultMaxStreamDuration = 10 * time.Minute

// errStreamTooLong is the cause of the context that ends a stream read
// past MaxStreamDuration.
var errStreamTooLong = errors.New("the reply stream went on too long")

// StreamEvent is one event of a streamed reply, given to Stream's
// callback as it arrives.
type StreamEvent struct {
	// Raw is the event's data as received (a StreamResponse: exactly one
	// of "message", "task", "statusUpdate", "artifactUpdate"), with
	// invalid UTF-8 replaced as in Response.Raw.
	Raw   json.RawMessage
	Event a2a.Event
	// Text is the reply's text so far: the artifacts' text parts (chunks
	// of one artifact joined as they came, artifacts by blank lines), or
	// the status message's text when there are no artifacts. It may shrink
	// or change after a resume (Resumed). It grows in place (a later Text
	// shares the bytes of an earlier one, so comparing them is cheap); a
	// stream that keeps adding to earlier artifacts may see it lag behind
	// until the reply is complete (assembly.text).
	Text string
	// Resumed is set on the first event after the stream was broken and
	// picked up again (by tasks/{id}:subscribe or by sending again).
	Resumed bool
	// TaskID is the task the stream is about, once one is known.
	TaskID string
}

// StreamFunc receives stream events in order, on the goroutine that
// called Stream.
type StreamFunc func(StreamEvent)

// Stream sends req.Message with message:stream and reads the reply as
// Server-Sent Events, calling on (if set) for every event. It holds the
// rules of Send: a fresh PA JWT on every request, the delegation token,
// one messageId for every attempt. A stream broken mid-way (the
// connection closed, or no event arrived for StreamStall) is resumed with
// POST {interface}/tasks/{id}:subscribe when the stream has named a task,
// else by sending the message again with the same messageId; 5xx and 429
// before the stream began are retried as in Send. Attempts are bounded by
// MaxAttempts.
//
// The stream ends at a message event, or at a task whose state is
// terminal or interrupted (input or auth required). The Response is the
// final message ({"message": …} in Raw, as message:send would have
// answered), the task's status message when the task completed with one
// (so the receipt is read from the final message, PACT §5.6), else the
// task as assembled from the events ({"task": …}).
//
// Errors are *Error. A Provider that cannot stream answers
// UNSUPPORTED_OPERATION (an A2A error), NOT_FOUND (no such route) or
// NOT_A_STREAM (a 200 that is not text/event-stream); the caller then uses
// Send. Limits (MaxStreamEvent, MaxStreamSize) fail with STREAM_TOO_LARGE
// and a message naming the limit; they are not retried. A stream silent
// for StreamStall that cannot be resumed fails with STREAM_STALLED; one
// still going after MaxStreamDuration (every attempt included) with
// STREAM_TOO_LONG, naming the messageId.
func (c *Client) Stream(ctx context.Context, req Request, on StreamFunc) (*Response, error) {
	if req.Message == nil || req.Message.ID == "" {
		return nil, errors.New("a2aclient: message and messageId are required")
	}
	body, err := json.Marshal(a2a.SendMessageRequest{Message: req.Message})
	if err != nil {
		return nil, err
	}
	max := c.MaxAttempts
	if max <= 0 {
		max = 4
	}
	base := strings.TrimRight(req.InterfaceURL, "/")
	asm := &assembly{}
	resumed := false
	var (
		last *Error
		seen attempts
	)
	// One deadline for the whole reply, every attempt and resume included.
	limit := c.MaxStreamDuration
	if limit <= 0 {
		limit = DefaultMaxStreamDuration
	}
	callerCtx := ctx
	ctx, cancel := context.WithTimeoutCause(ctx, limit, errStreamTooLong)
	defer cancel()
	tooLong := func(attempt int) *Error {
		return &Error{HTTPStatus: 200, Reason: ReasonTooLong, Attempts: attempt, Err: errStreamTooLong,
			Message: fmt.Sprintf("it was still streaming after %s, pact's limit; messageId %s", durationWords(limit), req.Message.ID)}
	}
	for attempt := 1; ; attempt++ {
		target, payload := base+"/message:stream", body
		subscribing := asm.taskID() != ""
		if subscribing {
			target, payload = base+"/tasks/"+url.PathEscape(asm.taskID())+":subscribe", nil
		}
		resp, e := c.streamOnce(ctx, target, payload, req, asm, resumed, on)
		if e == nil {
			resp.Attempts, resp.Streamed = attempt, true
			return resp, nil
		}
		if e.Reason == reasonMint {
			if last != nil {
				return nil, last // an earlier attempt's answer says more
			}
			return nil, e.Err
		}
		e.Attempts = attempt
		seen.add(e)
		last = e
		if callerCtx.Err() == nil && errors.Is(context.Cause(ctx), errStreamTooLong) {
			return nil, tooLong(attempt)
		}
		if ctx.Err() != nil {
			return nil, last
		}
		if subscribing && ((e.HTTPStatus >= 400 && e.HTTPStatus < 500) || e.refused) && e.Reason != ReasonRateLimited {
			// The Provider will not resume this task (A2A answers a
			// finished task's subscribe with UNSUPPORTED_OPERATION): send
			// the message again, same messageId, for the stored reply. A
			// stream it answered but pact refused (too large, not this
			// message's task) is final.
			asm.forgetTask()
			if attempt >= max {
				return nil, last
			}
			resumed = true
			continue
		}
		retryable := e.Reason == ReasonNetwork || e.Reason == ReasonStalled || e.HTTPStatus >= 500 || e.Reason == ReasonRateLimited
		if !retryable || attempt >= max {
			return nil, last
		}
		wait, ok := c.retryWait(e, attempt)
		if !ok {
			return nil, last
		}
		if e.Reason == ReasonNetwork || e.Reason == ReasonStalled {
			resumed = resumed || asm.events > 0
			if asm.events > 0 && asm.taskID() != "" {
				wait = 0 // a broken stream of a known task: pick it up at once
			}
		}
		if c.OnRetry != nil {
			c.OnRetry(attempt, wait, last)
		}
		if wait > 0 {
			if err := c.sleep(ctx, wait); err != nil {
				if callerCtx.Err() == nil && errors.Is(context.Cause(ctx), errStreamTooLong) {
					return nil, tooLong(attempt)
				}
				return nil, last
			}
		}
	}
}

func (c *Client) streamLimits() (event, total int64, stall time.Duration) {
	event, total, stall = c.MaxStreamEvent, c.MaxStreamSize, c.StreamStall
	if event <= 0 {
		event = DefaultMaxStreamEvent
	}
	if total <= 0 {
		total = DefaultMaxStreamSize
	}
	if stall <= 0 {
		stall = DefaultStreamStall
	}
	return event, total, stall
}

// streamOnce is one message:stream or subscribe request and the reading of
// its events into asm.
func (c *Client) streamOnce(ctx context.Context, target string, body []byte, req Request, asm *assembly, resumed bool, on StreamFunc) (*Response, *Error) {
	pa, err := req.PAToken(ctx, target)
	if err != nil {
		return nil, &Error{Reason: reasonMint, Message: "minting the PA JWT failed", Err: err}
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, target, rd)
	if err != nil {
		return nil, &Error{Reason: ReasonBadReply, Message: err.Error()}
	}
	if body != nil {
		hreq.Header.Set("Content-Type", "application/json")
	}
	hreq.Header.Set("Accept", "text/event-stream")
	delegated, aerr := authorize(ctx, hreq, pa, req)
	if aerr != nil {
		return nil, aerr
	}
	// The whole-exchange timeout of an httpx client would cut a long
	// reply: the stall timeout and the size limit bound a stream instead
	// (the transport still bounds the wait for the response headers).
	hc := *c.HTTP
	hc.Timeout = 0
	resp, err := hc.Do(hreq)
	if err != nil {
		return nil, transportError(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		data, _ := httpx.ReadBody(resp.Body, MaxReplySize)
		e := errorFromResponse(resp, data)
		if e.Reason == ReasonInvalidToken && !delegated {
			e.Reason = ReasonUnauthenticated
		}
		return nil, e
	}
	// Answered 200: the Provider has the message, whatever follows
	// (Error.Reached).
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		return nil, &Error{HTTPStatus: 200, Reason: ReasonNotStream, Reached: true,
			Message: fmt.Sprintf("message:stream answered %q, not text/event-stream", resp.Header.Get("Content-Type"))}
	}
	maxEvent, maxTotal, stall := c.streamLimits()
	sr := NewSSEReader(resp.Body, maxEvent, maxTotal, stall)
	defer sr.Close()
	first := true
	for {
		ev, err := sr.Next()
		if err != nil {
			var le *SSELimitError
			switch {
			case errors.As(err, &le):
				return nil, &Error{HTTPStatus: 200, Reason: ReasonTooLarge, Message: le.Error(), Reached: true}
			case errors.Is(err, ErrStalled):
				return nil, &Error{Reason: ReasonStalled, Message: fmt.Sprintf("no event arrived for %s", stall), Err: ErrStalled, Reached: true}
			case errors.Is(err, ErrNotSSE):
				return nil, &Error{HTTPStatus: 200, Reason: ReasonNotStream, Reached: true, Message: "message:stream answered text/event-stream with a body that is not Server-Sent Events"}
			case errors.Is(err, io.EOF):
				return nil, &Error{Reason: ReasonNetwork, Err: errors.New("the reply stream ended before the reply was complete"), Reached: true}
			case ctx.Err() != nil:
				return nil, &Error{Reason: ReasonNetwork, Err: ctx.Err(), Reached: true}
			}
			return nil, &Error{Reason: ReasonNetwork, Err: httpx.Describe(err), Reached: true}
		}
		data := validUTF8(ev.Data)
		if ev.Type == "error" || isErrorEvent(data) {
			var env Envelope
			if json.Unmarshal(data, &env) == nil && env.isError() {
				e := &Error{HTTPStatus: 200}
				env.fill(e)
				// The stream's first event an error: a refusal, as an error
				// answer would be; after other events, the Provider had
				// begun the turn.
				e.refused, e.Reached = first, !first
				return nil, e
			}
		}
		var sresp a2a.StreamResponse
		if err := json.Unmarshal(data, &sresp); err != nil {
			return nil, &Error{HTTPStatus: 200, Reason: ReasonBadReply, Reached: true, Message: "an event of the reply stream is not a valid A2A event: " + err.Error()}
		}
		if err := asm.add(sresp.Event); err != nil {
			return nil, &Error{HTTPStatus: 200, Reason: ReasonBadReply, Reached: true, Message: err.Error()}
		}
		if on != nil {
			on(StreamEvent{Raw: json.RawMessage(data), Event: sresp.Event, Text: asm.text(), Resumed: first && resumed, TaskID: asm.taskID()})
		}
		first = false
		if r := asm.final(); r != nil {
			return r, nil
		}
	}
}

// isErrorEvent reports whether data is an object with an "error" member
// (an A2A error sent inside the stream).
func isErrorEvent(data []byte) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil {
		return false
	}
	_, ok := m["error"]
	return ok && len(m) == 1
}

// assembly is the reply as the stream has told it so far. Its cost is
// linear in the stream: an appended chunk is added to its artifact's parts
// and to the text so far in place (amortised O(chunk)), never by copying
// what came before (issue 31 item 14: 40,000 tiny chunks took 172 s of CPU
// when each one copied the parts and joined the whole text again).
type assembly struct {
	msg    *a2a.Message
	task   *a2a.Task
	done   bool
	events int
	// named and contextID are the task and the conversation the reply
	// belongs to, once an event has named them; they are kept when the
	// task is forgotten (forgetTask): a resumed stream, or the message sent
	// again, must tell of the same task in the same conversation.
	named     a2a.TaskID
	contextID string

	// arts is the text of each artifact of task, in task.Artifacts' order;
	// full is their join (ArtifactText), valid while fullOK. Appending to
	// the last artifact, or adding one, extends full in place; anything
	// else (a chunk for an earlier artifact, a replaced artifact or task)
	// makes it be joined again by text(), which copies at most
	// maxRejoin bytes over the whole stream (then text() keeps the last
	// text it gave until the reply is complete).
	arts     []*strings.Builder
	full     strings.Builder
	fullOK   bool
	rejoined int64
	lastText string
}

// belongs refuses an event of another task or conversation than the one
// this reply already named (a resumed stream answered with another task's
// events, or a Provider mixing streams up), and remembers the first ones
// named. task is "" for an event that names none.
func (a *assembly) belongs(task a2a.TaskID, contextID string) error {
	if a.contextID != "" && contextID != a.contextID {
		return fmt.Errorf("the stream's event is in conversation %q, not %q: it is not the reply to this message", contextID, a.contextID)
	}
	if task != "" && a.named != "" && task != a.named {
		return fmt.Errorf("the stream's event is for task %q, not %q: it is not the reply to this message", task, a.named)
	}
	a.contextID = contextID
	if task != "" {
		a.named = task
	}
	return nil
}

// maxRejoin bounds the bytes text() copies to join the artifacts again
// over one stream: four times the largest stream (DefaultMaxStreamSize).
const maxRejoin = 4 * DefaultMaxStreamSize

func (a *assembly) taskID() string {
	if a.task == nil {
		return ""
	}
	return string(a.task.ID)
}

// forgetTask drops the task, so the next attempt sends the message again.
func (a *assembly) forgetTask() { a.setTask(nil) }

// setTask replaces the task (and the artifacts' text) with t.
func (a *assembly) setTask(t *a2a.Task) {
	a.task, a.arts, a.fullOK = t, nil, false
	a.full.Reset()
	if t == nil {
		return
	}
	// The task is the assembly's own from here: appends edit it in place.
	t.Artifacts = slices.Clone(t.Artifacts)
	for i, art := range t.Artifacts {
		b := &strings.Builder{}
		if art != nil {
			cp := *art
			cp.Parts = slices.Clone(art.Parts)
			t.Artifacts[i] = &cp
			b.WriteString(partsText(art.Parts, ""))
		}
		a.arts = append(a.arts, b)
	}
}

// add applies one event. A task event replaces what was known of the task
// (a subscribe starts with the task's current state, A2A 1.0 §3.1.6).
func (a *assembly) add(ev a2a.Event) error {
	a.events++
	switch e := ev.(type) {
	case *a2a.Message:
		if e.Role != a2a.MessageRoleAgent {
			return fmt.Errorf("the stream's message has role %q, not ROLE_AGENT", e.Role)
		}
		if e.ContextID == "" {
			return errors.New("the stream's message has no contextId")
		}
		if err := a.belongs(e.TaskID, e.ContextID); err != nil {
			return err
		}
		a.msg, a.done = e, true
	case *a2a.Task:
		if e.ContextID == "" || e.ID == "" {
			return errors.New("the stream's task has no id or contextId")
		}
		if err := a.belongs(e.ID, e.ContextID); err != nil {
			return err
		}
		t := *e
		a.setTask(&t)
		a.done = finalState(t.Status.State)
	case *a2a.TaskStatusUpdateEvent:
		if err := a.ensureTask(e.TaskID, e.ContextID); err != nil {
			return err
		}
		a.task.Status = e.Status
		for k, v := range e.Metadata {
			if a.task.Metadata == nil {
				a.task.Metadata = map[string]any{}
			}
			a.task.Metadata[k] = v
		}
		a.done = finalState(e.Status.State)
	case *a2a.TaskArtifactUpdateEvent:
		if err := a.ensureTask(e.TaskID, e.ContextID); err != nil {
			return err
		}
		if e.Artifact == nil {
			return errors.New("the stream's artifact update has no artifact")
		}
		a.addArtifact(e)
	default:
		return fmt.Errorf("the stream sent an event of unknown kind %T", ev)
	}
	return nil
}

func (a *assembly) ensureTask(id a2a.TaskID, contextID string) error {
	if id == "" || contextID == "" {
		return errors.New("the stream's update has no taskId or contextId")
	}
	if err := a.belongs(id, contextID); err != nil {
		return err
	}
	if a.task == nil {
		a.setTask(&a2a.Task{ID: id, ContextID: contextID})
		return nil
	}
	if a.task.ID != id {
		return fmt.Errorf("the stream's update is for task %q, not %q", id, a.task.ID)
	}
	return nil
}

func (a *assembly) addArtifact(e *a2a.TaskArtifactUpdateEvent) {
	chunk := partsText(e.Artifact.Parts, "")
	last := len(a.task.Artifacts) - 1
	for i, old := range a.task.Artifacts {
		if old == nil || old.ID != e.Artifact.ID {
			continue
		}
		if e.Append {
			// In place: this artifact is the assembly's own (setTask, below).
			old.Parts = append(old.Parts, e.Artifact.Parts...)
			if i == last && a.fullOK {
				a.extendFull(a.arts[i].Len() == 0, chunk)
			} else {
				a.fullOK = false
			}
			a.arts[i].WriteString(chunk)
		} else {
			cp := *e.Artifact
			cp.Parts = slices.Clone(e.Artifact.Parts)
			a.task.Artifacts[i] = &cp
			a.arts[i] = &strings.Builder{}
			a.arts[i].WriteString(chunk)
			a.fullOK = false
		}
		return
	}
	cp := *e.Artifact
	cp.Parts = slices.Clone(e.Artifact.Parts)
	a.task.Artifacts = append(a.task.Artifacts, &cp)
	b := &strings.Builder{}
	b.WriteString(chunk)
	a.arts = append(a.arts, b)
	if a.fullOK {
		a.extendFull(true, chunk)
	}
}

// extendFull adds chunk to the joined text: after a blank line when it
// starts an artifact's text and text came before.
func (a *assembly) extendFull(starts bool, chunk string) {
	if chunk == "" {
		return
	}
	if starts && a.full.Len() > 0 {
		a.full.WriteString("\n\n")
	}
	a.full.WriteString(chunk)
}

// finalState: the stream of a task in this state has ended (terminal, or
// the agent waits for the User).
func finalState(s a2a.TaskState) bool {
	return s.Terminal() || s == a2a.TaskStateInputRequired || s == a2a.TaskStateAuthRequired
}

// text is the reply's text so far (see StreamEvent.Text). While the
// stream goes on it costs O(1) (the joined text is kept, joined again only
// within maxRejoin).
func (a *assembly) text() string {
	if a.msg != nil {
		return partsText(a.msg.Parts, "\n\n")
	}
	if a.task == nil {
		return ""
	}
	if a.done && a.task.Status.Message != nil {
		return partsText(a.task.Status.Message.Parts, "\n\n")
	}
	if !a.fullOK {
		var n int64
		for _, b := range a.arts {
			n += int64(b.Len()) + 2
		}
		if a.rejoined+n > maxRejoin && !a.done {
			return a.lastText // joined often enough: the complete reply comes at the end
		}
		a.rejoined += n
		a.full.Reset()
		for _, b := range a.arts {
			a.extendFull(true, b.String())
		}
		a.fullOK = true
	}
	a.lastText = a.full.String()
	return a.lastText
}

// ArtifactText is the text of a task's artifacts: the text parts of one
// artifact joined as they are (streamed chunks), artifacts joined by a
// blank line.
func ArtifactText(t *a2a.Task) string {
	var out []string
	for _, art := range t.Artifacts {
		if art == nil {
			continue
		}
		if s := partsText(art.Parts, ""); s != "" {
			out = append(out, s)
		}
	}
	return strings.Join(out, "\n\n")
}

func partsText(parts a2a.ContentParts, sep string) string {
	var out []string
	for _, p := range parts {
		if p == nil {
			continue
		}
		if t := p.Text(); t != "" {
			out = append(out, t)
		}
	}
	return strings.Join(out, sep)
}

// final is the Response once the stream has ended, else nil.
func (a *assembly) final() *Response {
	if !a.done {
		return nil
	}
	if a.msg != nil {
		raw, _ := json.Marshal(map[string]any{"message": a.msg})
		return &Response{Raw: raw, Message: a.msg}
	}
	t := a.task
	if t.Status.State == a2a.TaskStateCompleted && t.Status.Message != nil {
		m := *t.Status.Message
		if m.ContextID == "" {
			m.ContextID = t.ContextID
		}
		if m.Role == "" {
			m.Role = a2a.MessageRoleAgent
		}
		if m.Role == a2a.MessageRoleAgent {
			raw, _ := json.Marshal(map[string]any{"message": &m})
			return &Response{Raw: raw, Message: &m}
		}
	}
	raw, _ := json.Marshal(map[string]any{"task": t})
	return &Response{Raw: raw, Task: t}
}

// CannotStream reports whether err from Stream means the Provider does not
// stream, so the message should go by message:send instead:
// UNSUPPORTED_OPERATION, NOT_FOUND (no such route) or NOT_A_STREAM.
func CannotStream(err error) bool {
	return IsReason(err, ReasonUnsupportedOperation) || IsReason(err, ReasonNotFound) || IsReason(err, ReasonNotStream)
}

// durationWords is d for people: "10 minutes", "90 seconds", or Go's form
// ("400ms") for what is neither.
func durationWords(d time.Duration) string {
	switch {
	case d >= time.Minute && d%time.Minute == 0:
		if d == time.Minute {
			return "1 minute"
		}
		return fmt.Sprintf("%d minutes", d/time.Minute)
	case d >= time.Second && d%time.Second == 0:
		return fmt.Sprintf("%d seconds", d/time.Second)
	}
	return d.String()
}
