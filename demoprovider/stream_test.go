package demoprovider

import (
	"bufio"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pact-cli/pact/discovery"
)

// openStream posts a message:stream and returns the response, its events
// read one by one through next.
func openStream(t *testing.T, e *env, path, sub, body string, extra ...string) (*http.Response, func() (a2a.Event, bool)) {
	t.Helper()
	method := http.MethodPost
	req, _ := http.NewRequest(method, e.example().InterfaceURL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+e.jwt(sub))
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	for i := 0; i+1 < len(extra); i += 2 {
		req.Header.Set(extra[i], extra[i+1])
	}
	res, err := testClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	return res, func() (a2a.Event, bool) {
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var sr a2a.StreamResponse
			if err := json.Unmarshal([]byte(data), &sr); err != nil {
				t.Fatalf("event %s: %v", data, err)
			}
			return sr.Event, true
		}
		return nil, false
	}
}

// Example Co. streams (capabilities.streaming): a working task, the reply
// word by word as artifact chunks, then the completed status with the
// whole reply message. Cutting the stream after two events and sending
// the same messageId again follows the same task: the agent ran once
// (§4.3). tasks/{id}:subscribe picks the task up from where it stands.
func TestStreamWordByWordAndIdempotent(t *testing.T) {
	e := start(t, func(c *Config, _ *testPA) { c.StreamWordDelay = 5 * time.Millisecond })
	if !e.srv.card(e.srv.byID[e.example().ID]).Capabilities.Streaming || e.srv.card(e.srv.byID[e.other().ID]).Capabilities.Streaming {
		t.Fatal("Example Co. should declare streaming and Other Shop not")
	}
	body := msgBody("m-stream-1", "", "hello")
	res, next := openStream(t, e, "/message:stream", "u1", body)
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, type %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	first, _ := next()
	task, ok := first.(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateWorking {
		t.Fatalf("first event = %#v, want a working task", first)
	}
	next()           // one word
	res.Body.Close() // the connection is cut mid-stream
	if n := e.srv.AgentRuns(); n != 1 {
		t.Fatalf("agent runs = %d", n)
	}

	_, next = openStream(t, e, "/message:stream", "u1", body)
	var words []string
	var final *a2a.Message
	for ev, ok := next(); ok; ev, ok = next() {
		switch ev := ev.(type) {
		case *a2a.TaskArtifactUpdateEvent:
			words = append(words, ev.Artifact.Parts[0].Text())
		case *a2a.TaskStatusUpdateEvent:
			if ev.Status.State == a2a.TaskStateCompleted {
				final = ev.Status.Message
			}
		}
	}
	if final == nil || len(words) < 3 || strings.Join(words, "") != final.Parts[0].Text() {
		t.Fatalf("words %q, final %+v: want the words to make up the final message", words, final)
	}
	if n := e.srv.AgentRuns(); n != 1 {
		t.Fatalf("agent runs after the resend = %d, want 1 (same messageId)", n)
	}

	// Subscribe to the task, complete now: nothing is left to follow, and
	// A2A 1.0 answers SubscribeToTask on a terminal task with
	// UNSUPPORTED_OPERATION, not the task (issue 31 item 22); for anyone
	// but its owner the task does not exist.
	r := do(t, http.MethodPost, e.example().InterfaceURL+"/tasks/"+string(task.ID)+":subscribe", nil, "Authorization", "Bearer "+e.jwt("u1"), "A2A-Version", "1.0")
	wantA2AError(t, r, 400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION")
	r = do(t, http.MethodPost, e.example().InterfaceURL+"/tasks/"+string(task.ID)+":subscribe", nil, "Authorization", "Bearer "+e.jwt("u2"), "A2A-Version", "1.0")
	wantA2AError(t, r, 404, "NOT_FOUND", "TASK_NOT_FOUND")
	// GET tasks/{id} says TASK_NOT_FOUND (PACT §2.2), for the owner too.
	r = do(t, http.MethodGet, e.example().InterfaceURL+"/tasks/"+string(task.ID), nil, "Authorization", "Bearer "+e.jwt("u1"), "A2A-Version", "1.0")
	wantA2AError(t, r, 404, "NOT_FOUND", "TASK_NOT_FOUND")
	// Its stored reply comes back by the same messageId (§4.3).
	_, next = openStream(t, e, "/message:stream", "u1", body)
	var again *a2a.Message
	for ev, ok := next(); ok; ev, ok = next() {
		if su, ok := ev.(*a2a.TaskStatusUpdateEvent); ok && su.Status.State == a2a.TaskStateCompleted {
			again = su.Status.Message
		}
	}
	if again == nil || again.Parts[0].Text() != final.Parts[0].Text() || e.srv.AgentRuns() != 1 {
		t.Fatalf("the same messageId after completion: %+v, %d runs", again, e.srv.AgentRuns())
	}

	// Other Shop does not stream.
	r = do(t, http.MethodPost, e.other().InterfaceURL+"/message:stream", strings.NewReader(body), "Authorization", "Bearer "+e.jwt("u1"))
	wantA2AError(t, r, 400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION")
}

// The extended card (capabilities.extendedAgentCard) keeps the skills the
// caller may use: without delegation only "orders"; with a token for
// orders:read also "order-status". It is signed by the Brand's key and
// the public card is never filtered.
func TestExtendedCardFilteredByGrants(t *testing.T) {
	e := start(t, nil)
	b := e.example()
	skills := func(extra ...string) []string {
		r := do(t, http.MethodGet, b.InterfaceURL+"/extendedAgentCard", nil, append([]string{"Authorization", "Bearer " + e.jwt("u1"), "A2A-Version", "1.0"}, extra...)...)
		if r.status != 200 {
			t.Fatalf("extended card: %d %s", r.status, r.body)
		}
		if _, err := discovery.Verify(t.Context(), testClient, b.SiteURL+"/.well-known/agent-card.json", r.body); err != nil {
			t.Fatalf("extended card signature: %v", err)
		}
		c, err := discovery.Parse(r.body)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, s := range c.Card.Skills {
			ids = append(ids, s.ID)
		}
		return ids
	}
	if got := skills(); !slices.Equal(got, []string{"orders"}) {
		t.Errorf("without login: skills %v", got)
	}
	tok := e.login(b, "u1", "orders:read", jane)["access_token"].(string)
	if got := skills("X-A2A-User-Delegation", "Bearer "+tok); !slices.Equal(got, []string{"orders", "order-status"}) {
		t.Errorf("with orders:read: skills %v", got)
	}
	pub, err := discovery.Parse(do(t, http.MethodGet, b.CardURL, nil).body)
	if err != nil {
		t.Fatal(err)
	}
	if len(pub.Card.Skills) != 4 || !slices.Equal(pub.Card.Skills[2].SecurityRequirements[0]["userDelegation"], []string{"orders:cancel"}) {
		t.Errorf("public card skills %+v", pub.Card.Skills)
	}
	r := do(t, http.MethodGet, e.other().InterfaceURL+"/extendedAgentCard", nil, "Authorization", "Bearer "+e.jwt("u1"))
	wantA2AError(t, r, 400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION")
}
