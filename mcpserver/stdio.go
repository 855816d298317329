package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
// newline-delimited JSON over in and out, with one difference. The SDK's
// transport ends the session at the first line it cannot decode, dropping
// the answers still owed; here a line that is not JSON is answered with a
// JSON-RPC parse error (-32700, id null), one that is JSON but no JSON-RPC
// message (or longer than the SDK's line limit) with an invalid request
// (-32600), and the server goes on with the next line. Blank lines are
// skipped. The answers and the SDK's messages are written whole, one at a
// time. At the end of input (a client that closes stdin, or `printf … |
// pact mcp`) the requests already read are answered before the session
// ends (for up to a minute), where the SDK's transport would drop them.
func StdioTransport(in io.Reader, out io.Writer, log func(format string, a ...any)) mcp.Transport {
	o := &owed{ids: map[string]bool{}, done: make(chan struct{}, 1)}
	w := &lockedWriter{w: out, owed: o}
	return &mcp.IOTransport{Reader: io.NopCloser(&lineFilter{in: bufio.NewReaderSize(in, 64<<10), out: w, log: log, owed: o}), Writer: w}
}

// owed are the ids of the requests read and not yet answered.
type owed struct {
	mu   sync.Mutex
	ids  map[string]bool
	done chan struct{} // signalled when an answer is written
}

// idKey is an id as a map key: its JSON type and value ("" for none).
func idKey(raw json.RawMessage) string {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil || v == nil {
		return ""
	}
	return fmt.Sprintf("%T:%v", v, v)
}

// frame is the part of a JSON-RPC message the bookkeeping reads.
type frame struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		RequestID json.RawMessage `json:"requestId"`
	} `json:"params"`
}

// frames decodes line as one message or a batch.
func frames(line []byte) []frame {
	var fs []frame
	if json.Unmarshal(line, &fs) == nil {
		return fs
	}
	var f frame
	if json.Unmarshal(line, &f) == nil {
		return []frame{f}
	}
	return nil
}

// read notes the requests in an inbound line (and forgets the cancelled).
func (o *owed) read(line []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, f := range frames(line) {
		switch {
		case f.Method == "notifications/cancelled":
			delete(o.ids, idKey(f.Params.RequestID))
		case f.Method != "":
			if k := idKey(f.ID); k != "" {
				o.ids[k] = true
			}
		}
	}
}

// wrote notes the answers in an outbound message.
func (o *owed) wrote(p []byte) {
	o.mu.Lock()
	for _, f := range frames(bytes.TrimSpace(p)) {
		if f.Method == "" {
			delete(o.ids, idKey(f.ID))
		}
	}
	o.mu.Unlock()
	select {
	case o.done <- struct{}{}:
	default:
	}
}

// wait returns once every request read has been answered, or after
// drainTimeout.
func (o *owed) wait() {
	deadline := time.After(drainTimeout)
	for {
		o.mu.Lock()
		n := len(o.ids)
		o.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-o.done:
		case <-deadline:
			return
		}
	}
}

// lockedWriter serialises whole writes: the SDK writes one message per
// Write, and so does lineFilter.
type lockedWriter struct {
	mu   sync.Mutex
	w    io.Writer
	owed *owed
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	n, err := l.w.Write(p)
	l.mu.Unlock()
	l.owed.wrote(p)
	return n, err
}

func (l *lockedWriter) Close() error { return nil }

// lineFilter passes on the lines of in that are JSON-RPC messages (each
// with its newline) and answers the others itself.
type lineFilter struct {
	in   *bufio.Reader
	out  io.Writer
	log  func(format string, a ...any)
	owed *owed
	buf  []byte // the rest of the line being passed on
	err  error  // of in, returned once buf is drained
}

func (f *lineFilter) Read(p []byte) (int, error) {
	for len(f.buf) == 0 {
		if f.err != nil {
			if errors.Is(f.err, io.EOF) {
				f.owed.wait()
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
		f.owed.read(trimmed)
		f.buf = append(trimmed, '\n')
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

// check says why line is not a JSON-RPC message (code 0: it is one), and
// the id to answer with when the line has a usable one.
func check(line []byte) (code int, msg string, id any) {
	if !json.Valid(line) {
		return codeParseError, "Parse error: the line is not JSON", nil
	}
	if line[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(line, &batch) != nil || len(batch) == 0 {
			return codeInvalidRequest, "Invalid Request: an empty or malformed batch", nil
		}
		for _, raw := range batch {
			if _, err := jsonrpc.DecodeMessage(raw); err != nil {
				return codeInvalidRequest, "Invalid Request: a batch element is not a JSON-RPC 2.0 message", nil
			}
		}
		return 0, "", nil
	}
	if _, err := jsonrpc.DecodeMessage(line); err != nil {
		var probe struct {
			ID any `json:"id"`
		}
		json.Unmarshal(line, &probe)
		switch probe.ID.(type) {
		case string, float64:
			id = probe.ID
		}
		return codeInvalidRequest, "Invalid Request: not a JSON-RPC 2.0 message", id
	}
	return 0, "", nil
}

// reject answers a line that was not a message, and tells the log.
func (f *lineFilter) reject(code int, msg string, id any) {
	resp, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	f.out.Write(append(resp, '\n'))
	if f.log != nil {
		f.log("%s (skipped)", msg)
	}
}
