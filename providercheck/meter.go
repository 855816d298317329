package providercheck

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// meter is the transport of a run: it refuses origins outside the run's
// rule, spaces requests at least interval apart, stops after max requests
// (ErrBudget), and on 429 waits Retry-After (at most maxWait) and sends
// the request once more (§6: "personal agents SHOULD wait Retry-After
// before retrying"). A 429 without a usable Retry-After is returned as is.
type meter struct {
	next      http.RoundTripper
	max       int
	interval  time.Duration
	maxWait   time.Duration
	allowed   func(origin string) bool
	onLimited func(exchange)

	mu      sync.Mutex
	n       int
	limited int
	// unretried counts the 429s returned as they are (no usable
	// Retry-After, one over maxWait, or the answer to the retry);
	// whyUnretried says why the last one was.
	unretried    int
	whyUnretried string
	last         time.Time
	err          error
}

func newMeter(next http.RoundTripper, max int, interval, maxWait time.Duration, allowed func(string) bool) *meter {
	if next == nil {
		next = http.DefaultTransport
	}
	return &meter{next: next, max: max, interval: interval, maxWait: maxWait, allowed: allowed}
}

// ErrOrigin refuses a request to an origin that is neither the Brand's nor
// its Provider's.
var ErrOrigin = errors.New("refused: not the Brand's or its Provider's origin")

func (m *meter) RoundTrip(req *http.Request) (*http.Response, error) {
	if o := originOf(req.URL.String()); !m.allowed(o) {
		return nil, fmt.Errorf("%w: %s", ErrOrigin, o)
	}
	resp, err := m.send(req)
	if err != nil || resp.StatusCode != http.StatusTooManyRequests {
		return resp, err
	}
	wait, ok := retryAfter(resp.Header.Get("Retry-After"), time.Now())
	why := ""
	switch {
	case !ok:
		why = "no usable Retry-After"
	case wait > m.maxWait:
		why = fmt.Sprintf("Retry-After %s, over the %s pact waits at most", wait, m.maxWait)
	case req.Body != nil && req.GetBody == nil:
		why = "its body could not be sent again"
	}
	m.limit(req, resp, wait, ok, why == "", false)
	if why != "" {
		m.unretriedBecause(why)
		return resp, nil
	}
	resp.Body.Close()
	t := time.NewTimer(wait)
	select {
	case <-t.C:
	case <-req.Context().Done():
		t.Stop()
		return nil, req.Context().Err()
	}
	again := req.Clone(req.Context())
	if req.GetBody != nil {
		b, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		again.Body = b
	}
	resp, err = m.send(again)
	if err != nil || resp.StatusCode != http.StatusTooManyRequests {
		return resp, err
	}
	// 429 again after the wait: counted and kept like the first, and
	// returned as it is (retried once only).
	wait2, ok2 := retryAfter(resp.Header.Get("Retry-After"), time.Now())
	m.limit(again, resp, wait2, ok2, false, true)
	m.unretriedBecause(fmt.Sprintf("429 again after waiting its Retry-After of %s", wait))
	return resp, nil
}

// limit counts a 429 and hands it to onLimited: wait is its Retry-After
// (ok: usable), retried whether pact waits it out and sends the request
// again, again whether it answered such a second send.
func (m *meter) limit(req *http.Request, resp *http.Response, wait time.Duration, ok, retried, again bool) {
	m.mu.Lock()
	m.limited++
	m.mu.Unlock()
	if m.onLimited != nil {
		m.onLimited(exchange{method: req.Method, url: req.URL.String(), status: resp.StatusCode, header: resp.Header.Clone(),
			waited: wait, hasRetryAfter: ok, retried: retried, again: again})
	}
}

// unretriedBecause counts a 429 returned to the check as it is, and why.
func (m *meter) unretriedBecause(why string) {
	m.mu.Lock()
	m.unretried++
	m.whyUnretried = why
	m.mu.Unlock()
}

// send paces and counts one request.
func (m *meter) send(req *http.Request) (*http.Response, error) {
	m.mu.Lock()
	if m.n >= m.max {
		m.err = ErrBudget
		m.mu.Unlock()
		return nil, ErrBudget
	}
	m.n++
	wait := time.Until(m.last.Add(m.interval))
	m.last = time.Now().Add(max(wait, 0))
	m.mu.Unlock()
	if wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-req.Context().Done():
			t.Stop()
			return nil, req.Context().Err()
		}
	}
	return m.next.RoundTrip(req)
}

func (m *meter) counts() (int, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.n, m.limited
}

// unretriedCount is how many 429s of the run were returned to the checks
// as they were, and why the last one was.
func (m *meter) unretriedCount() (int, string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.unretried, m.whyUnretried
}

func (m *meter) lastErr() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.err
}

// retryAfter reads delay-seconds or an HTTP-date (RFC 9110 §10.2.3); ok is
// false when the header is missing or unreadable.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil && s >= 0 {
		return time.Duration(min(s, 86400)) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

func originOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host)
}

// exchange is one request and its answer, as the checks describe them.
type exchange struct {
	method, url   string
	status        int
	header        http.Header
	body          []byte
	err           error
	waited        time.Duration // a 429's Retry-After (waited out only when retried)
	hasRetryAfter bool
	// retried: pact waited waited and sent the request again; again: this
	// 429 answered such a second send.
	retried, again bool
}

// maxBody caps what a check reads of an answer.
const maxBody = 1 << 20

// request is what a check sends.
type request struct {
	method, url string
	header      map[string]string
	body        []byte
	// a2a marks an A2A operation, whose answers errors.content-type reads.
	a2a bool
}

// do sends req with the run's client; a transport error is in the
// exchange (err), not returned.
func (r *runner) do(ctx context.Context, req request) exchange {
	var body io.Reader
	if req.body != nil {
		body = bytes.NewReader(req.body)
	}
	hr, err := http.NewRequestWithContext(ctx, req.method, req.url, body)
	ex := exchange{method: req.method, url: req.url}
	if err != nil {
		ex.err = err
		return ex
	}
	for k, v := range req.header {
		hr.Header.Set(k, v)
	}
	resp, err := r.hc.Do(hr)
	if err != nil {
		ex.err = err
		return ex
	}
	defer resp.Body.Close()
	ex.status, ex.header = resp.StatusCode, resp.Header
	ex.body, _ = io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if req.a2a {
		r.record(ex)
	}
	return ex
}

// record keeps the answers of A2A operations (a 200 or an error envelope)
// for errors.content-type.
func (r *runner) record(e exchange) {
	if len(e.body) == 0 {
		return
	}
	var env envelope
	if e.status == 200 || (jsonUnmarshal(e.body, &env) == nil && env.Error != nil) {
		r.answers = append(r.answers, e)
	}
}
