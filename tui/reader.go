package tui

import (
	"io"
	"os"
	"slices"
	"time"
	"unicode/utf8"
)

// pendingReader is the terminal as bubbletea reads it, holding back the end of a read that
// stops inside a character or inside an answer of the terminal until the next read
// completes it.
//
// bubbletea's input decoder (ultraviolet's TerminalReader) gives up on an incomplete
// sequence after 50 ms (DefaultEscTimeout, which bubbletea v2.1.1 does not let a program
// set): the first half of a multibyte character whose second half comes later was
// dropped, and the first half of a late terminal answer (OSC 11 "ESC ] 11 ; rgb:…", or a
// CSI answer such as "ESC [ ? 2026 ; 2 $ y") was taken as keys and the second half typed
// as text. Held back here, the decoder only ever sees whole characters and whole answers.
//
// What is held is bounded: a held sequence that does not complete within holdLimit, or
// that is followed by a byte that cannot continue it (a CR or any control byte, a second
// ESC not starting ST), is released as what the User typed: its ESC ] or ESC [ as the key
// Alt+] or Alt+[, the rest as text. While it holds, Read waits (at most holdLimit) for
// the rest instead of returning, so that nothing stays held when no more input comes.
//
// What cannot be told apart from a key press is not held: a lone Esc, or Esc and ']' or
// '[' with nothing after them (Alt+], Alt+[). An answer split right there is still seen as
// keys.
//
// It keeps the *os.File's other methods (Fd, Name, Write, Close), so bubbletea still puts
// the terminal in raw mode and reads it through its cancellable reader.
type pendingReader struct {
	*os.File
	out   []byte        // ready for the decoder, waiting for a Read with room
	err   error         // a read error that comes after out
	limit time.Duration // holdLimit; tests shorten it
	burst time.Time     // when the last read of more than one byte (a burst) was returned
	// cr is an Enter that ended the last read while more input was coming: held (not yet
	// in out) until the next read tells whether it ends the burst (see burstNewlines).
	cr bool
	// wait reports whether the file has input within d (false: it has not).
	wait func(f *os.File, d time.Duration) bool
}

// maxHeld is the longest unfinished sequence held back; longer ones are released.
const maxHeld = 1024

// holdLimit is how long an unfinished sequence is held: a terminal's answer arrives in
// pieces a few milliseconds (on a slow link a few hundred) apart, a person's next key is
// the User typing.
const holdLimit = 500 * time.Millisecond

func (r *pendingReader) Read(p []byte) (int, error) {
	for len(r.out) == 0 && r.err == nil {
		r.fill(len(p))
		r.out = r.burstNewlines(r.out)
		if !r.cr {
			break
		}
		// A held Enter and nothing else: the next read, which waitInput saw coming, decides.
	}
	if len(r.out) > 0 {
		n := copy(p, r.out)
		r.out = r.out[n:]
		return n, nil
	}
	err := r.err
	r.err = nil
	return 0, err
}

// fill reads the file into r.out, reading on (for at most r.limit per sequence) while what
// was read ends inside a character or a terminal answer.
func (r *pendingReader) fill(size int) {
	buf := make([]byte, max(size, 256))
	n, err := r.File.Read(buf)
	if err != nil {
		r.out, r.err = append(r.out, buf[:n]...), err
		return
	}
	data := buf[:n]
	start := time.Now()
	for {
		ready, tail := settle(data)
		r.out = append(r.out, ready...)
		if len(tail) == 0 {
			return
		}
		if len(ready) > 0 { // another sequence than the one held before: its own time
			start = time.Now()
		}
		left := r.limit - time.Since(start)
		if left <= 0 || !r.wait(r.File, left) {
			r.out = append(r.out, release(tail)...)
			return
		}
		held := append([]byte(nil), tail...) // tail is in buf, which the next read fills
		m, err := r.File.Read(buf)
		data = append(held, buf[:m]...)
		if err != nil {
			ready, tail := settle(data)
			r.out = append(append(r.out, ready...), release(tail)...)
			r.err = err
			return
		}
	}
}

// burstGap is how long after a burst that ends with Enter more input makes that Enter part
// of the burst: a terminal writes a paste in pieces well under a millisecond apart, a person
// never types two keys that fast.
const burstGap = 15 * time.Millisecond

