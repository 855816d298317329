package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// JSON-RPC 2.0 error codes for input that is not a request (§5.1).
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
)

// maxLine bounds one inbound message, as the SDK's stdio transport does.
const maxLine = mcp.DefaultMaxLineLength

// drainTimeout bounds how long the end of input waits for the answers
// still owed.
const drainTimeout = time.Minute

// StdioTransport is the stdio transport of `pact mcp`: the SDK's
// newline-delimited JSON over in and out, held to JSON-RPC 2.0 (§4, §5)
// and MCP 2025-11-25 where the SDK's own transport is not:
//
//   - A line that is not JSON is answered with a parse error (-32700, id
//     null); JSON that is no JSON-RPC message, a message longer than the
//     SDK's line limit (16 MiB), a batch (a JSON array: MCP has no batches
//     since 2025-06-18), a request whose id is null or neither a string
//     nor a number, with an invalid request (-32600). The line is skipped
//     and the session goes on; the SDK's transport would end it. A
//     response with id null (JSON-RPC's answer to what it could not read)
//     is skipped unanswered: a response is never answered.
//   - Every id is echoed exactly as the client wrote it (1.5 stays 1.5,
//     9007199254740993 keeps its digits): the SDK only sees an id of
//     pact's own ("pact-N") and the answer gets the client's bytes back.
//   - A request the client cancels (notifications/cancelled) is not
//     answered: the SDK cancels its work (the tool's context), and the
//     answer it may still produce is dropped here.
//   - Blank lines are skipped; each message is written whole, one at a
//     time. At the end of input (a client that closes stdin, or `printf
//     … | pact mcp`) the requests already read are answered before the
//     session ends (for up to a minute), where the SDK's would drop them.
func StdioTransport(in io.Reader, out io.Writer, log func(format string, a ...any)) mcp.Transport {
	b := newBook(log)
	w := &lockedWriter{w: out, book: b}
	return &mcp.IOTransport{Reader: io.NopCloser(&lineFilter{in: bufio.NewReaderSize(in, 64<<10), out: w, log: log, book: b}), Writer: w}
}

// idPrefix starts the ids the SDK sees in place of the client's.
const idPrefix = "pact-"

// book keeps the client's ids: the requests read and not yet answered, by
// the id the SDK sees, with the id as the client wrote it.
type book struct {
	mu        sync.Mutex
	next      int
	raw       map[string]json.RawMessage // pact's id → the client's, as received
	byClient  map[string]string          // the client's id (its bytes) → pact's, the latest
	cancelled map[string]bool            // pact's ids the client cancelled
	done      chan struct{}              // signalled when an answer is written or a request cancelled
	log       func(format string, a ...any)
}

func newBook(log func(format string, a ...any)) *book {
	return &book{raw: map[string]json.RawMessage{}, byClient: map[string]string{}, cancelled: map[string]bool{}, done: make(chan struct{}, 1), log: log}
}

func (b *book) signal() {
	select {
	case b.done <- struct{}{}:
	default:
	}
}

// in notes an inbound message (one object, checked) and returns it as the
// SDK is to see it: a request with pact's id in place of the client's, a
// cancellation naming pact's id. Anything else is returned as is.
func (b *book) in(line []byte) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil {
		return line
	}
	if _, isRequest := m["method"]; !isRequest {
		return line // a response to one of the server's requests
	}
	var method string
	json.Unmarshal(m["method"], &method)
	b.mu.Lock()
	defer b.mu.Unlock()
	if method == "notifications/cancelled" {
		var p map[string]json.RawMessage
		if json.Unmarshal(m["params"], &p) != nil {
			return line
		}
		ours, ok := b.byClient[string(bytes.TrimSpace(p["requestId"]))]
		if !ok {
			return line
		}
		b.cancelled[ours] = true
		delete(b.byClient, string(bytes.TrimSpace(p["requestId"])))
		p["requestId"], _ = json.Marshal(ours)
		m["params"], _ = json.Marshal(p)
		b.signal()
		return remarshal(m, line)
	}
	id, ok := m["id"]
	if !ok {
		return line // a notification
	}
	b.next++
	ours := fmt.Sprintf("%s%d", idPrefix, b.next)
	b.raw[ours] = append(json.RawMessage(nil), bytes.TrimSpace(id)...)
	b.byClient[string(bytes.TrimSpace(id))] = ours
	m["id"], _ = json.Marshal(ours)
	return remarshal(m, line)
}

// out returns the outbound message p as the client is to see it: an
// answer with the client's id restored; drop when it answers a cancelled
// request (or the client never asked it).
func (b *book) out(p []byte) (msg []byte, drop bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(p, &m) != nil {
		return p, false
	}
	if _, isRequest := m["method"]; isRequest {
		return p, false // the server's own requests and notifications
	}
	var ours string
	if json.Unmarshal(m["id"], &ours) != nil || !strings.HasPrefix(ours, idPrefix) {
		return p, false
	}
	b.mu.Lock()
	raw, known := b.raw[ours]
	cancelled := b.cancelled[ours]
	delete(b.raw, ours)
	delete(b.cancelled, ours)
	if known && b.byClient[string(raw)] == ours {
		delete(b.byClient, string(raw))
	}
	b.mu.Unlock()
	b.signal()
	if cancelled || !known {
		if cancelled && b.log != nil {
			b.log("request %s was cancelled by the client: its answer is not sent", raw)
		}
		return nil, true
	}
	m["id"] = raw
	return append(remarshal(m, p), '\n'), false
}

