// Package httpx is the hardened HTTP client behind every request pact sends:
// bounded time, bounded bodies, a strict redirect policy, plain http only to
// loopback hosts, and an opt-in trace (--debug) with every secret redacted.
//
// Redirect and scheme rules follow the CLI contract ("brand" argument):
// at most 5 redirects, never from https to http, and http only for
// localhost, 127.0.0.0/8 and [::1].
package httpx

import (
	"github.com/pact-cli/pact/errs"

	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// Defaults used when Options leaves a field zero.
const (
	DefaultTimeout      = 20 * time.Second // whole exchange, body included
	DefaultMaxRedirects = 5
	// DefaultMaxBody is the largest body pact reads from any server (1 MiB).
	DefaultMaxBody int64 = 1 << 20
)

// AcceptJWKS is the Accept header of every JSON Web Key Set fetch (RFC 7517
// §8.5 media type first, plain JSON for servers that only know that).
const AcceptJWKS = "application/jwk-set+json, application/json"

// Options configures NewClient. The zero value is usable.
type Options struct {
	// Timeout bounds one whole exchange, from dial to the last body byte.
	// A server that stalls mid-body fails with a timeout. 0 = DefaultTimeout.
	Timeout time.Duration
	// MaxRedirects is how many redirects are followed. 0 = DefaultMaxRedirects;
	// negative = none.
	MaxRedirects int
	// Debug, when set, receives a redacted trace of each exchange.
	Debug io.Writer
	// UserAgent is sent on every request ("pact/dev" when empty).
	UserAgent string
	// Transport is the base round tripper; nil = a clone of http.DefaultTransport.
	Transport http.RoundTripper
}

// NewClient returns an *http.Client that enforces the rules of this package.
// Callers read bodies with ReadBody so that the size cap is applied too.
func NewClient(o Options) *http.Client {
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxRedirects == 0 {
		o.MaxRedirects = DefaultMaxRedirects
	}
	if o.UserAgent == "" {
		o.UserAgent = "pact/dev"
	}
	base := o.Transport
	if base == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.DialContext = (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext
		t.TLSHandshakeTimeout = 10 * time.Second
		t.ResponseHeaderTimeout = o.Timeout
		t.MaxIdleConnsPerHost = 4
		base = t
	}
	var rt http.RoundTripper = &schemeGuard{next: &userAgent{ua: o.UserAgent, next: base}}
	if o.Debug != nil {
		rt = &tracer{w: o.Debug, next: rt}
	}
	max := o.MaxRedirects
	return &http.Client{
		Timeout:   o.Timeout,
		Transport: rt,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if max < 0 || len(via) > max {
				return &RedirectError{URL: req.URL.String(), Reason: fmt.Sprintf("more than %d redirects (a loop?)", max)}
			}
			if err := checkCredentialRedirect(via[0], req); err != nil {
				return err
			}
			prev := via[len(via)-1].URL
			if prev.Scheme == "https" && req.URL.Scheme == "http" {
				return &RedirectError{URL: req.URL.String(), Reason: "redirect from https to http refused"}
			}
			if err := CheckURL(req.URL); err != nil {
				return &RedirectError{URL: req.URL.Redacted(), Reason: err.Error()}
			}
			return nil
		},
	}
}

// RedirectError reports a redirect that the policy refused.
type RedirectError struct {
	URL    string // where the server tried to send us
	Reason string
	// Credentialed is true when the refused request carried a credential
	// (checkCredentialRedirect): a verdict on the server's answer, not a
	// network failure, and not worth retrying.
	Credentialed bool
}

// Error names the URL with its secret parameters redacted (RedactURL): it
// is printed without --debug too.
func (e *RedirectError) Error() string {
	where := e.URL
	if u, err := url.Parse(e.URL); err == nil {
		where = RedactURL(u)
	}
	return fmt.Sprintf("redirect to %s: %s", where, e.Reason)
}

// ErrInsecureURL is wrapped by CheckURL's errors.
var ErrInsecureURL = errors.New("insecure URL")

// ErrUserinfo is wrapped by CheckURL's error for a URL that carries a user
// name or password (https://user:pass@host/…). It also matches
// ErrInsecureURL.
var ErrUserinfo = fmt.Errorf("%w: credentials in a URL", ErrInsecureURL)

