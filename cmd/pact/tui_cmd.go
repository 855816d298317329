package main

import (
	"context"
	"errors"
	"os"

	"github.com/pact-cli/pact/agent"
	"github.com/pact-cli/pact/chatbackend"
	"github.com/pact-cli/pact/iostreams"
	"github.com/pact-cli/pact/opener"
	"github.com/pact-cli/pact/tui"
)

// tuiAvailable reports whether `pact chat` can open the full-screen chat:
// stdin and stdout are terminals (the caller has already ruled out --json)
// that can address the cursor (iostreams.CursorAddressable: not TERM=dumb), and no --debug
// trace is headed for the same screen (line mode then).
func (a *app) tuiAvailable() bool {
	return a.io.IsStdinTTY() && a.io.IsStdoutTTY() && !(a.debug && a.io.IsStderrTTY()) && iostreams.CursorAddressable(os.Getenv("TERM"))
}

// runTUI holds the conversation c in the full-screen chat until the User
// quits. Ctrl+C inside the chat quits it (exit 0); SIGINT from outside ends it
// like any interrupted command (exit 130, "cancelled (interrupted)"); SIGHUP,
// SIGQUIT and SIGTERM end it with a failure naming the signal. The terminal is
// restored in every case.
func (a *app) runTUI(ctx context.Context, c agent.Conversation) error {
	ag, err := a.agent()
	if err != nil {
		return err
	}
	// A browser's chatter would land on the chat's screen: it is discarded. A
	// browser that fails after starting is reported in the login panel.
	open := func(url string) (<-chan error, error) {
		p, err := opener.Start(url, nil)
		if err != nil {
			return nil, err
		}
		exited := make(chan error, 1)
		go func() { exited <- p.Err() }()
		return exited, nil
	}
	bo := chatbackend.Options{Receipts: ag}
	if !a.noBrows {
		bo.Open = open
	}
	err = tui.Run(ctx, chatbackend.New(c, bo), a.io.In, a.io.Out, tui.Options{
		NoColor: !a.io.Color(),
		OpenURL: open, // 'o' in the login panel is an explicit request, even with --no-browser
	})
	if errors.Is(err, context.Canceled) {
		return context.Canceled // exit 130, said in plain words
	}
	return err
}
