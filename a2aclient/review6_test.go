package a2aclient

import (
	"errors"
	"io"
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
