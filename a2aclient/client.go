// Package a2aclient sends A2A 1.0 `message:send` requests over HTTP+JSON as
// PACT §2.2, §4 and §6 require: a fresh PA JWT on every attempt, the
// A2A-Version header, idempotent retries with the same messageId (§4.3),
// waiting out 429 Retry-After, and errors read from the ErrorInfo in
// error.details, never from the status alone.
//
// It uses the official SDK's wire types but its own HTTP code: the SDK's
// REST client drops the status and headers that PACT needs (401
// WWW-Authenticate, 429 Retry-After).
package a2aclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pact-cli/pact/httpx"
)

// MaxReplySize is the largest reply body read (4 MiB).
const MaxReplySize = 4 << 20

// Client sends message:send. The zero value is not usable: set HTTP.
type Client struct {
	HTTP *http.Client // an httpx client
	// MaxAttempts bounds attempts per message (network errors, 5xx, 429).
	// 0 = 4.
	MaxAttempts int
	// MaxRetryAfter bounds how long one 429 Retry-After is honoured; a
	// longer one fails with the wait in the error. 0 = 30 s.
	MaxRetryAfter time.Duration
	// Backoff is the wait before retry n (1-based) after a network error or
	// 5xx. nil = 250 ms × 2^(n−1).
	Backoff func(n int) time.Duration
	// Sleep waits d or until ctx ends; nil = a timer. Tests replace it.
	Sleep func(ctx context.Context, d time.Duration) error
	// OnRetry, if set, is told about each retry (for spinners and --debug).
	OnRetry func(attempt int, wait time.Duration, cause error)

	// Limits of Stream: the largest event (0 = DefaultMaxStreamEvent), the
	// largest whole stream (0 = DefaultMaxStreamSize) and the longest
	// silence before a stream counts as broken (0 = DefaultStreamStall).
	MaxStreamEvent int64
	MaxStreamSize  int64
	StreamStall    time.Duration
	// MaxStreamDuration bounds how long Stream reads one reply, every
	// attempt included (0 = DefaultMaxStreamDuration): STREAM_TOO_LONG.
	MaxStreamDuration time.Duration
}

// Request is one message:send.
type Request struct {
	InterfaceURL string       // from the Agent Card (§2.1)
	Message      *a2a.Message // messageId set by the caller and kept across retries
	// PAToken mints a fresh PA JWT to send to endpoint (the message:send
	// URL); it is called once per attempt (§3.2). It may refuse the endpoint
	// (profile.BoundMinter.Token, the endpoint-origin rule): Send then
	// returns that error unchanged, not an *Error, and sends nothing.
	PAToken func(ctx context.Context, endpoint string) (string, error)
	// Delegation, when set, returns the delegation token sent in
	// X-A2A-User-Delegation (§5.5). Called once per attempt.
	Delegation func(ctx context.Context) (string, error)
}

// Response is a successful reply.
type Response struct {
	// Raw is the response body as received, except that each byte of
	// invalid UTF-8 is replaced by U+FFFD (as encoding/json does when it
	// decodes strings), so Raw can be re-emitted as JSON (RFC 8259 §8.1).
	Raw      json.RawMessage
	Message  *a2a.Message // set for {"message": …}
	Task     *a2a.Task    // set for {"task": …} (§5.5)
	Attempts int
	// Streamed is set when the reply came by Stream (message:stream).
	Streamed bool
}

// Reasons pact reports for failures that are not A2A errors (§6: 401, 404,
// 429 and transport failures carry no A2A body).
const (
	ReasonUnauthenticated = "UNAUTHENTICATED"    // 401 on the PA JWT
	ReasonInvalidToken    = "INVALID_TOKEN"      // 401 error="invalid_token": the delegation token
	ReasonNotFound        = "NOT_FOUND"          // 404/405 without A2A body: unknown Brand or route
	ReasonRateLimited     = "RATE_LIMITED"       // 429
	ReasonHTTP            = "HTTP_ERROR"         // other status without an A2A error
	ReasonNetwork         = "NETWORK"            // no HTTP answer
	ReasonRedirect        = "REDIRECT"           // a redirect pact refused to follow (never with credentials)
	ReasonBadReply        = "INVALID_REPLY"      // a 200 that is not a valid reply
	ReasonUnknown         = "UNKNOWN_A2A_REASON" // an A2A error with no ErrorInfo

	reasonMint = "pa-jwt" // internal: PAToken failed or refused the endpoint
)

