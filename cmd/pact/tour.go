package main

import (
	"context"
	"errors"

	"github.com/pact-cli/pact/opener"
	"github.com/pact-cli/pact/tour"
)

// runTour plays `pact demo`; under --json each step is one JSON line
// (docs/json.md, shape demo-step) instead of the human tour.
func (a *app) runTour(ctx context.Context, realBrowser bool) error {
	o := tour.Options{IO: a.io, HTTP: a.httpClient()}
	if realBrowser {
		o.Open = func(url string) error { return opener.Open(url, a.io.ErrOut) }
	}
	if a.json {
		a.jsonLines = true
		o.Emit = func(s tour.Step) error { return a.printJSONLine(s) }
	}
	err := tour.Run(ctx, o)
	if a.lineErr != nil && errors.Is(err, a.lineErr) {
		// A failing --jq ended the tour at its first step; printJSONLine
		// has reported it, run exits 1.
		return nil
	}
	return err
}