// owedCount is how many requests read are neither answered nor cancelled.
func (b *book) owedCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for ours := range b.raw {
		if !b.cancelled[ours] {
			n++
		}
	}
	return n
}

// wait returns once every request read has been answered or cancelled,
// or after drainTimeout.
func (b *book) wait() {
	deadline := time.After(drainTimeout)
	for b.owedCount() > 0 {
		select {
		case <-b.done:
		case <-deadline:
			return
		}
	}
}

// remarshal is m as JSON (members in key order, strings not re-escaped),
// or orig if that fails.
func remarshal(m map[string]json.RawMessage, orig []byte) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(m) != nil {
		return orig
	}
	return bytes.TrimSpace(buf.Bytes())
}

// lockedWriter serialises whole writes (the SDK writes one message per
// Write, and so does lineFilter) and gives each answer its client's id.
type lockedWriter struct {
	mu   sync.Mutex
	w    io.Writer
	book *book
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	msg, drop := l.book.out(bytes.TrimSpace(p))
	if drop {
		return len(p), nil
	}
	if len(msg) == 0 || msg[len(msg)-1] != '\n' {
		msg = append(bytes.TrimSpace(msg), '\n')
	}
	l.mu.Lock()
	_, err := l.w.Write(msg)
	l.mu.Unlock()
	return len(p), err
}

func (l *lockedWriter) Close() error { return nil }

// raw writes a message of the filter's own (an answer to a line that was
// no message), untouched.
func (l *lockedWriter) raw(p []byte) {
	l.mu.Lock()
	l.w.Write(p)
	l.mu.Unlock()
}

// lineFilter passes on the lines of in that are JSON-RPC messages (each
// with its newline, ids replaced by pact's) and answers the others itself.
type lineFilter struct {
	in   *bufio.Reader
	out  *lockedWriter
	log  func(format string, a ...any)
	book *book
	buf  []byte // the rest of the line being passed on
	err  error  // of in, returned once buf is drained
}

func (f *lineFilter) Read(p []byte) (int, error) {
	for len(f.buf) == 0 {
		if f.err != nil {
			if errors.Is(f.err, io.EOF) {
				f.book.wait()
			}
			return 0, f.err
		}
		line, tooLong, err := readLine(f.in)
		f.err = err
		if tooLong {
			f.reject(codeInvalidRequest, fmt.Sprintf("Invalid Request: a message longer than %d bytes", maxLine), nil)
			continue
		}
		trimmed := bytes.TrimSpace(line)
		if len(trimmed) == 0 {
			continue
		}
		if code, msg, id := check(trimmed); code != 0 {
			f.reject(code, msg, id)
			continue
		}
		f.buf = append(f.book.in(trimmed), '\n')
	}
	n := copy(p, f.buf)
	f.buf = f.buf[n:]
	return n, nil
}

// readLine reads one line without its newline. A line longer than maxLine
// is read to its end and dropped (tooLong). err is that of in (io.EOF at
// the end), with the last line, if unterminated, still returned.
func readLine(r *bufio.Reader) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			line = append(line, chunk...)
			if len(line) > maxLine+1 {
				tooLong, line = true, nil
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, tooLong, err
	}
}

// check says why line is not a JSON-RPC message of MCP (code 0: it is
// one), and the id to answer with, as received, when the line has a
// usable one (nil: null).
func check(line []byte) (code int, msg string, id json.RawMessage) {
	if !json.Valid(line) {
		return codeParseError, "Parse error: the line is not JSON", nil
	}
	if line[0] == '[' {
		return codeInvalidRequest, "Invalid Request: a batch (JSON array); MCP takes one message per line", nil
	}
	var m map[string]json.RawMessage
	if line[0] != '{' || json.Unmarshal(line, &m) != nil {
		return codeInvalidRequest, "Invalid Request: not a JSON-RPC 2.0 message", nil
	}
	if raw, ok := m["id"]; ok {
		raw = bytes.TrimSpace(raw)
		switch {
		case string(raw) == "null" && !hasMethod(m):
			// A response with id null (an error the client could not tie
			// to a request): a response is never answered.
			return codeDrop, "a response with id null", nil
		case string(raw) == "null":
			return codeInvalidRequest, "Invalid Request: the id is null (give a string or a number)", nil
		case raw[0] == '"' || raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9'):
			id = raw
		default:
			return codeInvalidRequest, "Invalid Request: the id must be a string or a number", nil
		}
	}
	if _, err := jsonrpc.DecodeMessage(line); err != nil {
		return codeInvalidRequest, "Invalid Request: not a JSON-RPC 2.0 message", id
	}
	return 0, "", nil
}

func hasMethod(m map[string]json.RawMessage) bool {
	_, ok := m["method"]
	return ok
}

// codeDrop is check's verdict for a line that is skipped unanswered.
const codeDrop = -1

// reject answers a line that was not a message, and tells the log.
func (f *lineFilter) reject(code int, msg string, id json.RawMessage) {
	if code == codeDrop {
		if f.log != nil {
			f.log("%s (skipped, not answered)", msg)
		}
		return
	}
	if id == nil {
		id = json.RawMessage("null")
	}
	resp, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	f.out.raw(append(resp, '\n'))
	if f.log != nil {
		f.log("%s (skipped)", msg)
	}
}
