package main

import (
	"context"
	"errors"

	"github.com/pact-cli/pact/agent"
	"github.com/pact-cli/pact/discovery"
	"github.com/pact-cli/pact/tui"
)

// trustInTUI handles a changed card when `pact chat` opens the full-screen
// chat: the y/n panel shows old and new (agent.AcceptChange); y records the
// new card and opens the conversation again, n quits with nothing sent. Any
// other outcome of openConversation is returned as is.
func (a *app) trustInTUI(ctx context.Context, brand string, f sessionFlags, c agent.Conversation, err error) (agent.Conversation, error) {
	var changed *discovery.CardChangedError
	if !errors.As(err, &changed) || a.json || !a.io.Interactive() || !a.tuiAvailable() {
		return c, err
	}
	ag, aerr := a.agent()
	if aerr != nil {
		return nil, aerr
	}
	if err := agent.AcceptChange(ctx, ag, brand, changed, func(changed *discovery.CardChangedError) (bool, error) {
		return tui.AskCardChange(ctx, a.io.In, a.io.Out, tui.Options{NoColor: !a.io.Color()}, tui.CardChange{
			Brand: brand, Changes: changed.Changes, Rows: discovery.PinRows(changed.Old, changed.New),
		})
	}); err != nil {
		return nil, err
	}
	return a.openConversation(ctx, brand, f)
}
