package providercheck

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/pact-cli/pact/profile"
)

// timedTransport records when each request leaves (after the meter).
type timedTransport struct {
	next  http.RoundTripper
	mu    sync.Mutex
	times []time.Time
}

func (tt *timedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	tt.mu.Lock()
	tt.times = append(tt.times, time.Now())
	tt.mu.Unlock()
	return tt.next.RoundTrip(r)
}

// defaultRunner is the runner Run builds for the Brand at brand from
// Options that set no budget (MaxRequests zero) and the interval given (0:
// the default), sending through tt.
func defaultRunner(tt *timedTransport, brand string, interval time.Duration) *runner {
	return newRunner(Options{HTTP: &http.Client{Transport: tt}, Config: &profile.Config{}, CardURL: brand + "/.well-known/agent-card.json", Interval: interval})
}

// The run is paced as documented (docs/provider-check.md, README: at most
// 20 requests a second) when Options set no interval: 21 requests take at
// least 20 × 50 ms from the first to the last. (A request leaves no
// earlier than its slot, but may leave later on a loaded machine; the
// first one's lateness is allowed for, one interval.)
func TestRunIsPacedTwentyASecondByDefault(t *testing.T) {
	var rc recorder
	srv := rc.server(t, func(n int, w http.ResponseWriter) { w.WriteHeader(http.StatusNoContent) })
	tt := &timedTransport{next: http.DefaultTransport}
	r := defaultRunner(tt, srv.URL, 0)
	const n = 21
	for i := 0; i < n; i++ {
		resp, err := r.hc.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if len(tt.times) != n || rc.count() != n {
		t.Fatalf("%d requests left, %d arrived; want %d", len(tt.times), rc.count(), n)
	}
	span := tt.times[n-1].Sub(tt.times[0])
	if min := (n - 2) * DefaultInterval; span < min {
		t.Errorf("%d requests in %v, want at least %v: the run is not paced at one request per %v", n, span, min, DefaultInterval)
	}
}

// A run stops at the documented budget (at most 200 requests a run) when
// Options set none: the 201st request is refused with ErrBudget and never
// sent.
func TestRunStopsAtTwoHundredRequestsByDefault(t *testing.T) {
	var rc recorder
	srv := rc.server(t, func(n int, w http.ResponseWriter) { w.WriteHeader(http.StatusNoContent) })
	tt := &timedTransport{next: http.DefaultTransport}
	r := defaultRunner(tt, srv.URL, time.Nanosecond) // the budget alone: no pacing to wait out
	var err error
	sent := 0
	for ; sent < 2*DefaultMaxRequests; sent++ {
		var resp *http.Response
		req, _ := http.NewRequestWithContext(context.Background(), "GET", srv.URL, nil)
		if resp, err = r.hc.Do(req); err != nil {
			break
		}
		resp.Body.Close()
	}
	if !errors.Is(err, ErrBudget) || sent != 200 || rc.count() != 200 {
		t.Fatalf("stopped after %d requests (%d arrived): %v; want ErrBudget after 200", sent, rc.count(), err)
	}
}
