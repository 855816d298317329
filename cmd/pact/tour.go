package main

import (
	"context"
	"errors"
)

func (a *app) runTour(ctx context.Context, realBrowser bool) error {
	return errors.New("the tour is not written yet")
}
