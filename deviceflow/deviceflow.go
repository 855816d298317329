package deviceflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/pact-cli/pact/httpx"
)

// Grant types used at the token endpoint (RFC 8628 §3.4, RFC 6749 §6).
const (
	GrantTypeDeviceCode   = "urn:ietf:params:oauth:grant-type:device_code"
	GrantTypeRefreshToken = "refresh_token"
)

// DefaultInterval is the polling interval when the device authorization
// response omits "interval" (RFC 8628 §3.2: 5 seconds).
const DefaultInterval = 5 * time.Second

// SlowDownStep is added to the polling interval on every "slow_down"
// (RFC 8628 §3.5: 5 seconds).
const SlowDownStep = 5 * time.Second

// MaxInterval is the longest polling interval pact keeps (60 s), whatever
// the server's "interval" or its slow_downs ask: a login is waited for by
// a person, and an interval of 100,000 s would leave one poll a day.
const MaxInterval = 60 * time.Second

// MaxExpiresIn is the longest a login is waited for (30 minutes), whatever
// the server's "expires_in" says (RFC 8628's example is 1800 s; one of
// 999,999,999 s would keep pact polling for 31 years). Past it the login
// ends as expired (ErrExpiredToken).
const MaxExpiresIn = 30 * time.Minute

// maxTransient bounds consecutive transient poll failures (network errors,
// HTTP 5xx or 429) before Poll gives up.
const maxTransient = 3

// Secret is a credential (device code, access or refresh token). Its String,
// GoString and JSON forms are "[REDACTED]" so it cannot leak through fmt or
// logs by accident; call Reveal for the value.
type Secret string

// Reveal returns the secret's value. Only send it where it belongs.
func (s Secret) Reveal() string { return string(s) }

// String returns "[REDACTED]" (or "" for an empty secret).
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return "[REDACTED]"
}

// GoString returns the redacted form, for %#v.
func (s Secret) GoString() string { return `"` + s.String() + `"` }

