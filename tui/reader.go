package tui

import (
	"bytes"
	"io"
	"os"
	"unicode/utf8"
)

// pendingReader is the terminal as bubbletea reads it, holding back the end of a read that
// stops inside a character or inside an answer of the terminal until the next read
// completes it.
//
// bubbletea's input decoder (ultraviolet's TerminalReader) gives up on an incomplete
// sequence after 50 ms (DefaultEscTimeout, which bubbletea v2.1.1 does not let a program
// set): the first half of a multibyte character whose second half comes later was
// dropped, and the first half of a late background-colour answer (OSC 11) was taken as
// keys and the second half typed as text ("1e1e/1e1e/1e1e"). Held back here, the decoder
// only ever sees whole characters and whole answers, however long the gap.
//
// What cannot be told apart from a key press is not held: a lone Esc, or Esc and ']' with
// nothing after them (Alt+]). An OSC answer split right there is still seen as keys.
//
// It keeps the *os.File's other methods (Fd, Name, Write, Close), so bubbletea still puts
// the terminal in raw mode and reads it through its cancellable reader.
type pendingReader struct {
	*os.File
	held []byte
}

// maxHeldOSC is the longest unfinished OSC sequence held back; longer ones are passed on.
const maxHeldOSC = 1024

func (r *pendingReader) Read(p []byte) (int, error) {
	if len(r.held) >= len(p) {
		n := copy(p, r.held)
		r.held = r.held[n:]
		return n, nil
	}
	n := copy(p, r.held)
	r.held = r.held[:0]
	m, err := r.File.Read(p[n:])
	n += m
	if err != nil {
		return n, err
	}
	k := incompleteTail(p[:n])
	r.held = append(r.held, p[n-k:n]...)
	return n - k, nil
}

// incompleteTail is the number of bytes at the end of b that start a character or an OSC
// sequence (ESC ] followed by a digit) not finished in b.
func incompleteTail(b []byte) int {
	if i := bytes.LastIndex(b, []byte("\x1b]")); i >= 0 && len(b)-i <= maxHeldOSC &&
		i+2 < len(b) && b[i+2] >= '0' && b[i+2] <= '9' {
		rest := b[i+2:]
		if bytes.IndexByte(rest, '\a') < 0 && bytes.IndexByte(rest, 0x1b) < 0 {
			return len(b) - i
		}
	}
	// A UTF-8 lead byte among the last three bytes, followed only by continuation bytes,
	// fewer than it announces.
	for i := len(b) - 1; i >= 0 && i >= len(b)-3; i-- {
		c := b[i]
		if c < 0x80 {
			return 0
		}
		if c >= 0xC0 {
			need := 2
			switch {
			case c >= 0xF8:
				return 0
			case c >= 0xF0:
				need = 4
			case c >= 0xE0:
				need = 3
			}
			if len(b)-i < need && !utf8.FullRune(b[i:]) {
				return len(b) - i
			}
			return 0
		}
	}
	return 0
}

// wrapInput returns the terminal input bubbletea should read: an *os.File is wrapped in a
// pendingReader, anything else is returned as is.
func wrapInput(in io.Reader) io.Reader {
	if f, ok := in.(*os.File); ok {
		return &pendingReader{File: f}
	}
	return in
}
