package deviceflow

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// RFC 8628 §3.2, §3.5: the client polls no faster than the interval the
// server gives. Every other fixture says 5, the default, so a client that
// ignored "interval" would pass them; here the server asks for 7 seconds
// and then 2.
func TestRFC8628_PollWaitsTheIntervalTheServerGives(t *testing.T) {
	for _, c := range []struct {
		interval int
		wait     time.Duration // PollWait: 1.2 × the interval
	}{{7, 8400 * time.Millisecond}, {2, 2400 * time.Millisecond}} {
		as := newFakeAS(t)
		as.devResp = fmt.Sprintf(`{"device_code":"d","user_code":"U","verification_uri":"https://brand.example/l","expires_in":600,"interval":%d}`, c.interval)
		as.token(400, `{"error":"authorization_pending"}`)
		as.token(200, okToken)
		clk := newFakeClock()
		cl, _ := newClient(clk)
		a := authorize(t, cl, as)
		if a.Interval != time.Duration(c.interval)*time.Second {
			t.Errorf("interval %d: Authorization.Interval = %v", c.interval, a.Interval)
		}
		if _, err := cl.Poll(context.Background(), as.srv.URL+"/token", a); err != nil {
			t.Fatal(err)
		}
		want := []time.Duration{c.wait, c.wait}
		if got := clk.Waits(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("interval %d: waits = %v, want %v", c.interval, got, want)
		}
	}
}

// PACT §5.3 (RFC 8628 §3.3.1): verification_uri_complete is the link pact
// opens in a browser, so it is held to the rules of verification_uri
// (https, plain http on loopback only) even when verification_uri is good.
func TestSection5_3_VerificationURICompleteMustBeHTTPS(t *testing.T) {
	for _, tc := range []struct {
		uri string
		ok  bool
	}{
		{"https://brand.example/login?user_code=U", true},
		{"http://127.0.0.1:9/login?user_code=U", true},
		{"http://brand.example/login?user_code=U", false},
		{"javascript:alert(1)", false},
		{"file:///etc/passwd", false},
		{"ftp://brand.example/login", false},
	} {
		as := newFakeAS(t)
		as.devResp = fmt.Sprintf(`{"device_code":"d","user_code":"U","verification_uri":"https://brand.example/login","verification_uri_complete":%q,"expires_in":60}`, tc.uri)
		c, _ := newClient(newFakeClock())
		a, err := c.Authorize(context.Background(), as.srv.URL+"/device", []string{"orders:read"}, cardScopes)
		if tc.ok {
			if err != nil || a.VerificationURIComplete != tc.uri {
				t.Errorf("%s: %v, want it accepted as the link", tc.uri, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "verification_uri_complete") {
			t.Errorf("%s: err = %v, want a refusal naming verification_uri_complete", tc.uri, err)
		}
	}
}
