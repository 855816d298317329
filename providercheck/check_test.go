package providercheck

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// Every check is declared in full, with a unique id in its group.
func TestChecksAreDeclared(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range Checks() {
		if seen[c.ID] {
			t.Errorf("%s declared twice", c.ID)
		}
		seen[c.ID] = true
		if !strings.HasPrefix(c.ID, c.Group+".") {
			t.Errorf("%s is not in its group %s", c.ID, c.Group)
		}
		if !strings.Contains(c.Clause, "§") || c.Title == "" || c.Expect == "" || c.run == nil {
			t.Errorf("%s: clause %q, title %q, expect %q: incomplete", c.ID, c.Clause, c.Title, c.Expect)
		}
	}
	for _, g := range Groups() {
		cs, err := Select([]string{g})
		if err != nil || len(cs) == 0 {
			t.Errorf("group %s: %d checks, %v", g, len(cs), err)
		}
	}
	if _, err := Select([]string{"nosuch"}); err == nil {
		t.Error("an unknown group was accepted")
	}
}

// docs/provider-check.md explains every check.
func TestEveryCheckIsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/provider-check.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range Checks() {
		if !strings.Contains(string(doc), "`"+c.ID+"`") {
			t.Errorf("docs/provider-check.md does not explain %s", c.ID)
		}
	}
}

// recorder is a server that answers with answer and records the time of
// every request.
type recorder struct {
	mu    sync.Mutex
	times []time.Time
}

func (rc *recorder) server(t *testing.T, answer func(n int, w http.ResponseWriter)) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc.mu.Lock()
		rc.times = append(rc.times, time.Now())
		n := len(rc.times)
		rc.mu.Unlock()
		answer(n, w)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func (rc *recorder) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.times)
}

func get(m *meter, u string) (*http.Response, error) {
	req, _ := http.NewRequestWithContext(context.Background(), "GET", u, nil)
	return m.RoundTrip(req)
}

// §6: a 429 with Retry-After is waited out, then the request is sent once
// more; without Retry-After it is not retried.
func TestSection6_429RetryAfterIsHonoured(t *testing.T) {
	var rc recorder
	srv := rc.server(t, func(n int, w http.ResponseWriter) {
		if n == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	var limited []exchange
	m := newMeter(http.DefaultTransport, 10, time.Millisecond, 5*time.Second, func(string) bool { return true })
	m.onLimited = func(e exchange) { limited = append(limited, e) }
	resp, err := get(m, srv.URL)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%v %v", resp, err)
	}
	resp.Body.Close()
	if rc.count() != 2 || len(limited) != 1 || !limited[0].hasRetryAfter {
		t.Fatalf("%d requests, %d limited", rc.count(), len(limited))
	}
	if gap := rc.times[1].Sub(rc.times[0]); gap < time.Second {
		t.Errorf("retried after %s, before Retry-After (1 s)", gap)
	}

	var rc2 recorder
	srv2 := rc2.server(t, func(n int, w http.ResponseWriter) { w.WriteHeader(http.StatusTooManyRequests) })
	resp, err = get(m, srv2.URL)
	if err != nil || resp.StatusCode != 429 {
		t.Fatalf("%v %v", resp, err)
	}
	resp.Body.Close()
	if rc2.count() != 1 {
		t.Errorf("a 429 without Retry-After was sent %d times", rc2.count())
	}
}

// Nothing is sent to an origin the run does not allow, and no more than
// the budget.
func TestMeterConfinesAndBoundsTheRun(t *testing.T) {
	var rc recorder
	srv := rc.server(t, func(n int, w http.ResponseWriter) { w.WriteHeader(http.StatusOK) })
	m := newMeter(http.DefaultTransport, 2, time.Millisecond, time.Second, func(o string) bool { return o == "http://brand.example" })
	if _, err := get(m, srv.URL); !errors.Is(err, ErrOrigin) {
		t.Errorf("another origin: %v", err)
	}
	if rc.count() != 0 {
		t.Fatal("a request reached an origin outside the run")
	}
	m = newMeter(http.DefaultTransport, 2, time.Millisecond, time.Second, func(string) bool { return true })
	for i := 0; i < 3; i++ {
		resp, err := get(m, srv.URL)
		if i < 2 && err == nil {
			resp.Body.Close()
		}
		if i == 2 && !errors.Is(err, ErrBudget) {
			t.Errorf("request 3 of a budget of 2: %v", err)
		}
	}
	if rc.count() != 2 {
		t.Errorf("%d requests sent, budget 2", rc.count())
	}
}
