package deviceflow

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Issue 31 item 14: a device authorization with interval 100000 and
// expires_in 999999999 made pact wait 277,777 hours. Both are capped
// (MaxInterval, MaxExpiresIn): polls come at least every 72 s (1.2 ×
// 60 s), also after many slow_downs, and the login ends as expired after
// 30 minutes at most.
func TestIssue31_14_DeviceFlowIntervalAndExpiryAreCapped(t *testing.T) {
	as := newFakeAS(t)
	as.devResp = `{"device_code":"d","user_code":"U","verification_uri":"https://brand.example/l","expires_in":999999999,"interval":100000}`
	for range 10 {
		as.token(400, `{"error":"slow_down"}`)
	}
	as.token(400, `{"error":"authorization_pending"}`)
	clk := newFakeClock()
	start := clk.Now()
	c, _ := newClient(clk)
	a := authorize(t, c, as)
	if a.Interval != MaxInterval || a.ExpiresIn != int(MaxExpiresIn/time.Second) || !a.ExpiresAt.Equal(start.Add(MaxExpiresIn)) {
		t.Fatalf("authorization: interval %v, expires_in %d, expires at %v", a.Interval, a.ExpiresIn, a.ExpiresAt.Sub(start))
	}
	_, err := c.Poll(context.Background(), as.srv.URL+"/token", a)
	if !errors.Is(err, ErrExpiredToken) {
		t.Fatalf("poll: %v", err)
	}
	var total time.Duration
	for _, w := range clk.Waits() {
		if w > PollWait(MaxInterval) {
			t.Fatalf("a wait of %v between polls", w)
		}
		total += w
	}
	if total > MaxExpiresIn {
		t.Fatalf("waited %v in all", total)
	}
	// An Authorization made elsewhere, without an expiry, is bounded too.
	clk2 := newFakeClock()
	c2, _ := newClient(clk2)
	if _, err := c2.Poll(context.Background(), as.srv.URL+"/token", &Authorization{DeviceCode: "d", Interval: time.Hour}); !errors.Is(err, ErrExpiredToken) {
		t.Fatalf("poll without an expiry: %v", err)
	}
	if got := clk2.Now().Sub(start); got > MaxExpiresIn {
		t.Fatalf("polled for %v without an expiry", got)
	}
}

// Issue 31 item 14, review: an interval so large that it overflows a time.Duration
// (18446744074 s wraps to 0.29 s) is capped as any other large one, never polled every
// few milliseconds.
func TestIssue31_14_AnIntervalThatOverflowsIsCapped(t *testing.T) {
	for _, n := range []string{"18446744074", "73786976295", "9223372036854775807"} {
		as := newFakeAS(t)
		as.devResp = `{"device_code":"d","user_code":"U","verification_uri":"https://brand.example/l","expires_in":600,"interval":` + n + `}`
		c, _ := newClient(newFakeClock())
		if a := authorize(t, c, as); a.Interval != MaxInterval {
			t.Errorf("interval %s: polled every %v, want %v", n, a.Interval, MaxInterval)
		}
	}
}