// A2A error reasons of §6.
const (
	ReasonInvalidParams         = "INVALID_PARAMS"
	ReasonContentTypeNotSupport = "CONTENT_TYPE_NOT_SUPPORTED"
	ReasonUnsupportedOperation  = "UNSUPPORTED_OPERATION"
	ReasonPushNotSupported      = "PUSH_NOTIFICATION_NOT_SUPPORTED"
	ReasonTaskNotFound          = "TASK_NOT_FOUND"
	ReasonInternal              = "INTERNAL"
)

// Error is a failed message:send.
type Error struct {
	HTTPStatus      int           // 0 for transport failures
	Reason          string        // details[0].reason, or one of pact's Reason* values
	Status          string        // error.status of the A2A envelope, if any
	Message         string        // error.message, or pact's explanation
	WWWAuthenticate string        // on 401
	RetryAfter      time.Duration // on 429
	Attempts        int
	Err             error // the transport error, if any

	// ClockOffset is, on a 401, how far the local clock is behind the
	// Provider's Date header (negative: ahead); 0 when unknown. Beyond
	// httpx.MaxClockSkew the message blames the clock.
	ClockOffset time.Duration

	// Metadata is the ErrorInfo's metadata of an A2A error (AIP-193:
	// string keys and values), nil when it has none.
	Metadata map[string]string
	// Fields are the fields named by a google.rpc.BadRequest detail's
	// fieldViolations (AIP-193), as the Provider wrote them.
	Fields []string

	// Reached is set when the Provider is known to have received the
	// message although no reply could be used: an attempt was answered
	// 200 (a reply pact could not read or that broke a limit, a stream
	// cut or failed after it began). The Brand's agent may have acted on
	// it (PACT §4.3).
	Reached bool
	// Earlier is set when an attempt before the last may have been
	// processed by the Provider (it got no answer, a 5xx, a 408 or a 200
	// that could not be used): whatever the last answer says, the
	// Provider may already hold the message.
	Earlier bool
	// refused is set on an attempt known not to have been processed
	// although its status does not say so: an A2A error that was the
	// first event of a stream, or a delegation token that could not be
	// had (nothing sent).
	refused bool
}

// Unprocessed reports whether the message is known not to have been
// processed by the Provider: no attempt may have been (not Earlier, not
// Reached), and the last was refused before processing: a 4xx error answer
// (§6; 408 Request Timeout excepted, the request may have been read), an
// A2A error as a stream's first event, or nothing was sent. Everything
// else (no answer, a 5xx, a stream cut) leaves the outcome unknown.
func (e *Error) Unprocessed() bool {
	if e.Earlier || e.Reached {
		return false
	}
	return e.refused || (e.HTTPStatus >= 400 && e.HTTPStatus < 500 && e.HTTPStatus != http.StatusRequestTimeout)
}

// AfterAttempts records on err (an *Error from a later request for the
// same message, e.g. message:send after message:stream could not stream)
// that the attempts of prior may have reached the Provider (Earlier), or
// did (Reached). err is returned.
func AfterAttempts(err, prior error) error {
	var e, p *Error
	if errors.As(err, &e) && errors.As(prior, &p) && !p.Unprocessed() {
		e.Earlier = true
		e.Reached = e.Reached || p.Reached
	}
	return err
}

