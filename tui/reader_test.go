package tui

import (
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestIncompleteTail(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{
		{"abc", 0},
		{"ab\xe6", 1},
		{"ab\xe6\x97", 2},
		{"ab日", 0},
		{"ab\xf0\x9f\x98", 3},
		{"ab\xc3", 1},
		{"ab\xc3\xa9", 0},
		{"\x1b]11;rgb:1e1e/", 14},
		{"x\x1b]11;rgb:1e1e/1e1e/1e1e\x1b\\", 0},
		{"x\x1b]11;rgb:1e1e/1e1e/1e1e\a", 0},
		{"\x1b]", 0},  // Alt+]: a key
		{"\x1b]a", 0}, // Alt+] then a
		{"\x1b", 0},   // Esc
	} {
		if got := incompleteTail([]byte(c.in)); got != c.want {
			t.Errorf("incompleteTail(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}

// A character whose bytes arrive in two reads far apart (longer than the decoder's 50 ms
// escape timeout) reaches the decoder whole.
func TestPendingReaderKeepsSplitCharacter(t *testing.T) {
	pr, pw := inputPipe(t)
	r := wrapInput(pr)
	go func() {
		pw.Write([]byte("a\xe6\x97"))
		time.Sleep(100 * time.Millisecond)
		pw.Write([]byte("\xa5b"))
	}()
	var got []byte
	buf := make([]byte, 4096)
	for text, keys := unwrap(string(got)); len(text)+len(keys) < len("a日b"); text, keys = unwrap(string(got)) {
		n, err := r.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		if !utf8.Valid(buf[:n]) {
			t.Fatalf("a read ended inside a character: %q", buf[:n])
		}
		got = append(got, buf[:n]...)
	}
	if text, keys := unwrap(string(got)); text+keys != "a日b" {
		t.Fatalf("read %q", got)
	}
}

func TestSettleHoldsAnswersAndReleasesWhatCannotBeOne(t *testing.T) {
	for _, c := range []struct{ in, ready, tail string }{
		{"\x1b[?2026", "", "\x1b[?2026"},         // a DECRQM answer without its ";2$y"
		{"a\x1b[?0", "a", "\x1b[?0"},             // a keyboard-flags answer without its "u"
		{"\x1b[?", "", "\x1b[?"},                 //
		{"\x1b[?2026;2$y", "\x1b[?2026;2$y", ""}, // whole
		{"\x1b[A", "\x1b[A", ""},                 // arrow key: not an answer
		{"\x1b[", "\x1b[", ""},                   // Alt+[
		{"\x1b]12", "", "\x1b]12"},               // held, like an OSC answer
		{"\x1b]12hi\r", "\x1b[93;3u12hi\r", ""},  // CR cannot continue an OSC: typed keys
		{"\x1b]1\x1bx", "\x1b[93;3u1\x1bx", ""},  // ESC not starting ST
		{"\x1b]11;rgb:1/2/3\x1b", "", "\x1b]11;rgb:1/2/3\x1b"},
		{"\x1b[?12\r", "\x1b[91;3u?12\r", ""},
		{"x\x1b]11;rgb:1/2/3\a\xe6", "x\x1b]11;rgb:1/2/3\a", "\xe6"},
	} {
		ready, tail := settle([]byte(c.in))
		if string(ready) != c.ready || string(tail) != c.tail {
			t.Errorf("settle(%q) = %q, %q; want %q, %q", c.in, ready, tail, c.ready, c.tail)
		}
	}
}

// inputPipe is a pipe for the test: the chat reads pr, the test writes pw.
func inputPipe(t *testing.T) (pr, pw *os.File) {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pr.Close(); pw.Close() })
	return pr, pw
}

// readFor reads r until it has at least want bytes.
func readFor(t *testing.T, r interface{ Read([]byte) (int, error) }, want int) string {
	t.Helper()
	var got []byte
	buf := make([]byte, 4096)
	for len(got) < want {
		n, err := r.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, buf[:n]...)
	}
	return string(got)
}

// A CSI answer split across reads 80 ms apart reaches the decoder whole (it leaked ";2$y"
// into the input).
func TestPendingReaderKeepsSplitCSIAnswer(t *testing.T) {
	pr, pw := inputPipe(t)
	r := wrapInput(pr)
	go func() {
		pw.Write([]byte("\x1b[?2026"))
		time.Sleep(80 * time.Millisecond)
		pw.Write([]byte(";2$y"))
		pw.Write([]byte("\x1b[?0"))
		time.Sleep(80 * time.Millisecond)
		pw.Write([]byte("u"))
	}()
	buf := make([]byte, 4096)
	n, err := r.Read(buf)
	if err != nil || !strings.HasPrefix(string(buf[:n]), "\x1b[?2026;2$y") {
		t.Fatalf("first read %q, %v", buf[:n], err)
	}
	if got := string(buf[:n]) + readFor(t, r, len("\x1b[?2026;2$y\x1b[?0u")-n); got != "\x1b[?2026;2$y\x1b[?0u" {
		t.Fatalf("read %q", got)
	}
}

// A held sequence that does not complete is released, as typed keys, after the hold limit,
// even when no more input comes; and at once when a byte that cannot continue it comes.
func TestPendingReaderReleasesHeldBytes(t *testing.T) {
	pr, pw := inputPipe(t)
	r := &pendingReader{File: pr, limit: 150 * time.Millisecond, wait: waitInput}
	pw.Write([]byte("\x1b]12"))
	start := time.Now()
	got := readFor(t, r, 1)
	if got != "\x1b[93;3u"+pasted("12") {
		t.Fatalf("released %q", got)
	}
	if d := time.Since(start); d < 100*time.Millisecond || d > time.Second {
		t.Fatalf("released after %v", d)
	}
	pw.Write([]byte("\x1b]12hello"))
	go func() {
		time.Sleep(50 * time.Millisecond)
		pw.Write([]byte("\r"))
	}()
	r.limit = 2 * time.Second
	start = time.Now()
	if got := readFor(t, r, 1); got != "\x1b[93;3u"+pasted("12hello")+"\r" {
		t.Fatalf("released %q", got)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("a CR did not end the hold at once: %v", d)
	}
}

// Issue 19: an Enter inside a burst of input (a paste without bracketed paste) is a
// newline; an Enter alone, at the end of a burst, after Esc or before an escape sequence
// stays Enter. Issue 31 (4): the burst's text reaches the decoder as one paste.
func TestShapeBursts(t *testing.T) {
	never := func(*os.File, time.Duration) bool { return false }
	r := &pendingReader{wait: never}
	for _, c := range []struct{ in, want string }{
		{"\r", "\r"},
		{"hello\r", pasted("hello") + "\r"},
		{"one\rtwo\rthree\r", pasted("one\ntwo\nthree") + "\r"},
		{"one\r\ntwo", pasted("one\ntwo")},
		{"\x1b\r", "\x1b\r"},                                 // Alt+Enter
		{"a\r\x1b[A", "a\r\x1b[A"},                           // Enter, then an arrow key
		{"x\r\x1b]11;rgb:0/0/0\a", "x\r\x1b]11;rgb:0/0/0\a"}, // Enter, then a terminal's answer
		{"\x1b[200~a\rb\x1b[201~", "\x1b[200~a\rb\x1b[201~"}, // the terminal's paste, as it is
		{"é", "é"}, // one character: a key
		{"up\x1b[Adown\x15end", pasted("up") + "\x1b[A" + pasted("down") + "\x15" + pasted("end")},
		{"\x1b[1;5Aab", "\x1b[1;5A" + pasted("ab")},
		{"\x1bxyz", "\x1bx" + pasted("yz")},         // Alt+x, then text
		{"a\tb", pasted("a\tb")},                    // a pasted tab is text, not completion
		{"\x1b[M !!ab", "\x1b[M !!" + pasted("ab")}, // an X10 mouse report: its bytes are not text
	} {
		r.burst = time.Time{}
		if got := string(r.shape([]byte(c.in))); got != c.want {
			t.Errorf("shape(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	more := &pendingReader{wait: func(*os.File, time.Duration) bool { return true }}
	if got := string(more.shape([]byte("line one\r"))); got != pasted("line one") || !more.cr {
		t.Errorf("a burst going on in the next read: %q (Enter held %v), want its Enter held", got, more.cr)
	}
	if got := string(more.shape([]byte("line two"))); got != pasted("\nline two") {
		t.Errorf("the held Enter, then text: %q, want a newline", got)
	}
	more.shape([]byte("line three\r"))
	if got := string(more.shape([]byte("\x1b[?2027;2$y"))); got != "\r\x1b[?2027;2$y" {
		t.Errorf("the held Enter, then a terminal's answer: %q, want Enter", got)
	}
}

// pasted is s between bracketed-paste markers.
func pasted(s string) string { return "\x1b[200~" + s + "\x1b[201~" }

// An Enter that ends one read, then, in the next read within burstGap, a terminal's answer
// or a key's escape sequence, is an Enter (the message is sent); then text is a newline
// (a paste goes on). Seen under load: "hello\r" typed, the terminal's start-up answer right
// after, and the input showed "> hello" and a blank line.
func TestPendingReaderEnterBeforeNextReadsAnswer(t *testing.T) {
	for _, c := range []struct{ next, want string }{
		{"\x1b[?2027;2$y", pasted("hello") + "\r\x1b[?2027;2$y"},                             // DECRQM answer
		{"\x1b]11;rgb:1e1e/1e1e/1e1e\a", pasted("hello") + "\r\x1b]11;rgb:1e1e/1e1e/1e1e\a"}, // OSC 11 answer
		{"\x1b[I", pasted("hello") + "\r\x1b[I"},                                             // focus in
		{"\x1b[A", pasted("hello") + "\r\x1b[A"},                                             // arrow key
		{"world", pasted("hello") + pasted("\nworld")},                                       // the burst goes on
		{"\nworld", pasted("hello") + pasted("\nworld")},                                     // CR LF split across reads
		{"\rworld", pasted("hello") + pasted("\n\nworld")},                                   // a blank line in a paste
	} {
		pr, pw := inputPipe(t)
		sent := false
		// The next read's bytes arrive just as the reader looks at the Enter ending the first
		// read: after that read, well within burstGap.
		r := &pendingReader{File: pr, limit: holdLimit, wait: func(f *os.File, d time.Duration) bool {
			if !sent {
				sent = true
				pw.Write([]byte(c.next))
			}
			return waitInput(f, d)
		}}
		pw.Write([]byte("hello\r"))
		if got := readFor(t, r, len(c.want)); got != c.want {
			t.Errorf("hello\\r, then %q in the next read: read %q, want %q", c.next, got, c.want)
		}
		if !sent {
			t.Errorf("%q: the reader did not look ahead", c.next)
		}
	}
	// Nothing follows within burstGap: the Enter ends the burst.
	pr, pw := inputPipe(t)
	r := wrapInput(pr)
	pw.Write([]byte("hello\r"))
	if got := readFor(t, r, len(pasted("hello\r"))); got != pasted("hello")+"\r" {
		t.Errorf("hello\\r alone: read %q", got)
	}
}

// A 20-line paste without bracketed paste, read from the terminal in pieces, reaches the
// decoder with newlines inside and one Enter at its end.
func TestPendingReaderPasteIsOneMessage(t *testing.T) {
	pr, pw := inputPipe(t)
	r := wrapInput(pr)
	var lines []string
	for i := range 20 {
		lines = append(lines, strings.Repeat("x", i*7)+" line")
	}
	paste := strings.Join(lines, "\r") + "\r"
	go func() {
		for i := 0; i < len(paste); i += 37 {
			pw.Write([]byte(paste[i:min(i+37, len(paste))]))
		}
	}()
	var got []byte
	buf := make([]byte, 4096)
	for text, keys := unwrap(string(got)); len(text)+len(keys) < len(paste); text, keys = unwrap(string(got)) {
		n, err := r.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, buf[:n]...)
	}
	if text, keys := unwrap(string(got)); text != strings.Join(lines, "\n") || keys != "\r" {
		t.Fatalf("read %q: pasted %q, keys %q\nwant the lines pasted, then Enter", got, text, keys)
	}
}

// unwrap splits what the decoder is given into the text inside bracketed-paste markers
// and the rest (keys).
func unwrap(s string) (text, keys string) {
	for {
		i := strings.Index(s, "\x1b[200~")
		if i < 0 {
			return text, keys + s
		}
		keys += s[:i]
		s = s[i+len("\x1b[200~"):]
		j := strings.Index(s, "\x1b[201~")
		if j < 0 {
			return text + s, keys
		}
		text += s[:j]
		s = s[j+len("\x1b[201~"):]
	}
}

// Issue 31 (3): the terminal's answer to a start-up query written between the two halves
// of a character the User types goes to the decoder before the character, which stays
// whole ("café" arrived as "caf").
func TestIssue31_3_AnswerInsideACharacterGoesBeforeIt(t *testing.T) {
	const answer = "\x1b]11;rgb:0000/0000/0000\x1b\\"
	for _, c := range []struct{ in, ready, tail string }{
		{"caf\xc3" + answer, "caf" + answer, "\xc3"},
		{"caf\xc3" + answer + "\xa9!", "caf" + answer + "é!", ""},
		{"\xe6\x97" + "\x1b[?2026;2$y" + "\xa5", "\x1b[?2026;2$y" + "日", ""},
		{"caf\xc3" + answer[:9], "caf", "\xc3" + answer[:9]}, // the answer unfinished too
	} {
		ready, tail := settle([]byte(c.in))
		if string(ready) != c.ready || string(tail) != c.tail {
			t.Errorf("settle(%q) = %q, %q; want %q, %q", c.in, ready, tail, c.ready, c.tail)
		}
	}
	pr, pw := inputPipe(t)
	r := wrapInput(pr)
	go func() {
		for _, p := range []string{"caf\xc3", answer[:9], answer[9:] + "\xa9 \xe6\x97", "\xa5\r"} {
			pw.Write([]byte(p))
			time.Sleep(60 * time.Millisecond)
		}
	}()
	var got string
	for _, keys := unwrap(got); !strings.HasSuffix(keys, "\r"); _, keys = unwrap(got) {
		got += readFor(t, r, 1)
	}
	if text, keys := unwrap(got); text+strings.TrimPrefix(keys, answer) != "café 日\r" || !strings.HasPrefix(keys, answer) {
		t.Fatalf("read %q: want the answer whole, then café 日 and Enter", got)
	}
}

// Issue 31 (4): inside the terminal's bracketed paste every ESC reaches the decoder as
// pastedEsc (the decoder drops escape sequences in a paste), also when a read ends inside
// one or inside what may be the end marker.
func TestIssue31_4_EscapesInsideABracketedPaste(t *testing.T) {
	pr, pw := inputPipe(t)
	r := wrapInput(pr)
	go func() {
		for _, p := range []string{"\x1b[200~a \x1b[3", "1mred\x1b", "[0m \x1b[20", "1~"} {
			pw.Write([]byte(p))
			time.Sleep(20 * time.Millisecond)
		}
	}()
	want := "\x1b[200~a " + pastedEsc + "[31mred" + pastedEsc + "[0m \x1b[201~"
	var got string
	for !strings.Contains(got, "\x1b[201~") {
		got += readFor(t, r, 1)
	}
	if got != want {
		t.Fatalf("read %q, want %q", got, want)
	}
	if got := unpaste("a " + pastedEsc + "[31mred"); got != "a \x1b[31mred" {
		t.Fatalf("unpaste: %q", got)
	}
}

// A Read never leaves bytes for the next one (bubbletea's reader waits for the terminal to
// be readable before each Read: they would wait for the User's next key), whatever what
// the reader adds: paste markers around short runs, released keys, held characters.
func TestPendingReaderLeavesNothingBehind(t *testing.T) {
	for _, in := range []string{
		strings.Repeat("ab\x01", 3000),
		strings.Repeat("\x1b]12\r", 2000),
		strings.Repeat("日本語", 3000),
		strings.Repeat("x\r", 5000),
		"\x1b[200~" + strings.Repeat("\x1b[31mx", 3000) + "\x1b[201~",
	} {
		pr, pw := inputPipe(t)
		r := wrapInput(pr).(*pendingReader)
		go func() { pw.Write([]byte(in)); pw.Close() }()
		buf := make([]byte, 4096)
		for {
			n, err := r.Read(buf)
			if len(r.out) > 0 {
				t.Fatalf("%.20q…: a Read of %d bytes left %d bytes behind", in, n, len(r.out))
			}
			if err != nil {
				break
			}
		}
	}
}
