package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/term"
)

// ErrSignal is returned by Run (wrapped in a *SignalError) when a terminating signal
// (SIGHUP, SIGQUIT, SIGTERM) ended the chat; the terminal was restored first.
var ErrSignal = errors.New("terminated by a signal")

// SignalError is the error Run returns when a terminating signal ended the chat. It wraps
// ErrSignal.
type SignalError struct{ Signal syscall.Signal }

func (e *SignalError) Error() string { return fmt.Sprintf("%v: %v", ErrSignal, e.Signal) }
func (e *SignalError) Unwrap() error { return ErrSignal }

// ExitCode is 128 + the signal's number, as a shell reports it: SIGHUP 129, SIGQUIT 131,
// SIGTERM 143.
func (e *SignalError) ExitCode() int { return 128 + int(e.Signal) }

// Run opens the chat full-screen on a terminal (in, out) and returns when the User quits
// (nil), when ctx is cancelled (ctx.Err()), when a terminating signal arrives (an error
// wrapping ErrSignal) or when the terminal fails. In every case the terminal is restored
// (main screen, cursor, cooked mode) before Run returns. The caller checks that in and out
// are terminals first and falls back to line mode otherwise. NO_COLOR in the environment
// implies opts.NoColor.
//
// Run is the only place in pact that queries the terminal (its background colour, for the
// Markdown theme); the query never blocks: a terminal that does not answer keeps the dark
// theme.
func Run(ctx context.Context, b Backend, in io.Reader, out io.Writer, opts Options) error {
	if os.Getenv("NO_COLOR") != "" {
		opts.NoColor = true
	}
	// SIGHUP (the terminal went away), SIGQUIT (Ctrl+\ from another shell) and SIGTERM end
	// the program through its context, so that bubbletea restores the terminal on the way
	// out instead of the process dying in raw mode on the alternate screen.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var got os.Signal
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		select {
		case got = <-sigs:
			cancel()
		case <-runCtx.Done():
		}
	}()

	if f, ok := out.(*os.File); ok && opts.Width == 0 {
		// The first frame is drawn at the window's real size, not 80×24 then redrawn.
		if w, h, err := term.GetSize(f.Fd()); err == nil && w > 0 && h > 0 {
			opts.Width, opts.Height = w, h
		}
	}
	m := New(b, opts)
	popts := []tea.ProgramOption{
		tea.WithContext(runCtx),
		tea.WithInput(wrapInput(in)), // characters and terminal answers split across reads are kept whole
		tea.WithOutput(out),
		tea.WithoutSignalHandler(), // SIGINT and SIGTERM are ours (above, and the caller's ctx)
	}
	if opts.NoColor {
		// Keep bold, faint and reverse; drop colour.
		popts = append(popts, tea.WithColorProfile(colorprofile.Ascii))
	}
	p := tea.NewProgram(m, popts...)
	// SIGTSTP from outside (kill -TSTP, or a terminal's suspend key while the chat reads
	// keys as text) stops the chat like Ctrl+Z: the terminal restored first, raw mode and
	// the screen back on SIGCONT. Left to its default action, the chat would stop in raw
	// mode on the alternate screen and come back without repainting.
	//
	// While SIGTSTP is caught, bubbletea's own SIGTSTP (sent once it has restored the
	// terminal) would not stop the process: the chat, suspending, stops itself instead.
	tstp, stopSuspend := suspendSignal()
	defer stopSuspend()
	go func() {
		for {
			select {
			case <-tstp:
				if m.c.suspending.Load() {
					stopProcess()
					continue
				}
				p.Send(suspendMsg{})
			case <-runCtx.Done():
				return
			}
		}
	}()
	_, err := p.Run()
	m.c.cancelAll()
	if derr := m.c.keepDraft(); derr != nil && err == nil {
		err = fmt.Errorf("keeping what was not sent: %w", derr)
	}
	cancel()
	<-stopped
	if got == nil {
		select { // a signal that also cancelled ctx (the caller's SIGTERM) may be waiting
		case got = <-sigs:
		default:
		}
	}
	if sig, ok := got.(syscall.Signal); ok {
		return &SignalError{Signal: sig}
	}
	if err != nil && errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}