// MarshalJSON writes the redacted form: secrets are stored through a secret
// store with Reveal, never through JSON.
func (s Secret) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// Clock is the time source Poll waits on; tests pass a fake one.
type Clock interface {
	Now() time.Time
	// After returns a channel that receives once d has elapsed.
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

// RealClock is the real time, the Clock of a Client whose Clock is nil.
var RealClock Clock = realClock{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Client is the personal agent's device-code client (PACT §5.3).
type Client struct {
	// HTTP sends every request; nil means http.DefaultClient. Callers pass
	// the hardened client (httpx).
	HTTP *http.Client
	// ClientID is the personal agent's issuer URL, sent as client_id.
	ClientID string
	// PAToken mints a fresh personal-agent JWT (PACT §3.2) for the
	// authorization server's audience, to be sent to endpoint. It is called
	// once per request, so no JWT is ever reused across calls minutes
	// apart, and it is told where the JWT goes so that it can refuse an
	// endpoint outside the Provider's registration
	// (profile.BoundMinter.Token, the endpoint-origin rule); such an error
	// is returned unchanged (wrapped) and ends Poll at once.
	PAToken func(ctx context.Context, endpoint string) (string, error)
	// Clock is the time source for polling; nil means the real clock.
	Clock Clock
}

// Authorization is a device authorization response (RFC 8628 §3.2) plus
// what Poll needs to continue.
type Authorization struct {
	DeviceCode Secret `json:"-"`
	UserCode   string `json:"user_code"`
	// VerificationURI and VerificationURIComplete are checked to be https
	// (plain http only on loopback). VerificationURIComplete falls back to
	// VerificationURI when the server omits it. Show the complete one
	// (PACT §5.3); never proxy, frame or observe it.
	VerificationURI         string `json:"verification_uri"`
	VerificationURIComplete string `json:"verification_uri_complete"`
	// ExpiresIn is the device code lifetime in seconds (the server's, at
	// most MaxExpiresIn); ExpiresAt is the Clock time it ends.
	ExpiresIn int       `json:"expires_in"`
	ExpiresAt time.Time `json:"expires_at"`
	// Interval is the minimum poll interval (default 5 s, at most
	// MaxInterval).
	Interval time.Duration `json:"interval"`
	// Scopes is what was requested, in request order.
	Scopes []string `json:"scopes"`
}

// Token is a token endpoint success response (RFC 6749 §5.1, PACT §5.3).
type Token struct {
	TokenType    string `json:"token_type"`
	AccessToken  Secret `json:"-"`
	RefreshToken Secret `json:"-"`
	// ExpiresIn is the access token lifetime in seconds (0: not given).
	ExpiresIn int `json:"expires_in"`
	// Scope is the granted scope ids, parsed from the space-separated
	// "scope" (PACT §5.3: possibly fewer than requested). When the server
	// omits it, RFC 6749 §5.1 means "as requested" and Scope is the request.
	Scope []string `json:"scope"`
	// ScopeOmitted is true when the response had no "scope" member.
	ScopeOmitted bool `json:"-"`
}

// Errors callers map to exit codes: ErrAccessDenied and ErrExpiredToken mean
// the User's consent was refused or never came (exit 4, see IsConsentError);
// ErrUnauthorized means the personal-agent JWT was refused (401, exit 3);
// ErrInvalidGrant on refresh means the grant is gone and the User must log in
// again. Anything else is a plain failure (exit 1).
var (
	ErrAccessDenied = errors.New("the permission was declined at the Brand's login page")
	ErrExpiredToken = errors.New("the login code expired before it was approved: log in again")
	ErrUnauthorized = errors.New("the Brand's login server did not accept this personal agent's identity: check `pact whoami` and that your jwks_uri is reachable")
	ErrInvalidGrant = errors.New("the permission given to this personal agent is no longer valid: log in again")
	ErrInvalidScope = errors.New("the Brand's login server does not know a permission asked for")
)

// UnauthorizedError is a 401 on the personal-agent JWT whose cause is
// likely the clock: the server's Date differs from the local clock by more
// than httpx.MaxClockSkew. It matches ErrUnauthorized.
type UnauthorizedError struct {
	ClockOffset time.Duration // local clock behind the server's (negative: ahead)
	Hint        string        // httpx.ClockHint(ClockOffset)
}

func (e *UnauthorizedError) Error() string {
	return "the Brand's login server did not accept this personal agent's identity: " + e.Hint
}

// Is makes errors.Is(err, ErrUnauthorized) true.
func (e *UnauthorizedError) Is(target error) bool { return target == ErrUnauthorized }

// IsConsentError reports whether err means the User refused consent or let
// the device code expire (CLI exit code 4).
func IsConsentError(err error) bool {
	return errors.Is(err, ErrAccessDenied) || errors.Is(err, ErrExpiredToken)
}

// OAuthError is an OAuth error response (RFC 6749 §5.2, RFC 8628 §3.5).
// Code and Description are the server's text, exact but for any of our
// secrets removed and truncation: printers sanitise them for a terminal
// (iostreams.Sanitize), --json keeps them exact; Reason is the code made
// safe for a --json reason.
type OAuthError struct {
	StatusCode  int
	Code        string
	Description string
}

// Error is the failure in plain words; Detail has the OAuth code and status.
func (e *OAuthError) Error() string {
	// A code with a meaning of its own says what happened (the User
	// declined, the code expired…), not a generic refusal.
	switch e.Code {
	case "access_denied":
		return ErrAccessDenied.Error()
	case "expired_token":
		return ErrExpiredToken.Error()
	case "invalid_grant":
		return ErrInvalidGrant.Error()
	case "invalid_scope":
		return ErrInvalidScope.Error()
	}
	if e.StatusCode >= 500 {
		return "the Brand's login server failed; try again later"
	}
	return "the Brand's login server refused the request; try again, or tell the Brand if it persists"
}

// Detail is the wire detail for --json and --debug, e.g.
// `invalid_client (HTTP 400): unknown client`.
func (e *OAuthError) Detail() string {
	msg := fmt.Sprintf("%s (HTTP %d)", e.Code, e.StatusCode)
	if e.Description != "" {
		msg += ": " + e.Description
	}
	return msg
}

// NetError is a request to the Brand's login server that got no answer.
type NetError struct {
	Endpoint string // the URL posted to
	Err      error  // the transport error
}

func (e *NetError) Error() string {
	host := e.Endpoint
	if u, err := url.Parse(e.Endpoint); err == nil && u.Host != "" {
		host = u.Host
	}
	var te interface{ Timeout() bool }
	if errors.As(e.Err, &te) && te.Timeout() {
		return "could not reach the Brand's login server (" + host + "): it did not answer in time; try again"
	}
	return "could not reach the Brand's login server (" + host + "); check your connection and try again"
}

// Detail is the transport error and the endpoint.
func (e *NetError) Detail() string { return "POST " + e.Endpoint + ": " + e.Err.Error() }
func (e *NetError) Unwrap() error  { return e.Err }

// RedirectError is a request to the Brand's login server answered with a
// redirect that pact refused to follow: every such request carries the
// personal-agent JWT and often a device code or refresh token, which go to
// the checked endpoint only (httpx refuses every redirect of a credentialed
// request). It is a verdict on the answer, not a network failure: Poll
// does not retry it. It unwraps to the *httpx.RedirectError.
type RedirectError struct {
	Endpoint string // the URL posted to
	Err      *httpx.RedirectError
}

func (e *RedirectError) Error() string {
	host := e.Endpoint
	if u, err := url.Parse(e.Endpoint); err == nil && u.Host != "" {
		host = u.Host
	}
	return "the Brand's login server (" + host + ") answered with a redirect, and pact never sends your credentials along a redirect, so nothing was sent there; tell the Brand if it persists"
}

// Detail is the refused redirect and the endpoint.
func (e *RedirectError) Detail() string { return "POST " + e.Endpoint + ": " + e.Err.Error() }
func (e *RedirectError) Unwrap() error  { return e.Err }

// ServerError is a non-200 answer without an OAuth error body.
type ServerError struct{ StatusCode int }

func (e *ServerError) Error() string {
	if e.StatusCode >= 500 {
		return "the Brand's login server failed; try again later"
	}
	return "the Brand's login server gave an answer pact cannot use; try again, or tell the Brand if it persists"
}

// Detail names the status.
func (e *ServerError) Detail() string {
	return fmt.Sprintf("HTTP %d without an OAuth error", e.StatusCode)
}

// Is maps OAuth error codes to the package's sentinel errors.
func (e *OAuthError) Is(target error) bool {
	switch e.Code {
	case "access_denied":
		return target == ErrAccessDenied
	case "expired_token":
		return target == ErrExpiredToken
	case "invalid_grant":
		return target == ErrInvalidGrant
	case "invalid_scope":
		return target == ErrInvalidScope
	}
	return false
}

func (c *Client) clock() Clock {
	if c.Clock == nil {
		return realClock{}
	}
	return c.Clock
}

func (c *Client) httpClient() *http.Client {
	if c.HTTP == nil {
		return http.DefaultClient
	}
	return c.HTTP
}

// ErrScopeNotOnCard is returned by Authorize, before any request, for a
// scope id the Brand's card does not list.
var ErrScopeNotOnCard = errors.New("scope not on the Brand's card")

// Authorize starts a device authorization (RFC 8628 §3.1, PACT §5.3) at
// deviceAuthorizationURL for scopes. cardScopes is the card's scope map
// (id → description); a scope id not on the card is refused before any
// request is made (PACT §5.2). Duplicate ids are sent once.
//
// Errors: a scope problem, a non-https verification URI, ErrUnauthorized on
// 401, an *OAuthError (e.g. invalid_scope) on an OAuth error response, or a
// transport error. The device code never appears in an error.
func (c *Client) Authorize(ctx context.Context, deviceAuthorizationURL string, scopes []string, cardScopes map[string]string) (*Authorization, error) {
	if _, err := checkURL(deviceAuthorizationURL); err != nil {
		return nil, fmt.Errorf("deviceflow: device authorization URL: %w", err)
	}
	if c.ClientID == "" {
		return nil, errors.New("deviceflow: Client.ClientID (the personal agent's issuer) is empty")
	}
	if len(scopes) == 0 {
		return nil, errors.New("deviceflow: no scope requested")
	}
	var unknown, uniq []string
	seen := map[string]bool{}
	for _, s := range scopes {
		if _, ok := cardScopes[s]; !ok || s == "" || strings.ContainsAny(s, " \t\r\n\"\\") {
			unknown = append(unknown, fmt.Sprintf("%q", s))
			continue
		}
		if !seen[s] {
			seen[s] = true
			uniq = append(uniq, s)
		}
	}
	if len(unknown) > 0 {
		offered := make([]string, 0, len(cardScopes))
		for id := range cardScopes {
			offered = append(offered, id)
		}
		sort.Strings(offered)
		return nil, fmt.Errorf("%w: %s (ask only for permissions the Brand lists; it offers %s)",
			ErrScopeNotOnCard, strings.Join(unknown, ", "), strings.Join(offered, ", "))
	}
	form := url.Values{"client_id": {c.ClientID}, "scope": {strings.Join(uniq, " ")}}
	start := c.clock().Now()
	status, body, err := c.post(ctx, deviceAuthorizationURL, form)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK || hasOAuthError(body) {
		return nil, responseError(status, body)
	}
	var raw struct {
		DeviceCode              string      `json:"device_code"`
		UserCode                string      `json:"user_code"`
		VerificationURI         string      `json:"verification_uri"`
		VerificationURIComplete string      `json:"verification_uri_complete"`
		ExpiresIn               json.Number `json:"expires_in"`
		Interval                json.Number `json:"interval"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, errors.New("deviceflow: device authorization response is not a JSON object")
	}
	var problems []string
	if raw.DeviceCode == "" {
		problems = append(problems, "device_code missing")
	}
	if raw.UserCode == "" {
		problems = append(problems, "user_code missing")
	}
	if raw.VerificationURI == "" {
		problems = append(problems, "verification_uri missing")
	} else if _, err := checkURL(raw.VerificationURI); err != nil {
		problems = append(problems, "verification_uri: "+err.Error())
	}
	if raw.VerificationURIComplete != "" {
		if _, err := checkURL(raw.VerificationURIComplete); err != nil {
			problems = append(problems, "verification_uri_complete: "+err.Error())
		}
	}
	expiresIn, err := raw.ExpiresIn.Int64()
	if err != nil || expiresIn <= 0 {
		problems = append(problems, "expires_in missing or not a positive integer")
	}
	interval := DefaultInterval
	if raw.Interval != "" {
		n, err := raw.Interval.Int64()
		if err != nil || n < 0 {
			problems = append(problems, "interval is not a non-negative integer")
		} else if n > 0 {
			// Capped before it becomes a Duration: a larger n would wrap
			// around (18446744074 s is 0.29 s).
			interval = time.Duration(min(n, int64(MaxInterval/time.Second))) * time.Second
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("the Brand's login server sent an unusable answer: %s", strings.Join(problems, "; "))
	}
	a := &Authorization{
		DeviceCode:              Secret(raw.DeviceCode),
		UserCode:                raw.UserCode,
		VerificationURI:         raw.VerificationURI,
		VerificationURIComplete: raw.VerificationURIComplete,
		ExpiresIn:               int(min(expiresIn, int64(MaxExpiresIn/time.Second))),
		Interval:                min(interval, MaxInterval),
		Scopes:                  uniq,
	}
	a.ExpiresAt = start.Add(time.Duration(a.ExpiresIn) * time.Second)
	if a.VerificationURIComplete == "" {
		a.VerificationURIComplete = a.VerificationURI
	}
	return a, nil
}

// PollWait is the wait before each poll for a given interval: about 1.2×
// the interval, so clock drift does not trigger slow_down.
func PollWait(interval time.Duration) time.Duration {
	return interval + interval/5
}

// Poll polls tokenURL (RFC 8628 §3.4) until the User approves, refuses, or
// the device code expires (MaxExpiresIn at most). It waits
// PollWait(interval) before each request (interval at most MaxInterval),
// adds SlowDownStep on every slow_down, keeps waiting on
// authorization_pending, and tolerates a few consecutive transient failures
// (network, 5xx, 429). Cancelling ctx returns ctx.Err() at once. It is a
// Poller stepped until it ends.
//
// Errors: ErrAccessDenied, ErrExpiredToken (also when auth.ExpiresAt passes
// with no answer), ErrUnauthorized, another *OAuthError, or a transport
// error. The device code never appears in an error.
func (c *Client) Poll(ctx context.Context, tokenURL string, auth *Authorization) (*Token, error) {
	p, err := c.NewPoller(tokenURL, auth)
	if err != nil {
		return nil, err
	}
	clk := c.clock()
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-clk.After(p.Wait()):
		}
		tok, err := p.Step(ctx)
		if !errors.Is(err, ErrPending) {
			return tok, err
		}
	}
}

// ErrPending is Poller.Step's answer while the User has not answered yet
// (authorization_pending, slow_down, a transient failure, or the interval
// not yet passed): step again after Poller.Wait.
var ErrPending = errors.New("the login is waiting for the User's answer")

// Poller polls one device authorization at tokenURL one token request at a
// time (RFC 8628 §3.4, §3.5): Step makes at most one request, and only once
// the interval has passed since the last answer, so that whoever holds the
// Poller (a loop in this process, or a server answering a device's polls)
// never polls faster than the authorization server allows.
type Poller struct {
	c        *Client
	tokenURL string
	auth     *Authorization
	// interval is the current polling interval (slow_down adds
	// SlowDownStep, up to MaxInterval); next is the clock time the next
	// request may go; expiresAt is when the code expires (MaxExpiresIn
	// from the start at most); transient counts consecutive transient
	// failures.
	interval  time.Duration
	next      time.Time
	expiresAt time.Time
	transient int
}

// NewPoller is the Poller of auth (from Authorize) at tokenURL; its first
// request may go PollWait(interval) from now. The interval is at most
// MaxInterval and the wait MaxExpiresIn, also for an Authorization not made
// by Authorize.
func (c *Client) NewPoller(tokenURL string, auth *Authorization) (*Poller, error) {
	if _, err := checkURL(tokenURL); err != nil {
		return nil, fmt.Errorf("deviceflow: token URL: %w", err)
	}
	if auth == nil || auth.DeviceCode == "" {
		return nil, errors.New("deviceflow: Poll needs the Authorization returned by Authorize")
	}
	now := c.clock().Now()
	p := &Poller{c: c, tokenURL: tokenURL, auth: auth, interval: min(auth.Interval, MaxInterval), expiresAt: auth.ExpiresAt}
	if p.interval <= 0 {
		p.interval = DefaultInterval
	}
	if limit := now.Add(MaxExpiresIn); p.expiresAt.IsZero() || p.expiresAt.After(limit) {
		p.expiresAt = limit
	}
	p.next = now.Add(PollWait(p.interval))
	return p, nil
}

// Wait is how long until Step may send the next request: until the
// interval has passed, and no longer than until the code expires (then
// Step reports ErrExpiredToken). Never negative.
func (p *Poller) Wait() time.Duration {
	now := p.c.clock().Now()
	wait := min(p.next.Sub(now), p.expiresAt.Sub(now))
	return max(wait, 0)
}

// Step makes one token request when the interval has passed (else it
// returns ErrPending at once, sending nothing) and says what came of it:
// the Token once the User approved; ErrPending while the User has not
// answered (authorization_pending; slow_down, which lengthens the interval;
// a transient failure, up to a few in a row); or Poll's errors.
func (p *Poller) Step(ctx context.Context) (*Token, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	clk := p.c.clock()
	if !clk.Now().Before(p.expiresAt) {
		return nil, ErrExpiredToken
	}
	if clk.Now().Before(p.next) {
		return nil, ErrPending
	}
	tok, err := p.request(ctx)
	p.next = clk.Now().Add(PollWait(p.interval))
	return tok, err
}

// request is Step's one token request.
func (p *Poller) request(ctx context.Context) (*Token, error) {
	form := url.Values{
		"grant_type":  {GrantTypeDeviceCode},
		"device_code": {p.auth.DeviceCode.Reveal()},
		"client_id":   {p.c.ClientID},
	}
	status, body, err := p.c.post(ctx, p.tokenURL, form)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var re *RedirectError
		if errors.Is(err, errMint) || errors.Is(err, ErrUnauthorized) || errors.As(err, &re) {
			return nil, err
		}
		if p.transient++; p.transient > maxTransient {
			return nil, err
		}
		return nil, ErrPending
	}
	if status == http.StatusOK && !hasOAuthError(body) {
		return parseToken(body, p.auth.Scopes, "")
	}
	if status >= 500 || status == http.StatusTooManyRequests {
		if p.transient++; p.transient > maxTransient {
			return nil, responseError(status, body, p.auth.DeviceCode)
		}
		return nil, ErrPending
	}
	p.transient = 0
	rerr := responseError(status, body, p.auth.DeviceCode)
	var oe *OAuthError
	if errors.As(rerr, &oe) {
		switch oe.Code {
		case "authorization_pending":
			return nil, ErrPending
		case "slow_down":
			p.interval = min(p.interval+SlowDownStep, MaxInterval)
			return nil, ErrPending
		}
	}
	return nil, rerr
}

// Refresh exchanges refreshToken at tokenURL (RFC 6749 §6) with a fresh
// personal-agent JWT. When the response has no refresh_token, the returned
// Token keeps refreshToken (RFC 6749 §6 allows the server to keep it).
// Scope, when omitted, is left empty with ScopeOmitted set.
//
// Errors: ErrInvalidGrant (wrapped in *OAuthError) when the grant was revoked
// or has expired, meaning the User must log in again; ErrUnauthorized; or a
// transport error. Tokens never appear in an error.
func (c *Client) Refresh(ctx context.Context, tokenURL string, refreshToken Secret) (*Token, error) {
	if _, err := checkURL(tokenURL); err != nil {
		return nil, fmt.Errorf("deviceflow: token URL: %w", err)
	}
	if refreshToken == "" {
		return nil, fmt.Errorf("%w (no refresh token)", ErrInvalidGrant)
	}
	form := url.Values{
		"grant_type":    {GrantTypeRefreshToken},
		"refresh_token": {refreshToken.Reveal()},
		"client_id":     {c.ClientID},
	}
	status, body, err := c.post(ctx, tokenURL, form)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK || hasOAuthError(body) {
		return nil, responseError(status, body, refreshToken)
	}
	return parseToken(body, nil, refreshToken)
}

var errMint = errors.New("minting the personal-agent JWT failed")

// post sends form to endpoint with a freshly minted PA JWT and returns the
// status and a capped body. Transport errors are rewritten so that no form
// value (device code, refresh token) can appear in them.
func (c *Client) post(ctx context.Context, endpoint string, form url.Values) (int, []byte, error) {
	if c.PAToken == nil {
		return 0, nil, errNilClient
	}
	jwt, err := c.PAToken(ctx, endpoint)
	if err != nil {
		return 0, nil, fmt.Errorf("%w: %w", errMint, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return 0, nil, fmt.Errorf("deviceflow: building request to %s failed", endpoint)
	}
	req.Header.Set("Authorization", "Bearer "+jwt)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := c.httpClient().Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return 0, nil, ctx.Err()
		}
		var re *httpx.RedirectError
		if errors.As(err, &re) {
			return 0, nil, &RedirectError{Endpoint: endpoint, Err: re}
		}
		// url.Error carries only the URL, not the body; still, report the
		// innermost cause rather than the whole chain.
		var ue *url.Error
		if errors.As(err, &ue) {
			return 0, nil, &NetError{Endpoint: endpoint, Err: ue.Err}
		}
		return 0, nil, &NetError{Endpoint: endpoint, Err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return 0, nil, &NetError{Endpoint: endpoint, Err: err}
	}
	if len(body) > maxBody {
		return 0, nil, fmt.Errorf("the Brand's login server sent an answer larger than %d bytes (%s)", maxBody, endpoint)
	}
	if resp.StatusCode == http.StatusUnauthorized {
		// The PA JWT was refused: when the server's clock is far from
		// ours, say so rather than leave the User guessing.
		if off, ok := httpx.ClockOffset(resp.Header, time.Now()); ok {
			if hint := httpx.ClockHint(off); hint != "" {
				return 0, nil, &UnauthorizedError{ClockOffset: off, Hint: hint}
			}
		}
	}
	return resp.StatusCode, body, nil
}

// responseError turns a non-200 response into ErrUnauthorized, an
// *OAuthError, or a generic error, scrubbing secrets from server text.
func responseError(status int, body []byte, secrets ...Secret) error {
	if status == http.StatusUnauthorized {
		// With or without an OAuth body (invalid_client), a 401 means the
		// personal-agent JWT was refused (PACT §3.4, §5.3).
		return ErrUnauthorized
	}
	var oe struct {
		Error            string `json:"error"`
		ErrorDescription string `json:"error_description"`
	}
	if err := json.Unmarshal(body, &oe); err == nil && oe.Error != "" {
		code := oe.Error
		if !registeredCodes[code] {
			// An unregistered code is server text like any other: it may
			// echo a secret back. Registered codes are matched, not shown.
			code = scrub(oe.Error, 64, secrets)
		}
		return &OAuthError{StatusCode: status, Code: code, Description: scrub(oe.ErrorDescription, 300, secrets)}
	}
	return &ServerError{StatusCode: status}
}

// hasOAuthError reports whether body is a JSON object with a non-empty
// "error" member. Some authorization servers answer a pending poll with
// HTTP 200 and {"error":"authorization_pending"}: the member is read
// whatever the status (issue 9).
func hasOAuthError(body []byte) bool {
	var oe struct {
		Error any `json:"error"`
	}
	if json.Unmarshal(body, &oe) != nil {
		return false
	}
	s, isString := oe.Error.(string)
	return oe.Error != nil && (!isString || s != "")
}

// registeredCodes are the OAuth error codes of RFC 6749 §5.2 and RFC 8628
// §3.5 that callers match on.
var registeredCodes = map[string]bool{
	"invalid_request": true, "invalid_client": true, "invalid_grant": true, "unauthorized_client": true,
	"unsupported_grant_type": true, "invalid_scope": true, "authorization_pending": true, "slow_down": true,
	"access_denied": true, "expired_token": true,
}

// scrub removes our secrets from server-provided text kept otherwise
// exact (--json keeps remote text exact, JSON-escaped; human printers pass
// it through iostreams.Sanitize) and caps its length (runes).
func scrub(s string, max int, secrets []Secret) string {
	for _, sec := range secrets {
		if sec != "" {
			s = strings.ReplaceAll(s, sec.Reveal(), "[REDACTED]")
		}
	}
	if r := []rune(s); len(r) > max {
		s = string(r[:max]) + "…"
	}
	return s
}

// Reason is the --json reason for the error: the OAuth error code in upper
// case when it is one RFC 6749 allows (§5.2: error = 1*( %x20-21 /
// %x23-5B / %x5D-7E ), at most 64 characters), else OAUTH_ERROR. A reason
// is matched by scripts; a server must not be able to put control
// characters or other text into it.
func (e *OAuthError) Reason() string {
	if e.Code == "" || len(e.Code) > 64 {
		return "OAUTH_ERROR"
	}
	for i := 0; i < len(e.Code); i++ {
		if c := e.Code[i]; c < 0x20 || c == '"' || c == '\\' || c > 0x7e {
			return "OAUTH_ERROR"
		}
	}
	return strings.ToUpper(e.Code)
}

// sanitize removes secrets and control characters from server-provided text
// and caps its length (runes).
func sanitize(s string, max int, secrets []Secret) string {
	// Control characters go first: removing them after the secrets would
	// join "a\x00b" into a secret "ab" that was never replaced.
	return scrub(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, s), max, secrets)
}

func parseToken(body []byte, requested []string, oldRefresh Secret) (*Token, error) {
	var raw struct {
		TokenType    string      `json:"token_type"`
		AccessToken  string      `json:"access_token"`
		RefreshToken string      `json:"refresh_token"`
		ExpiresIn    json.Number `json:"expires_in"`
	}
	var scope struct {
		Scope *string `json:"scope"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, errors.New("deviceflow: token response is not a JSON object")
	}
	_ = json.Unmarshal(body, &scope)
	var problems []string
	if raw.AccessToken == "" {
		problems = append(problems, "access_token missing")
	}
	if !strings.EqualFold(raw.TokenType, "Bearer") {
		problems = append(problems, fmt.Sprintf("token_type %q is not Bearer", sanitize(raw.TokenType, 32, nil)))
	}
	var expiresIn int64
	if raw.ExpiresIn != "" {
		n, err := raw.ExpiresIn.Int64()
		if err != nil || n < 0 {
			problems = append(problems, "expires_in is not a non-negative integer")
		}
		expiresIn = n
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("the Brand's login server sent an unusable answer: %s", strings.Join(problems, "; "))
	}
	t := &Token{
		TokenType:    "Bearer",
		AccessToken:  Secret(raw.AccessToken),
		RefreshToken: Secret(raw.RefreshToken),
		ExpiresIn:    int(expiresIn),
	}
	if t.RefreshToken == "" {
		t.RefreshToken = oldRefresh
	}
	if scope.Scope == nil {
		t.ScopeOmitted = true
		t.Scope = append([]string(nil), requested...)
	} else {
		t.Scope = strings.Fields(*scope.Scope)
	}
	return t, nil
}
