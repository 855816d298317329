package httpx

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// Probe asks url once with c (GET, 3 s at most) and returns the network
// error (a *NetError) when nothing answered; any HTTP answer, whatever its
// status, is an answer.
func Probe(ctx context.Context, c *http.Client, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil
	}
	resp, err := c.Do(req)
	if err == nil {
		resp.Body.Close()
		return nil
	}
	var ne *NetError
	if err = Describe(err); errors.As(err, &ne) {
		return err
	}
	return nil // a redirect refused, a body too large…: something answered
}
