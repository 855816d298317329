package main

import (
	"context"
	"errors"
	"time"

	"github.com/pact-cli/pact/agent"
	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/discovery"
	"github.com/pact-cli/pact/tui"
)

// trustInTUI handles a changed card when `pact chat` opens the full-screen
// chat: the y/n panel shows old and new (agent.AcceptChange); y records the
// new card and opens the session again, n quits with nothing sent. Any other outcome of
// openSession is returned as is.
func (a *app) trustInTUI(ctx context.Context, brand string, f sessionFlags, s *conversation.Session, err error) (*conversation.Session, error) {
	var changed *discovery.CardChangedError
	if !errors.As(err, &changed) || a.json || !a.io.Interactive() || !a.tuiAvailable() {
		return s, err
	}
	pins := a.userStore()
	if err := agent.AcceptChange(ctx, pins, brand, changed, time.Now(), func(changed *discovery.CardChangedError) (bool, error) {
		return tui.AskCardChange(ctx, a.io.In, a.io.Out, tui.Options{NoColor: !a.io.Color()}, tui.CardChange{
			Brand: brand, Changes: changed.Changes, Rows: discovery.PinRows(changed.Old, changed.New),
		})
	}); err != nil {
		return nil, err
	}
	return a.openSession(ctx, brand, f)
}
