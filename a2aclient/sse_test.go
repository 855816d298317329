package a2aclient

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func readAll(t *testing.T, r *SSEReader) ([]SSEEvent, error) {
	t.Helper()
	var out []SSEEvent
	for {
		ev, err := r.Next()
		if err != nil {
			return out, err
		}
		out = append(out, *ev)
	}
}

func TestSSEReaderParsesTheStandardForms(t *testing.T) {
	in := "\uFEFF: comment\r\nevent: x\r\nid: 7\r\ndata: one\r\ndata:two\r\n\r\n" + // CRLF, two data lines
		"data: cr\r\rdata: lf\n\n" + // CR alone, then LF
		"retry: 10\nunknown: y\n\n" + // no data: nothing dispatched
		"data\n\n" + // a field with no colon: empty data
		"data: dropped" // no blank line at the end: not dispatched
	evs, err := readAll(t, NewSSEReader(strings.NewReader(in), 0, 0, 0))
	if !errors.Is(err, io.EOF) {
		t.Fatalf("err = %v, want EOF", err)
	}
	want := []SSEEvent{{Type: "x", ID: "7", Data: []byte("one\ntwo")}, {Data: []byte("cr")}, {Data: []byte("lf")}, {Data: []byte("")}}
	if len(evs) != len(want) {
		t.Fatalf("got %d events %q, want %d", len(evs), evs, len(want))
	}
	for i := range want {
		if evs[i].Type != want[i].Type || evs[i].ID != want[i].ID || !bytes.Equal(evs[i].Data, want[i].Data) {
			t.Errorf("event %d = %+v, want %+v", i, evs[i], want[i])
		}
	}
}

func TestSSEReaderLimits(t *testing.T) {
	_, err := readAll(t, NewSSEReader(strings.NewReader("data: "+strings.Repeat("a", 100)+"\n\n"), 64, 0, 0))
	var le *SSELimitError
	if !errors.As(err, &le) || le.What != "event" || le.Limit != 64 {
		t.Fatalf("long event: err = %v, want an event SSELimitError of 64", err)
	}
	// Many short data lines add up to one event too large.
	_, err = readAll(t, NewSSEReader(strings.NewReader(strings.Repeat("data: abcdefgh\n", 20)+"\n"), 64, 0, 0))
	if !errors.As(err, &le) || le.What != "event" {
		t.Fatalf("many data lines: err = %v, want an event SSELimitError", err)
	}
	evs, err := readAll(t, NewSSEReader(strings.NewReader(strings.Repeat("data: abc\n\n", 100)), 64, 200, 0))
	if !errors.As(err, &le) || le.What != "stream" || le.Limit != 200 {
		t.Fatalf("long stream: err = %v, want a stream SSELimitError of 200", err)
	}
	if len(evs) == 0 || len(evs) >= 100 {
		t.Fatalf("long stream gave %d events before the limit", len(evs))
	}
	if !strings.Contains(le.Error(), "200 bytes") {
		t.Errorf("limit error %q does not name the limit", le.Error())
	}
}

func TestSSEReaderStall(t *testing.T) {
	pr, pw := io.Pipe()
	go func() {
		io.WriteString(pw, "data: first\n\n")
		// then nothing, never closed by the writer
	}()
	r := NewSSEReader(pr, 0, 0, 100*time.Millisecond)
	defer r.Close()
	ev, err := r.Next()
	if err != nil || string(ev.Data) != "first" {
		t.Fatalf("first event = %v, %v", ev, err)
	}
	_, err = r.Next()
	if !errors.Is(err, ErrStalled) {
		t.Fatalf("err = %v, want ErrStalled", err)
	}
}

// FuzzSSE checks the reader's promises on any input: it never panics, no
// event's data exceeds the event limit, it stops at the stream limit, and
// every dispatched event's data is made of data-line values (no CR or LF
// other than the "\n" joining lines).
func FuzzSSE(f *testing.F) {
	for _, s := range []string{
		"data: a\n\n", "data: a\r\ndata: b\r\n\r\n", "\uFEFFdata:x\r\r", ": c\nevent: e\nid: 1\ndata: {}\n\n",
		"data: " + strings.Repeat("z", 80) + "\n\n", "data\n\ndata:\n\n", "\r\n\r\n\n\r", "id: a\x00b\ndata: c\n\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		const maxEvent, maxTotal = 64, 512
		r := NewSSEReader(bytes.NewReader(in), maxEvent, maxTotal, 0)
		n := 0
		for {
			ev, err := r.Next()
			if err != nil {
				var le *SSELimitError
				if errors.Is(err, ErrNotSSE) && n > 0 {
					t.Fatalf("ErrNotSSE after %d events", n)
				}
				if !errors.Is(err, io.EOF) && !errors.Is(err, ErrNotSSE) && !errors.As(err, &le) {
					t.Fatalf("unexpected error %v", err)
				}
				if errors.As(err, &le) && le.What == "stream" && len(in) <= maxTotal {
					t.Fatalf("stream limit hit on %d bytes", len(in))
				}
				return
			}
			n++
			if len(ev.Data) > maxEvent {
				t.Fatalf("event of %d bytes passed the %d limit", len(ev.Data), maxEvent)
			}
			if bytes.ContainsRune(ev.Data, '\r') {
				t.Fatalf("event data holds a CR: %q", ev.Data)
			}
			if strings.ContainsAny(ev.ID, "\x00\r\n") || strings.ContainsAny(ev.Type, "\r\n") {
				t.Fatalf("bad id or type %q %q", ev.ID, ev.Type)
			}
			if n > len(in) {
				t.Fatalf("%d events from %d bytes", n, len(in))
			}
		}
	})
}
