package main

import (
	"context"
	"errors"

	"github.com/pact-cli/pact/chatbackend"
	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/opener"
	"github.com/pact-cli/pact/tui"
)

// tuiAvailable reports whether `pact chat` can open the full-screen chat:
// stdin and stdout are terminals (the caller has already ruled out --json),
// and no --debug trace is headed for the same screen (line mode then).
func (a *app) tuiAvailable() bool {
	return a.io.IsStdinTTY() && a.io.IsStdoutTTY() && !(a.debug && a.io.IsStderrTTY())
}

// runTUI holds the conversation s in the full-screen chat until the User
// quits. Ctrl+C inside the chat quits it (exit 0); SIGINT/SIGTERM from
// outside end it with the context (exit 1, the terminal restored).
func (a *app) runTUI(ctx context.Context, s *conversation.Session) error {
	opts, err := a.sessionOptions()
	if err != nil {
		return err
	}
	// A browser's chatter would land on the chat's screen: it is discarded.
	open := func(url string) error { return opener.Open(url, nil) }
	bo := chatbackend.Options{Receipts: opts.Receipts}
	if !a.noBrows {
		bo.Open = open
	}
	err = tui.Run(ctx, chatbackend.New(s, bo), a.io.In, a.io.Out, tui.Options{
		NoColor: !a.io.Color(),
		OpenURL: open, // 'o' in the login panel is an explicit request, even with --no-browser
	})
	if errors.Is(err, context.Canceled) || errors.Is(err, tui.ErrSignal) {
		return silentError{code: exitFailure}
	}
	return err
}
