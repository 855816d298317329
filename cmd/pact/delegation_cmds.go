package main

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/pact-cli/pact/conversation"
)

// addDelegation attaches the delegation token source and the receipt keeper.
func (a *app) addDelegation(opts *conversation.Options) {}

// addDelegationCommands adds login, logout, grants and receipts.
func addDelegationCommands(a *app, root *cobra.Command) {}

func classifyDelegation(err error) (int, string, bool) { return 0, "", false }

func (a *app) stepUp(ctx context.Context, s *conversation.Session, su *conversation.StepUp) error {
	return errors.New("delegation is not available yet")
}
