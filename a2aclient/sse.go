package a2aclient

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// SSE limits: the defaults of SSEReader and of Client.Stream.
const (
	// DefaultMaxStreamEvent is the largest data of one stream event (1 MiB).
	DefaultMaxStreamEvent = 1 << 20
	// DefaultMaxStreamSize is the most a whole stream may carry (16 MiB).
	DefaultMaxStreamSize = 16 << 20
	// DefaultStreamStall is how long a stream may send nothing at all
	// (30 s) before it counts as broken.
	DefaultStreamStall = 30 * time.Second
)

// SSEEvent is one dispatched Server-Sent Event (WHATWG HTML §9.2.6): its
// data (the data lines joined by "\n"), its event type ("" = "message")
// and its id.
type SSEEvent struct {
	Type string
	ID   string
	Data []byte
}

// SSELimitError is a stream that broke one of SSEReader's size limits:
// What is "event" (one event's data, or one line) or "stream" (the whole
// stream); Limit is the limit in bytes.
type SSELimitError struct {
	What  string
	Limit int64
}

func (e *SSELimitError) Error() string {
	if e.What == "event" {
		return fmt.Sprintf("one event of the reply stream is larger than %s", sizeWords(e.Limit))
	}
	return fmt.Sprintf("the reply stream is larger than %s", sizeWords(e.Limit))
}

// ErrNotSSE is returned by SSEReader.Next at the end of a stream that had
// bytes but not one comment or standard field (data, event, id, retry): a
// body sent as text/event-stream that is something else (an HTML page, a
// JSON document). An empty stream ends with io.EOF.
var ErrNotSSE = errors.New("the reply stream is not Server-Sent Events")

// ErrStalled is returned by SSEReader.Next when no event arrived for the
// stall timeout: the stream counts as broken.
var ErrStalled = errors.New("the reply stream stopped: no event arrived for too long")

func sizeWords(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// SSEReader reads a text/event-stream (WHATWG HTML §9.2.6) with limits:
// MaxEvent bytes of data per event (and per line), MaxTotal bytes for the
// whole stream, and Stall, the longest wait for the next event (comments
// and keep-alive bytes do not count). Lines end
// in CRLF, LF or CR; a leading BOM is skipped; comments (":…") and
// unknown fields are ignored; "retry" is ignored (the caller decides how
// to reconnect). A final event not followed by a blank line is not
// dispatched, as the standard says.
type SSEReader struct {
	br       *bufio.Reader
	maxEvent int64
	maxTotal int64
	total    int64
	started  bool
	pendCR   bool // the last line ended in CR: skip a following LF
	// sse: a line of the stream was a comment or a field of the standard
	// (data, event, id, retry); see ErrNotSSE.
	sse bool

	stall   time.Duration
	timer   *time.Timer
	mu      sync.Mutex
	stalled bool
}

// NewSSEReader reads r. maxEvent and maxTotal ≤ 0 take the defaults
// (DefaultMaxStreamEvent, DefaultMaxStreamSize). stall > 0 needs r to be
// an io.Closer: r is closed when no event arrives for stall, and Next
// returns ErrStalled; stall ≤ 0 waits forever. Close stops the timer.
func NewSSEReader(r io.Reader, maxEvent, maxTotal int64, stall time.Duration) *SSEReader {
	if maxEvent <= 0 {
		maxEvent = DefaultMaxStreamEvent
	}
	if maxTotal <= 0 {
		maxTotal = DefaultMaxStreamSize
	}
	s := &SSEReader{maxEvent: maxEvent, maxTotal: maxTotal, stall: stall}
	if c, ok := r.(io.Closer); ok && stall > 0 {
		s.timer = time.AfterFunc(stall, func() {
			s.mu.Lock()
			s.stalled = true
			s.mu.Unlock()
			c.Close()
		})
		r = &stallReader{r: r, s: s}
	}
	s.br = bufio.NewReaderSize(r, 4096)
	return s
}

// Close stops the stall timer (it does not close the underlying reader).
func (s *SSEReader) Close() {
	if s.timer != nil {
		s.timer.Stop()
	}
}

type stallReader struct {
	r io.Reader
	s *SSEReader
}

func (sr *stallReader) Read(p []byte) (int, error) {
	n, err := sr.r.Read(p)
	if err != nil {
		sr.s.mu.Lock()
		stalled := sr.s.stalled
		sr.s.mu.Unlock()
		if stalled {
			return n, ErrStalled
		}
	}
	return n, err
}

// Next returns the next event with data. At the end of the stream it
// returns io.EOF (a partial event is dropped); other errors are
// *SSELimitError, ErrStalled or the reader's.
func (s *SSEReader) Next() (*SSEEvent, error) {
	var (
		data    []byte
		hasData bool
		ev      SSEEvent
	)
	for {
		line, err := s.line()
		if err != nil {
			if err == io.EOF && !s.sse && s.total > 0 {
				return nil, ErrNotSSE
			}
			return nil, err
		}
		if len(line) == 0 {
			if !hasData {
				ev = SSEEvent{}
				continue
			}
			data = bytes.TrimSuffix(data, []byte("\n"))
			ev.Data = data
			if s.timer != nil {
				// Only an event holds off the stall: comments (keep-alives)
				// and other bytes do not, or a stream of them never ends.
				s.timer.Reset(s.stall)
			}
			return &ev, nil
		}
		if line[0] == ':' {
			s.sse = true
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			value = bytes.TrimPrefix(value, []byte(" "))
		}
		switch string(field) {
		case "data", "event", "id", "retry":
			s.sse = true
		}
		switch string(field) {
		case "data":
			if int64(len(data)+len(value)+1) > s.maxEvent {
				return nil, &SSELimitError{What: "event", Limit: s.maxEvent}
			}
			data = append(data, value...)
			data = append(data, '\n')
			hasData = true
		case "event":
			ev.Type = string(value)
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				ev.ID = string(value)
			}
		}
	}
}

// line reads one line without its end (CRLF, LF or CR), counting it
// against the limits.
func (s *SSEReader) line() ([]byte, error) {
	var out []byte
	for {
		b, err := s.br.ReadByte()
		if err != nil {
			if err == io.EOF && len(out) > 0 {
				// A last line with no end: the event is incomplete.
				return nil, io.EOF
			}
			return nil, err
		}
		s.total++
		if s.total > s.maxTotal {
			return nil, &SSELimitError{What: "stream", Limit: s.maxTotal}
		}
		if !s.started {
			s.started = true
			// A leading U+FEFF (EF BB BF) is skipped.
			if b == 0xEF {
				if p, _ := s.br.Peek(2); len(p) == 2 && p[0] == 0xBB && p[1] == 0xBF {
					s.br.Discard(2)
					s.total += 2
					continue
				}
			}
		}
		if s.pendCR {
			s.pendCR = false
			if b == '\n' {
				continue
			}
		}
		switch b {
		case '\n':
			return out, nil
		case '\r':
			s.pendCR = true
			return out, nil
		}
		if int64(len(out)) >= s.maxEvent {
			return nil, &SSELimitError{What: "event", Limit: s.maxEvent}
		}
		out = append(out, b)
	}
}
