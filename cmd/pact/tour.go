package main

import (
	"context"

	"github.com/pact-cli/pact/opener"
	"github.com/pact-cli/pact/tour"
)

func (a *app) runTour(ctx context.Context, realBrowser bool) error {
	o := tour.Options{IO: a.io, HTTP: a.httpClient()}
	if realBrowser {
		o.Open = func(url string) error { return opener.Open(url, a.io.ErrOut) }
	}
	return tour.Run(ctx, o)
}
