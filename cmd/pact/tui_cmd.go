package main

import (
	"context"

	"github.com/pact-cli/pact/conversation"
)

func (a *app) tuiAvailable() bool { return false }

func (a *app) runTUI(ctx context.Context, s *conversation.Session) error { return nil }