// burstNewlines turns every Enter (CR) inside a burst of input (what one read returned: a
// paste without bracketed paste, an auto-typer) into a newline (LF, which the decoder reads
// as Ctrl+J, the chat's Newline key), so that a pasted text stays one message. A CR LF pair
// becomes one LF. An Enter is still Enter when it is alone in its read, when it ends the
// burst (nothing follows within burstGap), when an escape sequence follows it (a terminal's
// answer, a focus event, an arrow key) or when Esc precedes it (Alt+Enter).
//
// A burst may come in several reads. An Enter that ends a read while more input comes
// within burstGap is held back (r.cr) and decided by the next read, which it is put in
// front of: printable text of the same burst makes it a newline, an escape sequence (the
// terminal answering a query right after the User's Enter) leaves it Enter. So the
// look-ahead is bounded: one byte, for at most burstGap.
func (r *pendingReader) burstNewlines(b []byte) []byte {
	inBurst := time.Since(r.burst) < burstGap // the previous read was a burst, just now
	if r.cr {
		r.cr = false
		b = append([]byte{'\r'}, b...)
		inBurst = true
	}
	if len(b) > 1 {
		defer func() { r.burst = time.Now() }()
	}
	if !slices.Contains(b, '\r') || (len(b) == 1 && !inBurst) {
		return b
	}
	out := b[:0:0]
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\r' || (i > 0 && b[i-1] == 0x1b) {
			out = append(out, c)
			continue
		}
		switch {
		case i+1 < len(b) && b[i+1] == '\n':
			out = append(out, '\n')
			i++
		case i+1 < len(b) && b[i+1] != 0x1b:
			out = append(out, '\n')
		case i+1 == len(b) && r.err == nil && r.wait != nil && r.wait(r.File, burstGap):
			r.cr = true // the burst goes on in the next read, which decides
		default:
			out = append(out, c)
		}
	}
	return out
}

// settle splits b into what can go to the decoder now and an unfinished tail: a
// character, an OSC sequence (ESC ] digit …) or a CSI answer (ESC [ ? …) that b stops
// inside. An OSC or CSI answer followed by a byte that cannot continue it is rewritten as
// the keys it was typed as (see release).
func settle(b []byte) (ready, tail []byte) {
	out := make([]byte, 0, len(b))
	i := 0
	for i < len(b) {
		if b[i] != 0x1b {
			out = append(out, b[i])
			i++
			continue
		}
		end, state := sequence(b[i:])
		switch state {
		case seqNone:
			out = append(out, b[i])
			i++
		case seqDone:
			out = append(out, b[i:i+end]...)
			i += end
		case seqBroken:
			out = append(out, release(b[i:i+end])...)
			i += end
		case seqOpen:
			if len(b)-i > maxHeld {
				out = append(out, release(b[i:])...)
				return out, nil
			}
			return out, b[i:]
		}
	}
	if k := utf8Tail(out); k > 0 {
		return out[:len(out)-k], out[len(out)-k:]
	}
	return out, nil
}

const (
	seqNone   = iota // not a sequence that is held
	seqDone          // a whole sequence of end bytes
	seqBroken        // end bytes that a byte which cannot continue them follows
	seqOpen          // unfinished at the end of b
)

// sequence looks at b, which starts with ESC, for an OSC sequence (ESC ] digit, printable
// ASCII, then BEL or ESC \) or a CSI answer (ESC [ ?, parameter and intermediate bytes,
// then a final byte).
func sequence(b []byte) (end, state int) {
	switch {
	case len(b) >= 3 && b[1] == ']' && b[2] >= '0' && b[2] <= '9':
		for j := 3; j < len(b); j++ {
			switch c := b[j]; {
			case c == '\a':
				return j + 1, seqDone
			case c == 0x1b:
				if j+1 == len(b) {
					return 0, seqOpen
				}
				if b[j+1] == '\\' {
					return j + 2, seqDone
				}
				return j, seqBroken
			case c < 0x20 || c > 0x7e:
				return j, seqBroken
			}
		}
		return 0, seqOpen
	case len(b) >= 3 && b[1] == '[' && b[2] == '?':
		for j := 3; j < len(b); j++ {
			switch c := b[j]; {
			case c >= 0x20 && c <= 0x3f:
			case c >= 0x40 && c <= 0x7e:
				return j + 1, seqDone
			default:
				return j, seqBroken
			}
		}
		return 0, seqOpen
	}
	return 0, seqNone
}

// release is a held sequence given up on, as the keys it was typed as: ESC ] and ESC [
// become Alt+] and Alt+[ (written as CSI u, which the decoder reads as that one key,
// never as the start of a sequence), the rest stays text. Anything else is passed on.
func release(b []byte) []byte {
	if len(b) >= 2 && b[0] == 0x1b {
		switch b[1] {
		case ']':
			return append([]byte("\x1b[93;3u"), b[2:]...)
		case '[':
			return append([]byte("\x1b[91;3u"), b[2:]...)
		}
	}
	return b
}

// utf8Tail is the number of bytes at the end of b that start a character not finished
// in b: a UTF-8 lead byte among the last three bytes, followed only by continuation
// bytes, fewer than it announces.
func utf8Tail(b []byte) int {
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

// incompleteTail is the number of bytes at the end of b held back until more input comes.
func incompleteTail(b []byte) int {
	_, tail := settle(b)
	return len(tail)
}

// wrapInput returns the terminal input bubbletea should read: an *os.File is wrapped in a
// pendingReader, anything else is returned as is.
func wrapInput(in io.Reader) io.Reader {
	if f, ok := in.(*os.File); ok {
		return &pendingReader{File: f, limit: holdLimit, wait: waitInput}
	}
	return in
}
