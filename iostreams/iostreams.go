// Package iostreams is pact's terminal I/O: the three streams, whether they
// are terminals, colour (lipgloss, off for NO_COLOR and non-terminals),
// spinners for waits and aligned tables. Prose for people goes to stderr
// when stdout carries machine output (--json).
package iostreams

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/mattn/go-isatty"
)

// HumanTime is how every human view writes a time (tables, `receipts
// show`, the chat's panels): local time to the minute with its zone, as
// t.Local().Format(HumanTime).
const HumanTime = "2006-01-02 15:04 MST"

// IO holds the streams of one command run.
type IO struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	inTTY, outTTY, errTTY bool
	color                 bool
	outColor, errColor    bool
}

// System returns the process's streams, detecting terminals and NO_COLOR.
// Each stream is coloured only when it is a terminal: `pact key list | less`
// run from a terminal gets plain text on stdout and colour on stderr.
func System() *IO {
	io := &IO{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		inTTY: isTTY(os.Stdin), outTTY: isTTY(os.Stdout), errTTY: isTTY(os.Stderr)}
	io.setColor(colorFor(io.outTTY, io.errTTY, os.LookupEnv))
	return io
}

// colorFor decides colour per stream: on for a terminal unless NO_COLOR is
// set (to anything), TERM is "dumb", or TERM is unset outside Windows (whose
// consoles set none): a terminal that names no type may print escape codes
// as text (issue 31: line-mode chat wrote them with TERM unset).
func colorFor(outTTY, errTTY bool, lookup func(string) (string, bool)) (out, err bool) {
	_, noColor := lookup("NO_COLOR")
	term, _ := lookup("TERM")
	ok := !noColor && term != "dumb" && (term != "" || runtime.GOOS == "windows")
	return ok && outTTY, ok && errTTY
}

// Test returns streams backed by buffers, no terminals, no colour.
func Test() (*IO, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) {
	in, out, errOut := &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	io := &IO{In: in, Out: out, ErrOut: errOut}
	io.SetColor(false)
	return io, in, out, errOut
}

