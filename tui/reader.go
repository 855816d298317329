package tui

import (
	"bytes"
	"io"
	"os"
	"time"
	"unicode/utf8"
)

// pendingReader is the terminal as bubbletea reads it. It gives bubbletea's input decoder
// (ultraviolet's TerminalReader) only what the decoder reads right:
//
//   - Whole characters and whole terminal answers. The decoder gives up on an incomplete
//     sequence after 50 ms (DefaultEscTimeout, which bubbletea v2.1.1 does not let a
//     program set): the first half of a multibyte character whose second half came later
//     was dropped, and the first half of a late terminal answer (OSC 11 "ESC ] 11 ; rgb:…",
//     or a CSI answer such as "ESC [ ? 2026 ; 2 $ y") was taken as keys and the second half
//     typed as text. The end of a read that stops inside one is held back until the next
//     read completes it.
//   - The User's characters whole around the terminal's answers. The terminal answers the
//     chat's start-up queries while the User may already be typing: an answer written
//     between the two halves of a character ("caf\xc3", the answer, "\xa9") used to cut
//     the character, and "café" arrived as "caf". An answer found inside a character goes
//     to the decoder before it, and the character waits for its end.
//   - A burst of text as one paste. Text arriving in one read (a paste without bracketed
//     paste, an auto-typer) is wrapped in bracketed-paste markers, so that the chat takes
//     it as one insertion (a 50 KB paste was 50,000 key events: seconds to appear) and as
//     text, never as keys; its Enters are newlines (see shape).
//   - The terminal's own bracketed paste exactly. The decoder drops the escape sequences
//     inside a paste; each ESC in one is passed as pastedEsc, which the chat turns back
//     into ESC and shows visibly.
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
// the terminal in raw mode and reads it through its cancellable reader. That reader waits
// (epoll) for the file to be readable before each Read: so a Read never leaves bytes
// behind for the next one (they would wait for the User's next key). It reads at most
// 1/readShare of the caller's buffer from the file, which what it adds (markers, released
// keys) cannot make overflow.
type pendingReader struct {
	*os.File
	out   []byte        // ready for the decoder, waiting for a Read with room
	err   error         // a read error that comes after out
	limit time.Duration // holdLimit; tests shorten it
	// held is the unfinished end of what was read (a character, an answer, a paste
	// marker), waiting since heldSince for the bytes that finish it.
	held      []byte
	heldSince time.Time
	inPaste   bool      // settle is inside the terminal's bracketed paste
	outPaste  bool      // shape is inside the terminal's bracketed paste
	burst     time.Time // when the last read of more than one byte (a burst) was returned
	// cr is an Enter that ended the last read while more input was coming: held (not yet
	// in out) until the next read tells whether it ends the burst (see shape).
	cr bool
	// wait reports whether the file has input within d (false: it has not).
	wait func(f *os.File, d time.Duration) bool
}

// maxHeld is the longest unfinished sequence held back; longer ones are released.
const maxHeld = 256

// readShare: a Read takes at most len(p)/readShare bytes from the file. What shape and
// settle add is at most 5 bytes per 3 read (a released "ESC ] d" becomes a 7-byte key; a
// two-character run gets 12 bytes of markers) plus one held Enter, so the result fits p.
const readShare = 6

// holdLimit is how long an unfinished sequence is held: a terminal's answer arrives in
// pieces a few milliseconds (on a slow link a few hundred) apart, a person's next key is
// the User typing.
const holdLimit = 500 * time.Millisecond

// pastedEsc stands for an ESC inside the terminal's bracketed paste on its way through the
// decoder, which would drop the escape sequence it starts. A noncharacter: Unicode keeps
// U+FDD0–U+FDEF for a program's internal use, never for text. The chat turns it back into
// ESC (unpaste).
const pastedEsc = "\uFDD0"

var (
	pasteStart = []byte("\x1b[200~")
	pasteEnd   = []byte("\x1b[201~")
)

