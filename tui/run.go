package tui

import (
	"context"
	"errors"
	"io"
	"os"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/muesli/termenv"
)

// Run opens the chat full-screen on a terminal (in, out) and returns when the User quits
// (nil), when ctx is cancelled (ctx.Err()) or when the terminal fails. The caller checks
// that in and out are terminals first and falls back to line mode otherwise.
// NO_COLOR in the environment implies opts.NoColor.
func Run(ctx context.Context, b Backend, in io.Reader, out io.Writer, opts Options) error {
	if os.Getenv("NO_COLOR") != "" {
		opts.NoColor = true
	}
	if opts.Profile == nil {
		p := termenv.NewOutput(out).EnvColorProfile()
		if opts.NoColor && p == termenv.Ascii {
			// NO_COLOR makes termenv drop every attribute; keep bold and reverse.
			if f, ok := out.(*os.File); ok && isTerminal(f) {
				p = termenv.ANSI
			}
		}
		opts.Profile = &p
	}
	m := New(b, opts)
	p := tea.NewProgram(m,
		tea.WithContext(ctx),
		tea.WithInput(in),
		tea.WithOutput(out),
		tea.WithAltScreen(),
		tea.WithMouseCellMotion(),
	)
	_, err := p.Run()
	m.c.cancelAll()
	if err != nil && errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