// Error is the failure in plain words for people: what happened and what
// to do, without protocol reasons, status codes or URLs. Detail has those.
func (e *Error) Error() string {
	var b strings.Builder
	switch e.Reason {
	case ReasonNetwork:
		b.WriteString("could not reach the Provider: ")
		b.WriteString(plainCause(e.Err))
	case ReasonRedirect:
		b.WriteString("the Provider answered with a redirect, and pact never sends your credentials along a redirect, so nothing was sent there; tell the Brand if it persists")
	case ReasonUnauthenticated:
		if hint := httpx.ClockHint(e.ClockOffset); hint != "" {
			b.WriteString("the Provider did not accept this personal agent's identity: " + hint)
			break
		}
		b.WriteString("the Provider did not accept this personal agent's identity. Check that it is registered with this issuer and audience (`pact whoami`), that `pact jwks serve` (or your jwks_uri) is reachable, and that this machine's clock is right")
	case ReasonInvalidToken:
		b.WriteString("the Provider no longer accepts your permission at this Brand: log in again with `pact login`")
	case ReasonNotFound:
		b.WriteString("the Provider does not know this Brand's address (its Agent Card may be out of date); try again later or check the Brand")
	case ReasonRateLimited:
		b.WriteString("the Provider is limiting how often this personal agent may send")
		if e.RetryAfter > 0 {
			fmt.Fprintf(&b, "; wait %s and try again", e.RetryAfter.Round(time.Second))
		} else {
			b.WriteString("; wait a little and try again")
		}
	case ReasonBadReply:
		b.WriteString("the Provider sent a reply pact cannot read; try again, and tell the Brand if it persists")
	case ReasonNotStream:
		b.WriteString("the Provider does not stream replies although its card says so")
	case ReasonTooLarge:
		b.WriteString("the Brand's reply was refused as too large: " + e.Message)
	case ReasonTooLong:
		b.WriteString("the Brand's reply kept streaming (" + e.Message + "), so pact stopped reading it: the message may have been delivered and acted on; look at the conversation, or ask the Brand, before sending it again")
	case ReasonStalled:
		b.WriteString("the Brand's reply stopped arriving (" + e.Message + ") and could not be picked up again; send the message again (the agent will not act twice)")
	case ReasonInvalidParams:
		b.WriteString("the Provider refused the message as not valid; tell the Brand if it persists")
	case ReasonContentTypeNotSupport:
		b.WriteString("the Provider accepts only text messages")
	case ReasonUnsupportedOperation:
		b.WriteString("the Provider does not allow this: the conversation may have ended")
	case ReasonPushNotSupported:
		b.WriteString("the Provider does not offer notifications")
	case ReasonTaskNotFound:
		b.WriteString("the Provider does not know that task")
	case ReasonInternal:
		b.WriteString("the Provider failed while handling the message; try again later")
	default:
		if e.HTTPStatus >= 500 {
			b.WriteString("the Provider failed while handling the message; try again later")
		} else {
			b.WriteString("the Provider refused the message")
		}
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (tried %d times)", e.Attempts)
	}
	return b.String()
}

// Detail is the wire detail of the failure, for --json and --debug: the
// reason, the HTTP status, the Provider's own error message and the
// transport error. Example: `INVALID_PARAMS (HTTP 400): Unknown contextId`.
func (e *Error) Detail() string {
	var b strings.Builder
	b.WriteString(e.Reason)
	if e.HTTPStatus != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.HTTPStatus)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	if e.WWWAuthenticate != "" {
		b.WriteString("; WWW-Authenticate: ")
		b.WriteString(e.WWWAuthenticate)
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, "; Retry-After: %s", e.RetryAfter)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, "; %d attempts", e.Attempts)
	}
	return b.String()
}