func (r *pendingReader) Read(p []byte) (int, error) {
	for len(r.out) == 0 && r.err == nil {
		r.fill(len(p))
		r.out = r.shape(r.out)
		// Empty: an Enter held, or a sequence held when this Read's share was read; the
		// next read (waitInput saw it coming) decides.
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
// was read ends inside a character, a terminal answer or a paste marker, and at most
// size/readShare bytes in all.
func (r *pendingReader) fill(size int) {
	budget := max(size/readShare-len(r.held), 16)
	buf := make([]byte, budget)
	for budget > 0 {
		m, err := r.File.Read(buf[:budget])
		budget -= m
		data := append(r.held, buf[:m]...)
		r.held = nil
		ready, tail := r.settle(data)
		r.out = append(r.out, ready...)
		if err != nil {
			r.out = append(r.out, r.giveUp(tail)...)
			r.err = err
			return
		}
		if len(tail) == 0 {
			r.heldSince = time.Time{}
			return
		}
		if len(ready) > 0 || r.heldSince.IsZero() { // another sequence than the one held before: its own time
			r.heldSince = time.Now()
		}
		r.held = append([]byte(nil), tail...) // tail may be in buf, which the next read fills
		left := r.limit - time.Since(r.heldSince)
		if m == 0 || left <= 0 || !r.wait(r.File, left) {
			r.out = append(r.out, r.giveUp(r.held)...)
			r.held, r.heldSince = nil, time.Time{}
			return
		}
	}
	// This Read's share is read and a sequence is held: the next Read (the file has input)
	// goes on with it.
}

// settle splits b into what can go to the decoder now and an unfinished tail: a
// character, an OSC sequence (ESC ] digit …), a CSI answer (ESC [ ? …) or a paste marker
// that b stops inside. An OSC or CSI answer followed by a byte that cannot continue it is
// rewritten as the keys it was typed as (see release); an answer inside a character goes
// before the character. Inside the terminal's bracketed paste, every ESC that does not
// end it becomes pastedEsc.
func (r *pendingReader) settle(b []byte) (ready, tail []byte) {
	out := make([]byte, 0, len(b)+8)
	i := 0
	for i < len(b) {
		if b[i] != 0x1b {
			out = append(out, b[i])
			i++
			continue
		}
		if r.inPaste {
			switch rest := b[i:]; {
			case bytes.HasPrefix(rest, pasteEnd):
				out = append(out, pasteEnd...)
				i += len(pasteEnd)
				r.inPaste = false
			case bytes.HasPrefix(pasteEnd, rest): // b ends inside what may be the end marker
				return out, b[i:]
			default:
				out = append(out, pastedEsc...)
				i++
			}
			continue
		}
		end, state := sequence(b[i:])
		switch state {
		case seqNone:
			out = append(out, b[i])
			i++
		case seqDone:
			seq := b[i : i+end]
			if bytes.Equal(seq, pasteStart) {
				r.inPaste = true
				out = append(out, seq...)
			} else {
				out = lift(out, seq)
			}
			i += end
		case seqBroken:
			out = append(out, release(b[i:i+end])...)
			i += end
		case seqOpen:
			if len(b)-i > maxHeld {
				out = append(out, release(b[i:])...)
				return out, nil
			}
			// A character the unfinished answer came inside waits with it.
			k := utf8Tail(out)
			return out[:len(out)-k], append(out[len(out)-k:len(out):len(out)], b[i:]...)
		}
	}
	if k := utf8Tail(out); k > 0 {
		return out[:len(out)-k], out[len(out)-k:]
	}
	return out, nil
}

// lift appends the terminal's answer seq to out, before the start of a character that out
// ends inside: the rest of the character comes after the answer.
func lift(out, seq []byte) []byte {
	k := utf8Tail(out)
	if k == 0 {
		return append(out, seq...)
	}
	part := append([]byte(nil), out[len(out)-k:]...)
	return append(append(out[:len(out)-k], seq...), part...)
}

// giveUp is a held tail that will not be completed, as the decoder should see it: inside
// a paste, pasted bytes; else a character's start as it is (the decoder drops it) and a
// sequence as the keys it was typed as (release).
func (r *pendingReader) giveUp(tail []byte) []byte {
	if r.inPaste {
		return bytes.ReplaceAll(tail, []byte{0x1b}, []byte(pastedEsc))
	}
	if j := bytes.IndexByte(tail, 0x1b); j > 0 {
		return append(tail[:j:j], release(tail[j:])...)
	}
	return release(tail)
}

// pasteGap is how long after a burst that ends with Enter more input makes that Enter part
// of the burst: a paste arrives in pieces a few milliseconds apart on a terminal, tens of
// milliseconds over SSH (issue 31: pieces 15 ms apart were sent line by line), while a
// person never types a key that fast after Enter. codex-rs's paste-burst detection keeps
// Enter a newline for 120 ms after a burst too (PASTE_ENTER_SUPPRESS_WINDOW).
const pasteGap = 120 * time.Millisecond

// shape prepares what one read returned for the decoder. Outside the terminal's bracketed
// paste:
//
//   - Every Enter (CR) inside a burst of input (what one read returned: a paste without
//     bracketed paste, an auto-typer) becomes a newline (LF), so that a pasted text stays
//     one message. A CR LF pair becomes one LF. An Enter is still Enter when it is alone
//     in its read, when it ends the burst (nothing follows within pasteGap), when an
//     escape sequence follows it (a terminal's answer, a focus event, an arrow key) or
//     when Esc precedes it (Alt+Enter).
//   - Each run of two or more characters of text (with its tabs and newlines) is wrapped
//     in bracketed-paste markers: the chat inserts it at once, as text (a burst is never
//     keys: "end", "up", "ctrl+k" are words).
//
// A burst may come in several reads. An Enter that ends a read while more input comes
// within pasteGap is held back (r.cr) and decided by the next read, which it is put in
// front of: text of the same burst makes it a newline, an escape sequence (the terminal
// answering a query right after the User's Enter) leaves it Enter. So the look-ahead is
// bounded: one byte, for at most pasteGap.
func (r *pendingReader) shape(b []byte) []byte {
	inBurst := time.Since(r.burst) < pasteGap // the previous read was a burst, just now
	if r.cr {
		r.cr = false
		b = append([]byte{'\r'}, b...)
		inBurst = true
	}
	if len(b) > 1 {
		defer func() { r.burst = time.Now() }()
	}
	if len(b) == 0 || len(b) == 1 && (b[0] != '\r' || !inBurst) {
		return b
	}
	out := make([]byte, 0, len(b)+len(pasteStart)+len(pasteEnd))
	run, runes := -1, 0 // where the text run being read starts in out, and its characters
	endRun := func() {
		if run >= 0 && runes >= 2 {
			text := append([]byte(nil), out[run:]...)
			out = append(append(append(out[:run], pasteStart...), text...), pasteEnd...)
		}
		run, runes = -1, 0
	}
	text := func(c byte) {
		if run < 0 {
			run = len(out)
		}
		if c < 0x80 || c >= 0xc0 {
			runes++
		}
		out = append(out, c)
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if r.outPaste {
			if c == 0x1b && bytes.HasPrefix(b[i:], pasteEnd) {
				r.outPaste = false
				i += len(pasteEnd) - 1
				out = append(out, pasteEnd...)
				continue
			}
			out = append(out, c)
			continue
		}
		switch {
		case c == 0x1b:
			endRun()
			if bytes.HasPrefix(b[i:], pasteStart) {
				r.outPaste = true
			}
			n := escLen(b[i:])
			out = append(out, b[i:i+n]...)
			i += n - 1
		case c == '\r' && i+1 < len(b) && b[i+1] == '\n':
			text('\n')
			i++
		case c == '\r' && i+1 < len(b) && b[i+1] != 0x1b:
			text('\n')
		case c == '\r' && i+1 == len(b) && r.err == nil && r.wait != nil && r.wait(r.File, pasteGap):
			r.cr = true // the burst goes on in the next read, which decides
		case c == '\r':
			endRun()
			out = append(out, c)
		case c == '\t' || c == '\n' || c >= 0x20 && c != 0x7f:
			text(c)
		default: // a control key
			endRun()
			out = append(out, c)
		}
	}
	endRun()
	return out
}

// escLen is the length of the escape sequence b starts with (b[0] is ESC), as far as b
// goes: a CSI (ESC [ parameters, final byte; an X10 mouse report ESC [ M and three bytes),
// a string (OSC, DCS, APC, PM, SOS: up to BEL
// or ESC \), SS3 (ESC O and one byte), or Esc and one key (Alt+key, a whole character).
// A lone Esc, or Esc before another Esc, is 1.
func escLen(b []byte) int {
	if len(b) < 2 || b[1] == 0x1b {
		return 1
	}
	switch b[1] {
	case '[':
		if len(b) >= 3 && b[2] == 'M' { // an X10 mouse report: three raw bytes follow
			return min(6, len(b))
		}
		for j := 2; j < len(b); j++ {
			switch c := b[j]; {
			case c >= 0x20 && c <= 0x3f:
			case c >= 0x40 && c <= 0x7e:
				return j + 1
			default:
				return j
			}
		}
		return len(b)
	case ']', 'P', 'X', '^', '_':
		for j := 2; j < len(b); j++ {
			if b[j] == '\a' {
				return j + 1
			}
			if b[j] == 0x1b {
				if j+1 < len(b) && b[j+1] == '\\' {
					return j + 2
				}
				return j
			}
		}
		return len(b)
	case 'O':
		return min(3, len(b))
	}
	_, n := utf8.DecodeRune(b[1:])
	return 1 + n
}

// settle is (&pendingReader{}).settle: outside a paste.
func settle(b []byte) (ready, tail []byte) { return (&pendingReader{}).settle(b) }

const (
	seqNone   = iota // not a sequence that is held
	seqDone          // a whole sequence of end bytes
	seqBroken        // end bytes that a byte which cannot continue them follows
	seqOpen          // unfinished at the end of b
)

// sequence looks at b, which starts with ESC, for an OSC sequence (ESC ] digit, printable
// ASCII, then BEL or ESC \), a CSI answer (ESC [ ?, parameter and intermediate bytes,
// then a final byte) or a bracketed-paste marker (ESC [ 2 0 0 ~, ESC [ 2 0 1 ~).
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
	case len(b) >= 3 && b[1] == '[' && b[2] == '2':
		for _, m := range [][]byte{pasteStart, pasteEnd} {
			if bytes.HasPrefix(b, m) {
				return len(m), seqDone
			}
			if bytes.HasPrefix(m, b) {
				return 0, seqOpen
			}
		}
	}
	return 0, seqNone
}

// release is a held answer given up on, as the keys it was typed as: ESC ] and ESC [ ?
// become Alt+] and Alt+[ (written as CSI u, which the decoder reads as that one key,
// never as the start of a sequence), the rest stays text. Anything else (a paste marker's
// start: a function key's sequence) is passed on.
func release(b []byte) []byte {
	if len(b) >= 2 && b[0] == 0x1b {
		switch {
		case b[1] == ']':
			return append([]byte("\x1b[93;3u"), b[2:]...)
		case b[1] == '[' && len(b) >= 3 && b[2] == '?':
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