func isTTY(f *os.File) bool {
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

// SetTTY overrides terminal detection (tests).
func (s *IO) SetTTY(in, out, err bool) { s.inTTY, s.outTTY, s.errTTY = in, out, err }

// SetColor turns colour on or off for both output streams.
func (s *IO) SetColor(on bool) { s.setColor(on, on) }

func (s *IO) setColor(out, err bool) {
	s.color = out || err
	s.outColor, s.errColor = out, err
}

// Color reports whether colour is on for stdout or stderr.
func (s *IO) Color() bool { return s.color }

// IsStdinTTY reports whether stdin is a terminal.
func (s *IO) IsStdinTTY() bool { return s.inTTY }

// IsStdoutTTY reports whether stdout is a terminal.
func (s *IO) IsStdoutTTY() bool { return s.outTTY }

// IsStderrTTY reports whether stderr is a terminal.
func (s *IO) IsStderrTTY() bool { return s.errTTY }

// Interactive reports whether pact may prompt: stdin and stdout are terminals.
func (s *IO) Interactive() bool { return s.inTTY && s.outTTY }

// Styles for human output.
type Styles struct {
	Bold, Faint, Accent, Success, Warning, Error, Agent, User lipgloss.Style
}

// styles returns the styles of a stream: with colour off every style is plain (no escape
// sequence at all, as for a pipe). lipgloss v2 never queries the terminal: the palette is
// the 16 ANSI colours, which the terminal's theme adapts to its background.
func styles(color bool) Styles {
	n := lipgloss.NewStyle
	if !color {
		return Styles{Bold: n(), Faint: n(), Accent: n(), Success: n(), Warning: n(), Error: n(), Agent: n(), User: n()}
	}
	return Styles{
		Bold:    n().Bold(true),
		Faint:   n().Faint(true),
		Accent:  n().Foreground(lipgloss.Color("12")),
		Success: n().Foreground(lipgloss.Color("10")),
		Warning: n().Foreground(lipgloss.Color("11")),
		Error:   n().Foreground(lipgloss.Color("9")).Bold(true),
		Agent:   n().Foreground(lipgloss.Color("14")),
		User:    n().Foreground(lipgloss.Color("13")),
	}
}

// Out returns styles for stdout; Err for stderr.
func (s *IO) OutStyles() Styles { return styles(s.outColor) }

// ErrStyles returns styles for stderr.
func (s *IO) ErrStyles() Styles { return styles(s.errColor) }

// Printf writes to stdout.
func (s *IO) Printf(format string, a ...any) { fmt.Fprintf(s.Out, format, a...) }

// Eprintf writes to stderr.
func (s *IO) Eprintf(format string, a ...any) { fmt.Fprintf(s.ErrOut, format, a...) }

// Table writes rows aligned in columns to w; the first row is a header
// (styled bold when colour is on). Widths count runes as displayed. Every
// cell goes through SanitizeLine: tables show remote text (names, grant
// ids), and a cell holding a newline must not fake a row of its own.
func (s *IO) Table(w io.Writer, rows [][]string) {
	if len(rows) == 0 {
		return
	}
	safe := make([][]string, len(rows))
	for i, r := range rows {
		safe[i] = SanitizeLineAll(r)
	}
	rows = safe
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			if i < len(widths) && lipgloss.Width(c) > widths[i] {
				widths[i] = lipgloss.Width(c)
			}
		}
	}
	bold := styles(s.outColor).Bold
	for ri, r := range rows {
		var b strings.Builder
		for i, c := range r {
			cell := c
			if i < len(r)-1 {
				cell += strings.Repeat(" ", widths[i]-lipgloss.Width(c)+2)
			}
			if ri == 0 {
				cell = bold.Render(cell)
			}
			b.WriteString(cell)
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// Spinner shows a spinner with a label and elapsed time on stderr while a
// wait lasts, when stderr is a terminal; otherwise it prints the label once.
type Spinner struct {
	io       *IO
	label    string
	deadline time.Time
	stop     chan struct{}
	done     sync.WaitGroup
}

// StartSpinner starts a spinner for label ("Waiting for Example Co.") that
// shows the time elapsed.
func (s *IO) StartSpinner(label string) *Spinner {
	return s.start(label, time.Time{})
}

// StartCountdown starts a spinner that shows the time left until deadline
// (a device code's expiry).
func (s *IO) StartCountdown(label string, deadline time.Time) *Spinner {
	return s.start(label, deadline)
}

// CursorAddressable reports whether a terminal of type term (the TERM variable) can move
// the cursor and erase a line: an unset TERM, "dumb" (Emacs shells, some CI consoles) and
// "unknown" cannot, and get no escape sequences (no spinner, no full-screen chat).
func CursorAddressable(term string) bool {
	switch strings.ToLower(strings.TrimSpace(term)) {
	case "", "dumb", "unknown":
		return false
	}
	return true
}

// CanRedrawErr reports whether stderr is a terminal that can redraw a line (a spinner, a
// line erased with "\r\x1b[K"): a terminal (IsStderrTTY) that is CursorAddressable.
func (s *IO) CanRedrawErr() bool { return s.errTTY && CursorAddressable(os.Getenv("TERM")) }

func (s *IO) start(label string, deadline time.Time) *Spinner {
	// The label often names a Brand (remote text) and is drawn on one line.
	sp := &Spinner{io: s, label: SanitizeLine(label), deadline: deadline, stop: make(chan struct{})}
	if !s.CanRedrawErr() {
		return sp
	}
	sp.done.Add(1)
	go func() {
		defer sp.done.Done()
		frames := []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}
		start := time.Now()
		st := styles(s.errColor)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for i := 0; ; i++ {
			clock := fmt.Sprintf("%.0fs", time.Since(start).Seconds())
			if !sp.deadline.IsZero() {
				clock = "· expires in " + time.Until(sp.deadline).Round(time.Second).String()
			}
			fmt.Fprintf(s.ErrOut, "\r%s %s %s\x1b[K", st.Accent.Render(frames[i%len(frames)]), sp.label, st.Faint.Render(clock))
			select {
			case <-sp.stop:
				fmt.Fprint(s.ErrOut, "\r\x1b[K")
				return
			case <-t.C:
			}
		}
	}()
	return sp
}

// Stop ends the spinner and clears its line.
func (sp *Spinner) Stop() {
	select {
	case <-sp.stop:
	default:
		close(sp.stop)
	}
	sp.done.Wait()
}