// plainCause says in plain words why a request got no answer: the
// explanation of an *httpx.NetError, else the transport error without the
// method and URL Go puts in front of it.
func plainCause(err error) string {
	var ne *httpx.NetError
	if errors.As(err, &ne) && ne.Msg != "" {
		return ne.Msg
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) {
		return "the connection was closed before an answer arrived; try again"
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if err == nil {
		return "no answer"
	}
	return err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// IsReason reports whether err is an *Error with this reason.
func IsReason(err error, reason string) bool {
	var e *Error
	return errors.As(err, &e) && e.Reason == reason
}

// Send delivers req.Message. Network errors and 5xx are retried with the
// same messageId and backoff; 429 waits Retry-After (bounded); every
// attempt carries a newly minted PA JWT. Failures are *Error.
func (c *Client) Send(ctx context.Context, req Request) (*Response, error) {
	if req.Message == nil || req.Message.ID == "" {
		return nil, errors.New("a2aclient: message and messageId are required")
	}
	body, err := json.Marshal(a2a.SendMessageRequest{Message: req.Message})
	if err != nil {
		return nil, err
	}
	max := c.MaxAttempts
	if max <= 0 {
		max = 4
	}
	url := strings.TrimRight(req.InterfaceURL, "/") + "/message:send"
	var (
		last *Error
		seen attempts
	)
	for attempt := 1; ; attempt++ {
		resp, e := c.once(ctx, url, body, req)
		if e == nil {
			resp.Attempts = attempt
			return resp, nil
		}
		if e.Reason == reasonMint {
			if last != nil {
				return nil, last // an earlier attempt's answer says more
			}
			return nil, e.Err // not an answer from anyone: nothing was sent
		}
		e.Attempts = attempt
		seen.add(e)
		last = e
		if ctx.Err() != nil {
			return nil, last
		}
		// An error answer is final (§6): only no answer at all, 5xx and
		// 429 are tried again (§4.3); a refused redirect is a verdict, not
		// a network hiccup.
		retryable := e.Reason == ReasonNetwork || e.HTTPStatus >= 500 || e.Reason == ReasonRateLimited
		if !retryable || attempt >= max {
			return nil, last
		}
		wait, ok := c.retryWait(e, attempt)
		if !ok {
			return nil, last
		}
		if c.OnRetry != nil {
			c.OnRetry(attempt, wait, last)
		}
		if err := c.sleep(ctx, wait); err != nil {
			return nil, last
		}
	}
}

// attempts is what the attempts for one message told so far: whether one
// may have been processed (Error.Earlier of the next) and whether one was
// received (Error.Reached).
type attempts struct{ processed, reached bool }

// add notes e, the error of the latest attempt, with what the attempts
// before it told.
func (a *attempts) add(e *Error) {
	e.Earlier = e.Earlier || a.processed
	e.Reached = e.Reached || a.reached
	a.processed = a.processed || !e.Unprocessed()
	a.reached = e.Reached
}

// retryWait is the wait before retry attempt+1 after e, for Send and
// Stream: a 429's Retry-After (1 s when it gives none; false when it is
// beyond MaxRetryAfter), else Backoff.
func (c *Client) retryWait(e *Error, attempt int) (time.Duration, bool) {
	if e.Reason == ReasonRateLimited {
		maxWait := c.MaxRetryAfter
		if maxWait == 0 {
			maxWait = 30 * time.Second
		}
		if e.RetryAfter > maxWait {
			return 0, false
		}
		if e.RetryAfter <= 0 {
			return time.Second, true
		}
		return e.RetryAfter, true
	}
	if c.Backoff != nil {
		return c.Backoff(attempt), true
	}
	return 250 * time.Millisecond << (attempt - 1), true
}

func (c *Client) sleep(ctx context.Context, d time.Duration) error {
	if c.Sleep != nil {
		return c.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *Client) once(ctx context.Context, url string, body []byte, req Request) (*Response, *Error) {
	pa, err := req.PAToken(ctx, url)
	if err != nil {
		return nil, &Error{Reason: reasonMint, Message: "minting the PA JWT failed", Err: err}
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, &Error{Reason: ReasonBadReply, Message: err.Error()}
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/a2a+json, application/json")
	delegated, aerr := authorize(ctx, hreq, pa, req)
	if aerr != nil {
		return nil, aerr
	}
	resp, err := c.HTTP.Do(hreq)
	if err != nil {
		return nil, transportError(err)
	}
	defer resp.Body.Close()
	data, rerr := httpx.ReadBody(resp.Body, MaxReplySize)
	if resp.StatusCode == http.StatusOK {
		// Answered 200: the Provider has the message, whatever follows.
		if rerr != nil {
			var tl *httpx.ErrBodyTooLarge
			if errors.As(rerr, &tl) {
				return nil, &Error{HTTPStatus: 200, Reason: ReasonBadReply, Message: rerr.Error(), Reached: true}
			}
			return nil, &Error{Reason: ReasonNetwork, Err: rerr, Reached: true}
		}
		r, perr := ParseReply(data)
		if perr != nil {
			return nil, &Error{HTTPStatus: 200, Reason: ReasonBadReply, Message: perr.Error(), Reached: true}
		}
		return r, nil
	}
	e := errorFromResponse(resp, data)
	if e.Reason == ReasonInvalidToken && !delegated {
		// No delegation token was sent: the token refused is the PA JWT, the identity.
		e.Reason = ReasonUnauthenticated
	}
	return nil, e
}

// ParseReply decodes a 200 body: exactly one of "message" (role ROLE_AGENT,
// contextId set, §4.2) or "task" (§5.5). Unknown fields are ignored.
func ParseReply(data []byte) (*Response, error) {
	var env struct {
		Message *a2a.Message `json:"message"`
		Task    *a2a.Task    `json:"task"`
	}
	if err := json.Unmarshal(data, &env); err != nil {
		if !json.Valid(data) {
			return nil, fmt.Errorf("the reply is not JSON: %v", err)
		}
		return nil, fmt.Errorf("the reply is not a valid A2A response: %v", err)
	}
	r := &Response{Raw: json.RawMessage(validUTF8(data)), Message: env.Message, Task: env.Task}
	switch {
	case env.Message != nil && env.Task != nil:
		return nil, errors.New("the reply has both a message and a task")
	case env.Message != nil:
		if env.Message.Role != a2a.MessageRoleAgent {
			return nil, fmt.Errorf("the reply's role is %q, not ROLE_AGENT", env.Message.Role)
		}
		if env.Message.ContextID == "" {
			return nil, errors.New("the reply has no contextId")
		}
	case env.Task != nil:
		if env.Task.ContextID == "" {
			return nil, errors.New("the reply's task has no contextId")
		}
	default:
		return nil, errors.New("the reply has neither a message nor a task")
	}
	exactNumbers(r)
	return r, nil
}

// validUTF8 returns data with each byte of invalid UTF-8 replaced by
// U+FFFD; valid data is returned as is. In JSON that ParseReply accepted,
// such bytes can only sit inside strings, so the result is still JSON.
func validUTF8(data []byte) []byte {
	if utf8.Valid(data) {
		return data
	}
	out := make([]byte, 0, len(data)+16)
	for len(data) > 0 {
		r, n := utf8.DecodeRune(data)
		if r == utf8.RuneError && n == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, data[:n]...)
		}
		data = data[n:]
	}
	return out
}

// Envelope is the A2A / AIP-193 error body of §6.
type Envelope struct {
	Error struct {
		Code    int               `json:"code"`
		Status  string            `json:"status"`
		Message string            `json:"message"`
		Details []json.RawMessage `json:"details"`
	} `json:"error"`
}

const errorInfoType = "type.googleapis.com/google.rpc.ErrorInfo"

// ReasonOf returns the ErrorInfo reason of an A2A error body: details[0]
// when it is an ErrorInfo (§6), else the first ErrorInfo entry found by its
// @type (for Providers that put it later, as a2a-go's server does).
func (e *Envelope) ReasonOf() string {
	for _, d := range e.Error.Details {
		var info struct {
			Type   string `json:"@type"`
			Reason string `json:"reason"`
		}
		if json.Unmarshal(d, &info) == nil && info.Type == errorInfoType && info.Reason != "" {
			return info.Reason
		}
	}
	return ""
}

func errorFromResponse(resp *http.Response, data []byte) *Error {
	e := &Error{HTTPStatus: resp.StatusCode}
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		e.WWWAuthenticate = resp.Header.Get("WWW-Authenticate")
		e.ClockOffset, _ = httpx.ClockOffset(resp.Header, time.Now())
		e.Reason = ReasonUnauthenticated
		if strings.Contains(e.WWWAuthenticate, "invalid_token") {
			e.Reason = ReasonInvalidToken
		}
		return e
	case http.StatusTooManyRequests:
		e.Reason = ReasonRateLimited
		e.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
		return e
	}
	var env Envelope
	if json.Unmarshal(data, &env) == nil && env.isError() {
		env.fill(e)
		if e.Reason == ReasonUnknown && e.Message == "" {
			e.Message = fmt.Sprintf("HTTP %d with an A2A error that has no ErrorInfo reason", resp.StatusCode)
		}
		return e
	}
	switch resp.StatusCode {
	case http.StatusNotFound, http.StatusMethodNotAllowed:
		e.Reason = ReasonNotFound
	default:
		e.Reason = ReasonHTTP
		e.Message = fmt.Sprintf("HTTP %d from the Provider", resp.StatusCode)
	}
	return e
}

// parseRetryAfter reads delay-seconds or an HTTP-date (RFC 9110 §10.2.3).
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		if s < 0 {
			return 0
		}
		if s > int64(10*365*24*3600) {
			s = int64(10 * 365 * 24 * 3600)
		}
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
