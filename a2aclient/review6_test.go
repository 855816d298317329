package a2aclient

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Review of #23: a stream that sends keep-alive comments but never an event
// stalls like a silent one; it used to wait forever, the comments resetting
// the stall timer.
func TestSSEReaderCommentsDoNotHoldOffTheStall(t *testing.T) {
	pr, pw := io.Pipe()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		io.WriteString(pw, "data: first\n\n")
		for {
			select {
			case <-stop:
				pw.Close()
				return
			case <-time.After(10 * time.Millisecond):
				if _, err := io.WriteString(pw, ": keep-alive\n"); err != nil {
					return
				}
			}
		}
	}()
	r := NewSSEReader(pr, 0, 0, 100*time.Millisecond)
	defer r.Close()
	if ev, err := r.Next(); err != nil || string(ev.Data) != "first" {
		t.Fatalf("first event = %v, %v", ev, err)
	}
	done := make(chan error, 1)
	go func() { _, err := r.Next(); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrStalled) {
			t.Fatalf("err = %v, want ErrStalled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a stream of comments only was not taken as stalled")
	}
}

// Review of #23: a body sent as text/event-stream that is not Server-Sent
// Events (an HTML page) is NOT_A_STREAM, asked once (the caller then sends
// by message:send), not a broken stream sent again four times and reported
// as "could not reach the Provider".
func TestStreamEventStreamTypeWithAnotherBody(t *testing.T) {
	page := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "<html><body>\x1b[2JNot SSE</body></html>\n")
	}
	rec, _, _, err := runStream(t, nil, page)
	if !IsReason(err, ReasonNotStream) || !CannotStream(err) {
		t.Fatalf("err = %v, want NOT_A_STREAM", err)
	}
	if len(rec.paths) != 1 {
		t.Fatalf("%d requests, want 1", len(rec.paths))
	}
	// An empty stream is still a stream cut before its first event.
	empty := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
	}
	if _, _, _, err := runStream(t, nil, empty); !IsReason(err, ReasonNetwork) {
		t.Fatalf("empty stream: err = %v, want a network error (sent again)", err)
	}
}

func TestSSEReaderNotSSE(t *testing.T) {
	r := NewSSEReader(strings.NewReader("{\"message\":{}}\n"), 0, 0, 0)
	if _, err := r.Next(); !errors.Is(err, ErrNotSSE) {
		t.Fatalf("err = %v, want ErrNotSSE", err)
	}
	r = NewSSEReader(strings.NewReader(": hi\n"), 0, 0, 0)
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("a comment only: err = %v, want io.EOF", err)
	}
}