// CheckURL accepts https URLs, and http URLs whose host is a loopback host
// (localhost, 127.0.0.0/8, [::1]), without userinfo. Anything else is
// refused with an error wrapping ErrInsecureURL (ErrUserinfo for a URL of
// the form scheme://user:password@host: no URL from a card, metadata, a
// redirect or the User may carry credentials). The password never appears
// in the error.
func CheckURL(u *url.URL) error {
	if u.User != nil {
		return errs.New(fmt.Sprintf("%s carries a user name or password before the host; pact refuses credentials in URLs", u.Redacted()), ErrUserinfo)
	}
	switch u.Scheme {
	case "https":
		if u.Host == "" {
			return errs.New(fmt.Sprintf("%q has no host", u.String()), ErrInsecureURL)
		}
		return nil
	case "http":
		if IsLoopback(u.Hostname()) {
			return nil
		}
		return errs.New(fmt.Sprintf("%s uses plain http; only loopback hosts (localhost, 127.0.0.1, [::1]) may use http, use https", u.Redacted()), ErrInsecureURL)
	default:
		return errs.New(fmt.Sprintf("%q is not an http(s) URL", u.String()), ErrInsecureURL)
	}
}

// IsLoopback reports whether host (no port) is localhost, in 127.0.0.0/8, or ::1.
func IsLoopback(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// ErrBodyTooLarge is returned by ReadBody when a body exceeds its limit.
type ErrBodyTooLarge struct{ Limit int64 }

func (e *ErrBodyTooLarge) Error() string {
	return fmt.Sprintf("response body is larger than %s; refusing to read more", humanBytes(e.Limit))
}

// ReadBody reads at most limit bytes (DefaultMaxBody when limit <= 0) from r.
// A longer body fails with *ErrBodyTooLarge instead of being truncated silently.
func ReadBody(r io.Reader, limit int64) ([]byte, error) {
	if limit <= 0 {
		limit = DefaultMaxBody
	}
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, Describe(err)
	}
	if int64(len(b)) > limit {
		return nil, &ErrBodyTooLarge{Limit: limit}
	}
	return b, nil
}

// Describe turns transport errors into sentences a person can act on
// (timeouts, refused connections); other errors are returned unchanged.
func Describe(err error) error {
	if err == nil {
		return nil
	}
	var re *RedirectError
	if errors.As(err, &re) {
		return re
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
		return &NetError{Err: fmt.Errorf("%w: %w", ErrNoSuchHost, err), Msg: "no such host: " + dnsErr.Name + " does not exist (check the spelling)"}
	}
	if errors.As(err, &dnsErr) {
		// The name did not resolve for another reason (no DNS server
		// answers, it timed out or failed): no connection was tried, so
		// "is the server running?" would point the wrong way.
		why := "no DNS server answered, or it failed"
		if dnsErr.IsTimeout {
			why = "no DNS server answered in time"
		}
		return &NetError{Err: err, Msg: fmt.Sprintf("the name %s did not resolve (%s): check this machine's network and DNS settings", dnsErr.Name, why)}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, context.DeadlineExceeded) {
		return &NetError{Err: err, Msg: "timed out: the server is too slow or stalled"}
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "dial" {
		return &NetError{Err: err, Msg: "could not connect: is the server running?"}
	}
	var ue *url.Error
	if errors.As(err, &ue) && !errors.Is(err, context.Canceled) && !errors.Is(err, ErrInsecureURL) {
		// Any other transport failure: its cause, without the method and
		// URL Go puts in front (kept in Detail).
		msg := ue.Err.Error()
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) {
			msg = "the connection was closed before an answer arrived"
		}
		return &NetError{Err: err, Msg: msg}
	}
	return err
}

// ErrNoSuchHost is wrapped by Describe's error when a host name does not
// resolve.
var ErrNoSuchHost = errors.New("no such host")

// NetError is a transport failure with a readable explanation.
type NetError struct {
	Msg string
	Err error
}

// Error is the explanation in plain words; Detail adds the request.
func (e *NetError) Error() string { return e.Msg }

// Detail is the request and the transport error, for --json and --debug.
func (e *NetError) Detail() string {
	var ue *url.Error
	if errors.As(e.Err, &ue) {
		return fmt.Sprintf("%s %s: %v", ue.Op, ue.URL, ue.Err)
	}
	return e.Err.Error()
}
func (e *NetError) Unwrap() error { return e.Err }

func humanBytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// schemeGuard refuses to send a request to a URL that CheckURL rejects, so
// that no code path can reach a non-loopback http server by accident.
type schemeGuard struct{ next http.RoundTripper }

func (g *schemeGuard) RoundTrip(r *http.Request) (*http.Response, error) {
	if err := CheckURL(r.URL); err != nil {
		return nil, err
	}
	return g.next.RoundTrip(r)
}

type userAgent struct {
	ua   string
	next http.RoundTripper
}

func (u *userAgent) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("User-Agent") == "" {
		r = r.Clone(r.Context())
		r.Header.Set("User-Agent", u.ua)
	}
	return u.next.RoundTrip(r)
}
