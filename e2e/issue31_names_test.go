package e2e

import (
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// Issue 31 (10): "Exam\u00adple Bank" (a soft hyphen) next to the pinned "Example Bank" on
// another origin is a look-alike, and its hidden character is named; a card named "…
// signed by HOST ✓" is quoted as the card's claim, with the card's real host, in pact card.
func TestIssue31_10_PactCardFlagsHiddenAndVerdictLikeNames(t *testing.T) {
	t.Parallel()
	named := func(name string) *fakeProvider {
		f := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(agentReply("hello")))
		})
		f.Card = func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(cardJSON(f.Iface(), map[string]any{"name": name})))
		}
		return f
	}
	real, hyphen := named("Example Bank"), named("Exam\u00adple Bank")
	e := hostileEnv(t, real)
	e.must("provider", "add", hyphen.URL(), "--audience", "hostile2", "--json")
	e.must("send", real.URL(), "hi") // the User uses the real one: pinned
	realHost := strings.TrimPrefix(real.URL(), "http://")

	out := e.must("card", hyphen.URL()).stdout
	for _, want := range []string{`“Exam\u00adple Bank”`, "invisible characters", "looks like that of the Brand at " + realHost} {
		if !strings.Contains(out, want) {
			t.Errorf("pact card of a name with a soft hyphen lacks %q:\n%s", want, out)
		}
	}

	verdict := named("Example Bank — signed by " + realHost + " ✓")
	e.must("provider", "add", verdict.URL(), "--audience", "hostile3", "--json")
	host := strings.TrimPrefix(verdict.URL(), "http://")
	out = e.must("card", verdict.URL()).stdout
	first, _, _ := strings.Cut(out, "\n")
	if want := "“Example Bank — signed by " + realHost + " ✓” (the name the card at " + host + " gives itself)"; first != want {
		t.Errorf("pact card's first line reads %q, want %q", first, want)
	}
	if !strings.Contains(out, "pact uses for its own findings") {
		t.Errorf("pact card does not flag a name in pact's words:\n%s", out)
	}
}

// Issue 31 (10): a stream that breaks after part of the reply, whose Provider then answers
// by message:send (the same messageId), printed the whole reply glued to the broken text
// on one line. The broken text's line is ended and pact says the whole reply follows.
func TestIssue31_10_BrokenStreamIsNotGluedToTheReply(t *testing.T) {
	t.Parallel()
	const full = "Order A-10001 is being processed and ships tomorrow."
	f := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(agentReply(full)))
	})
	f.Card = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(cardJSON(f.Iface(), map[string]any{"capabilities": map[string]any{"streaming": true}})))
	}
	var streams atomic.Int32
	f.mux.HandleFunc("/a2a/b1/message:stream", func(w http.ResponseWriter, r *http.Request) {
		if streams.Add(1) > 1 {
			// The same messageId again: this Provider does not stream it twice.
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(agentReply(full)))
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range []string{
			`{"task":{"id":"t-1","contextId":"ctx-1","status":{"state":"TASK_STATE_WORKING"}}}`,
			`{"artifactUpdate":{"taskId":"t-1","contextId":"ctx-1","artifact":{"artifactId":"a-1","parts":[{"text":"Order A-10001 is be"}]}}}`,
		} {
			io.WriteString(w, "data: "+ev+"\n\n")
		}
		w.(http.Flusher).Flush()
		if conn, buf, err := w.(http.Hijacker).Hijack(); err == nil { // the connection breaks
			buf.Flush()
			conn.Close()
		}
	})
	f.mux.HandleFunc("/a2a/b1/tasks/t-1:subscribe", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":{"code":400,"status":"FAILED_PRECONDITION","message":"not subscribable","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"UNSUPPORTED_OPERATION","domain":"a2a-protocol.org"}]}}`)
	})
	e := hostileEnv(t, f)
	r := e.must("send", f.URL(), "where is my order?")
	if !strings.Contains(r.stdout, full) {
		t.Fatalf("stdout %q lacks the reply", r.stdout)
	}
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.Contains(l, full) && l != full {
			t.Errorf("the reply shares its line with other text: %q\nstdout: %q", l, r.stdout)
		}
	}
	if r.stdout != full+"\n" && !strings.Contains(r.stderr, "the whole reply follows") {
		t.Errorf("the broken text stays without a word: stdout %q, stderr %q", r.stdout, r.stderr)
	}
}
