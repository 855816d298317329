package a2aclient

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// The limit of one stream event when nothing is configured (a zero
// Client.MaxStreamEvent, NewSSEReader with 0) is the documented 1 MiB of
// data (DefaultMaxStreamEvent): an event just under it is read, one byte
// over it is refused, naming the limit. (The other tests set their own
// limits, so a raised default would pass them.)
func TestStreamDefaultEventLimitIsOneMiB(t *testing.T) {
	chunk := func(n int) string { return fmt.Sprintf(evChunk, strings.Repeat("x", n)) }
	overhead := len(chunk(0))

	under := chunk(1<<20 - 64 - overhead)
	_, resp, _, err := runStream(t, nil, sse(0, evTask, under, evDone))
	if err != nil || resp == nil {
		t.Fatalf("an event of 1 MiB - 64 bytes: %v, want it read", err)
	}

	over := chunk(1<<20 + 1 - overhead)
	_, _, _, err = runStream(t, nil, sse(0, evTask, over, evDone))
	if !IsReason(err, ReasonTooLarge) || !strings.Contains(err.Error(), "1 MiB") {
		t.Fatalf("an event of 1 MiB + 1 byte: err = %v, want STREAM_TOO_LARGE naming 1 MiB", err)
	}

	// The reader alone, with its defaults.
	for _, c := range []struct {
		size int
		ok   bool
	}{{1<<20 - 64, true}, {1<<20 + 1, false}} {
		r := NewSSEReader(strings.NewReader("data: "+strings.Repeat("y", c.size)+"\n\n"), 0, 0, 0)
		ev, err := r.Next()
		if c.ok && (err != nil || len(ev.Data) != c.size) {
			t.Errorf("NewSSEReader defaults, %d bytes: %v, want the event", c.size, err)
		}
		var le *SSELimitError
		if !c.ok && (err == io.EOF || !errors.As(err, &le) || le.Limit != 1<<20) {
			t.Errorf("NewSSEReader defaults, %d bytes: %v, want an SSELimitError of 1 MiB", c.size, err)
		}
	}
}
