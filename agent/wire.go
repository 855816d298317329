package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"syscall"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pact-cli/pact/a2aclient"
	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/delegation"
	"github.com/pact-cli/pact/deviceflow"
	"github.com/pact-cli/pact/discovery"
	"github.com/pact-cli/pact/httpx"
	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/receipts"
	"github.com/pact-cli/pact/secrets"
	"github.com/pact-cli/pact/signer"
	"github.com/pact-cli/pact/store"
)

// The agent interface's wire forms: what an agent's answer becomes when it
// crosses between `pact serve` and a device (agentclient), so that the
// front-end cannot tell a remote agent from a local one.
//
//   - Values: every type of the interface has a JSON form (discovery.Card's
//     MarshalJSON, conversation.Result's UnmarshalJSON, the tags of the
//     types in agent.go).
//   - Stream events: EncodeStreamEvent and DecodeStreamEvent, one per
//     Server-Sent Event of a SendStream request.
//   - Errors: EncodeError and DecodeError. Each link of the error's chain
//     keeps its words (Error, and Detail as the CLI shows it under --json
//     and --debug), the sentinels it is (errors.Is), whether it is a
//     timeout, and, for the typed errors the front-ends match, its kind and
//     members, so that errors.As gives the same *StepUpPending,
//     *conversation.ClosedError, *conversation.OutcomeUnknownError,
//     *a2aclient.Error, … with the same fields. A server's error envelope
//     ({"error": {"reason", "message", "httpStatus", "requestId"}}) carries
//     the WireError beside them.

// WireError is one link of an error's chain as it crosses the wire:
// {"kind"?, "message", "detail"?, "is"?, "timeout"?, "data"?, "causes"?}.
type WireError struct {
	// Kind names the typed error this link is (ErrorKinds), "" for any
	// other; Data holds its members.
	Kind string          `json:"kind,omitempty"`
	Data json.RawMessage `json:"data,omitempty"`
	// Message is the link's Error(); Detail the wire detail of the chain
	// from this link on (the first Detail() errors.As finds).
	Message string `json:"message"`
	Detail  string `json:"detail,omitempty"`
	// Is names the sentinel errors (Sentinels) this link is, or says it is.
	Is []string `json:"is,omitempty"`
	// Timeout is set when the chain from this link on is a net.Error that
	// timed out.
	Timeout bool `json:"timeout,omitempty"`
	// Causes are the errors this link wraps (a typed error's Err, or
	// Unwrap's).
	Causes []*WireError `json:"causes,omitempty"`
}

// maxErrorDepth bounds the chain EncodeError follows.
const maxErrorDepth = 16

// Sentinels are the sentinel errors that cross the wire by name: every one
// the front-ends and cmd/pact's exit table match with errors.Is.
var Sentinels = map[string]error{
	"context.Canceled":                 context.Canceled,
	"context.DeadlineExceeded":         context.DeadlineExceeded,
	"io.EOF":                           io.EOF,
	"io.ErrUnexpectedEOF":              io.ErrUnexpectedEOF,
	"syscall.ECONNREFUSED":             syscall.ECONNREFUSED,
	"syscall.ECONNRESET":               syscall.ECONNRESET,
	"agent.ErrNewAndContext":           ErrNewAndContext,
	"agent.ErrNoLogin":                 ErrNoLogin,
	"agent.ErrNoArchive":               ErrNoArchive,
	"conversation.ErrNotRegistered":    conversation.ErrNotRegistered,
	"conversation.ErrNoDelegation":     conversation.ErrNoDelegation,
	"conversation.ErrNoConversation":   conversation.ErrNoConversation,
	"conversation.ErrAmbiguousContext": conversation.ErrAmbiguousContext,
	"conversation.ErrNoExtendedCard":   conversation.ErrNoExtendedCard,
	"conversation.ErrProofNotKept":     conversation.ErrProofNotKept,
	"delegation.ErrNoGrant":            delegation.ErrNoGrant,
	"delegation.ErrLoginRequired":      delegation.ErrLoginRequired,
	"delegation.ErrInvalidToken":       delegation.ErrInvalidToken,
	"deviceflow.ErrAccessDenied":       deviceflow.ErrAccessDenied,
	"deviceflow.ErrExpiredToken":       deviceflow.ErrExpiredToken,
	"deviceflow.ErrUnauthorized":       deviceflow.ErrUnauthorized,
	"deviceflow.ErrInvalidGrant":       deviceflow.ErrInvalidGrant,
	"deviceflow.ErrInvalidScope":       deviceflow.ErrInvalidScope,
	"deviceflow.ErrScopeNotOnCard":     deviceflow.ErrScopeNotOnCard,
	"deviceflow.ErrPending":            deviceflow.ErrPending,
	"discovery.ErrNotFound":            discovery.ErrNotFound,
	"discovery.ErrInvalidCard":         discovery.ErrInvalidCard,
	"discovery.ErrCardChanged":         discovery.ErrCardChanged,
	"discovery.ErrBadArgument":         discovery.ErrBadArgument,
	"httpx.ErrNoSuchHost":              httpx.ErrNoSuchHost,
	"httpx.ErrInsecureURL":             httpx.ErrInsecureURL,
	"profile.ErrNotInitialised":        profile.ErrNotInitialised,
	"profile.ErrNotFound":              profile.ErrNotFound,
	"profile.ErrInvalidInput":          profile.ErrInvalidInput,
	"profile.ErrUntrustedEndpoint":     profile.ErrUntrustedEndpoint,
	"profile.ErrActiveKey":             profile.ErrActiveKey,
	"profile.ErrKeyringConflict":       profile.ErrKeyringConflict,
	"receipts.ErrNotFound":             receipts.ErrNotFound,
	"receipts.ErrBadID":                receipts.ErrBadID,
	"receipts.ErrNotVerified":          receipts.ErrNotVerified,
	"receipts.ErrKeysUnavailable":      receipts.ErrKeysUnavailable,
	"secrets.ErrUnavailable":           secrets.ErrUnavailable,
	"secrets.ErrTooLarge":              secrets.ErrTooLarge,
	"signer.ErrKeyUnavailable":         signer.ErrKeyUnavailable,
	"signer.ErrKeyMismatch":            signer.ErrKeyMismatch,
}

// EncodeError is err's chain as it crosses the wire; nil for nil.
func EncodeError(err error) *WireError { return encodeError(err, 0) }

func encodeError(err error, depth int) *WireError {
	if err == nil {
		return nil
	}
	w := &WireError{Message: words(err.Error)}
	var d interface{ Detail() string }
	if errors.As(err, &d) {
		w.Detail = words(d.Detail)
	}
	var ne net.Error
	w.Timeout = errors.As(err, &ne) && ne.Timeout()
	is, _ := err.(interface{ Is(error) bool })
	for name, s := range Sentinels {
		if err == s || (is != nil && is.Is(s)) {
			w.Is = append(w.Is, name)
		}
	}
	slices.Sort(w.Is)
	var causes []error
	for _, k := range errorKinds {
		if data, cause, ok := k.encode(err); ok {
			w.Kind = k.name
			w.Data, _ = json.Marshal(data)
			if cause != nil {
				causes = []error{cause}
			}
			break
		}
	}
	if w.Kind == "" {
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			if c := u.Unwrap(); c != nil {
				causes = []error{c}
			}
		case interface{ Unwrap() []error }:
			causes = u.Unwrap()
		}
	}
	if depth < maxErrorDepth {
		for _, c := range causes {
			if c != nil {
				w.Causes = append(w.Causes, encodeError(c, depth+1))
			}
		}
	}
	return w
}

// words is f's answer, "" if it panics (an error's Detail on a value no
// code path makes, say): encoding an error never fails.
func words(f func() string) (s string) {
	defer func() {
		if recover() != nil {
			s = ""
		}
	}()
	return f()
}

// DecodeError rebuilds the error w describes; nil for nil. Every link is a
// *RemoteError with the link's words, which unwraps to the typed error it
// was (its members and causes restored), the sentinels it was, and its
// causes.
func DecodeError(w *WireError) error {
	if w == nil {
		return nil
	}
	var causes []error
	for _, c := range w.Causes {
		if e := DecodeError(c); e != nil {
			causes = append(causes, e)
		}
	}
	e := &RemoteError{Text: w.Message, DetailText: w.Detail, TimedOut: w.Timeout}
	var cause error
	if len(causes) > 0 {
		cause = causes[0]
	}
	if w.Kind != "" {
		for _, k := range errorKinds {
			if k.name == w.Kind {
				if typed, err := k.decode(w.Data, cause); err == nil {
					e.typed = typed
				}
				break
			}
		}
	}
	if e.typed == nil {
		e.causes = causes
	}
	for _, name := range w.Is {
		if s, ok := Sentinels[name]; ok {
			e.is = append(e.is, s)
		}
	}
	return e
}

// Err is the error w describes (DecodeError); nil for nil.
func (w *WireError) Err() error { return DecodeError(w) }

// RemoteError is one link of an error that crossed the wire: it reads as
// the original (Error, Detail, Timeout) and unwraps to the typed error it
// was, the sentinels it was and its causes.
type RemoteError struct {
	Text       string
	DetailText string
	TimedOut   bool

	typed  error
	is     []error
	causes []error
}

func (e *RemoteError) Error() string  { return e.Text }
func (e *RemoteError) Detail() string { return e.DetailText }

// Timeout and Temporary make it a net.Error that timed out as the
// original did.
func (e *RemoteError) Timeout() bool   { return e.TimedOut }
func (e *RemoteError) Temporary() bool { return false }

func (e *RemoteError) Unwrap() []error {
	var out []error
	if e.typed != nil {
		out = append(out, e.typed)
	}
	out = append(out, e.is...)
	return append(out, e.causes...)
}

// errorKind is one typed error that crosses the wire with its members:
// encode gives its members and the error it wraps (ok false for another
// type), decode rebuilds it around cause.
type errorKind struct {
	name   string
	encode func(err error) (data any, cause error, ok bool)
	decode func(data json.RawMessage, cause error) (error, error)
}

// kind is the errorKind of *T, whose members are the JSON of W: to
// converts an error to W and its cause, from back.
func kind[T any, PT interface {
	*T
	error
}, W any](name string, to func(PT) (W, error), from func(W, error) PT) errorKind {
	return errorKind{
		name: name,
		encode: func(err error) (any, error, bool) {
			t, ok := err.(PT)
			if !ok || t == nil {
				return nil, nil, false
			}
			w, cause := to(t)
			return w, cause, true
		},
		decode: func(data json.RawMessage, cause error) (error, error) {
			var w W
			if len(data) > 0 {
				if err := json.Unmarshal(data, &w); err != nil {
					return nil, err
				}
			}
			return from(w, cause), nil
		},
	}
}

// ErrorKinds names the typed errors that cross the wire with their members.
func ErrorKinds() []string {
	out := make([]string, len(errorKinds))
	for i, k := range errorKinds {
		out[i] = k.name
	}
	return out
}

type (
	closedWire struct {
		ContextID string `json:"contextId"`
	}
	staleWire struct {
		ContextID string `json:"contextId"`
		Resent    bool   `json:"resent,omitempty"`
	}
	outcomeWire struct {
		MessageID string `json:"messageId"`
		ContextID string `json:"contextId,omitempty"`
		Received  bool   `json:"received,omitempty"`
		Closed    bool   `json:"closed,omitempty"`
	}
	mismatchWire struct {
		Want string `json:"want"`
		Got  string `json:"got"`
	}
	a2aWire struct {
		HTTPStatus      int               `json:"httpStatus,omitempty"`
		Reason          string            `json:"reason"`
		Status          string            `json:"status,omitempty"`
		Message         string            `json:"message,omitempty"`
		WWWAuthenticate string            `json:"wwwAuthenticate,omitempty"`
		RetryAfter      time.Duration     `json:"retryAfter,omitempty"`
		Attempts        int               `json:"attempts,omitempty"`
		ClockOffset     time.Duration     `json:"clockOffset,omitempty"`
		Metadata        map[string]string `json:"metadata,omitempty"`
		Fields          []string          `json:"fields,omitempty"`
		Reached         bool              `json:"reached,omitempty"`
		Earlier         bool              `json:"earlier,omitempty"`
	}
	loginRequiredWire struct {
		Brand        string   `json:"brand"`
		InterfaceURL string   `json:"interfaceUrl"`
		Reason       string   `json:"reason"`
		Scopes       []string `json:"scopes"`
		HTTPStatus   int      `json:"httpStatus,omitempty"`
		BrandName    string   `json:"brandName,omitempty"`
		Arg          string   `json:"arg,omitempty"`
	}
	cardChangedWire struct {
		Brand    string    `json:"brand"`
		Old      store.Pin `json:"old"`
		New      store.Pin `json:"new"`
		Changes  []string  `json:"changes"`
		Expected string    `json:"expected,omitempty"`
	}
	invalidCardWire struct {
		URL       string               `json:"url"`
		FinalURL  string               `json:"finalUrl"`
		Raw       json.RawMessage      `json:"card,omitempty"`
		Reason    string               `json:"reason"`
		Signature *discovery.Signature `json:"signature,omitempty"`
	}
	oauthWire struct {
		StatusCode  int    `json:"statusCode"`
		Code        string `json:"code"`
		Description string `json:"description,omitempty"`
	}
	netWire struct {
		Msg string `json:"msg"`
	}
	redirectWire struct {
		URL          string `json:"url"`
		Reason       string `json:"reason"`
		Credentialed bool   `json:"credentialed,omitempty"`
	}
	tooLargeWire struct {
		Limit int64 `json:"limit"`
	}
	dnsWire struct {
		Err         string `json:"err"`
		Name        string `json:"name"`
		Server      string `json:"server,omitempty"`
		IsTimeout   bool   `json:"isTimeout,omitempty"`
		IsTemporary bool   `json:"isTemporary,omitempty"`
		IsNotFound  bool   `json:"isNotFound,omitempty"`
	}
	statusWire struct {
		URL        string `json:"url"`
		StatusCode int    `json:"statusCode"`
	}
)

// same is the identity conversion of a type whose own JSON form is its
// wire form.
func same[T any, PT interface {
	*T
	error
}](t PT) (T, error) {
	return *t, nil
}

func back[T any, PT interface {
	*T
	error
}](w T, _ error) PT {
	return &w
}

var errorKinds = []errorKind{
	kind("step_up_pending", same[StepUpPending, *StepUpPending], back[StepUpPending, *StepUpPending]),
	kind("not_granted", same[NotGrantedError, *NotGrantedError], back[NotGrantedError, *NotGrantedError]),
	kind("not_accepted", same[NotAcceptedError, *NotAcceptedError], back[NotAcceptedError, *NotAcceptedError]),
	kind("no_delegation", same[NoDelegationError, *NoDelegationError], back[NoDelegationError, *NoDelegationError]),
	kind("closed", func(e *conversation.ClosedError) (closedWire, error) { return closedWire{e.ContextID}, e.Err },
		func(w closedWire, c error) *conversation.ClosedError {
			return &conversation.ClosedError{ContextID: w.ContextID, Err: c}
		}),
	kind("stale_context", func(e *conversation.StaleContextError) (staleWire, error) {
		return staleWire{e.ContextID, e.Resent}, e.Err
	},
		func(w staleWire, c error) *conversation.StaleContextError {
			return &conversation.StaleContextError{ContextID: w.ContextID, Resent: w.Resent, Err: c}
		}),
	kind("outcome_unknown", func(e *conversation.OutcomeUnknownError) (outcomeWire, error) {
		return outcomeWire{e.MessageID, e.ContextID, e.Received, e.Closed}, e.Err
	}, func(w outcomeWire, c error) *conversation.OutcomeUnknownError {
		return &conversation.OutcomeUnknownError{MessageID: w.MessageID, ContextID: w.ContextID, Received: w.Received, Closed: w.Closed, Err: c}
	}),
	kind("save", func(e *conversation.SaveError) (struct{}, error) { return struct{}{}, e.Err },
		func(_ struct{}, c error) *conversation.SaveError { return &conversation.SaveError{Err: c} }),
	kind("context_mismatch", func(e *conversation.ContextMismatchError) (mismatchWire, error) {
		return mismatchWire{e.Want, e.Got}, nil
	},
		func(w mismatchWire, _ error) *conversation.ContextMismatchError {
			return &conversation.ContextMismatchError{Want: w.Want, Got: w.Got}
		}),
	kind("a2a", func(e *a2aclient.Error) (a2aWire, error) {
		return a2aWire{e.HTTPStatus, e.Reason, e.Status, e.Message, e.WWWAuthenticate, e.RetryAfter, e.Attempts, e.ClockOffset,
			e.Metadata, e.Fields, e.Reached, e.Earlier}, e.Err
	}, func(w a2aWire, c error) *a2aclient.Error {
		return &a2aclient.Error{HTTPStatus: w.HTTPStatus, Reason: w.Reason, Status: w.Status, Message: w.Message, WWWAuthenticate: w.WWWAuthenticate,
			RetryAfter: w.RetryAfter, Attempts: w.Attempts, ClockOffset: w.ClockOffset, Metadata: w.Metadata, Fields: w.Fields,
			Reached: w.Reached, Earlier: w.Earlier, Err: c}
	}),
	kind("login_required", func(e *delegation.LoginRequiredError) (loginRequiredWire, error) {
		return loginRequiredWire{e.Brand, e.InterfaceURL, e.Reason, e.Scopes, e.HTTPStatus, e.BrandName, e.Arg}, nil
	}, func(w loginRequiredWire, _ error) *delegation.LoginRequiredError {
		return &delegation.LoginRequiredError{Brand: w.Brand, InterfaceURL: w.InterfaceURL, Reason: w.Reason, Scopes: w.Scopes,
			HTTPStatus: w.HTTPStatus, BrandName: w.BrandName, Arg: w.Arg}
	}),
	kind("card_changed", func(e *discovery.CardChangedError) (cardChangedWire, error) {
		return cardChangedWire{e.Brand, e.Old, e.New, e.Changes, e.Expected}, nil
	}, func(w cardChangedWire, _ error) *discovery.CardChangedError {
		return &discovery.CardChangedError{Brand: w.Brand, Old: w.Old, New: w.New, Changes: w.Changes, Expected: w.Expected}
	}),
	kind("invalid_card", func(e *discovery.InvalidCardError) (invalidCardWire, error) {
		return invalidCardWire{e.URL, e.FinalURL, e.Raw, e.Reason, e.Signature}, nil
	}, func(w invalidCardWire, _ error) *discovery.InvalidCardError {
		return &discovery.InvalidCardError{URL: w.URL, FinalURL: w.FinalURL, Raw: w.Raw, Reason: w.Reason, Signature: w.Signature}
	}),
	kind("card_status", func(e *discovery.StatusError) (statusWire, error) { return statusWire{e.URL, e.StatusCode}, nil },
		func(w statusWire, _ error) *discovery.StatusError {
			return &discovery.StatusError{URL: w.URL, StatusCode: w.StatusCode}
		}),
	kind("oauth", func(e *deviceflow.OAuthError) (oauthWire, error) {
		return oauthWire{e.StatusCode, e.Code, e.Description}, nil
	},
		func(w oauthWire, _ error) *deviceflow.OAuthError {
			return &deviceflow.OAuthError{StatusCode: w.StatusCode, Code: w.Code, Description: w.Description}
		}),
	kind("network", func(e *httpx.NetError) (netWire, error) { return netWire{e.Msg}, e.Err },
		func(w netWire, c error) *httpx.NetError { return &httpx.NetError{Msg: w.Msg, Err: c} }),
	kind("redirect", func(e *httpx.RedirectError) (redirectWire, error) {
		return redirectWire{e.URL, e.Reason, e.Credentialed}, nil
	},
		func(w redirectWire, _ error) *httpx.RedirectError {
			return &httpx.RedirectError{URL: w.URL, Reason: w.Reason, Credentialed: w.Credentialed}
		}),
	kind("too_large", func(e *httpx.ErrBodyTooLarge) (tooLargeWire, error) { return tooLargeWire{e.Limit}, nil },
		func(w tooLargeWire, _ error) *httpx.ErrBodyTooLarge { return &httpx.ErrBodyTooLarge{Limit: w.Limit} }),
	kind("dns", func(e *net.DNSError) (dnsWire, error) {
		return dnsWire{e.Err, e.Name, e.Server, e.IsTimeout, e.IsTemporary, e.IsNotFound}, nil
	}, func(w dnsWire, _ error) *net.DNSError {
		return &net.DNSError{Err: w.Err, Name: w.Name, Server: w.Server, IsTimeout: w.IsTimeout, IsTemporary: w.IsTemporary, IsNotFound: w.IsNotFound}
	}),
}

// StreamEventWire is one event of a reply that streams, as it crosses the
// wire (one Server-Sent Event of a SendStream request): the event as the
// Provider sent it, the reply's text so far, whether the stream was picked
// up again, and its task.
type StreamEventWire struct {
	Raw     json.RawMessage `json:"event"`
	Text    string          `json:"text,omitempty"`
	Resumed bool            `json:"resumed,omitempty"`
	TaskID  string          `json:"taskId,omitempty"`
}

// EncodeStreamEvent is ev's JSON form.
func EncodeStreamEvent(ev a2aclient.StreamEvent) ([]byte, error) {
	return json.Marshal(StreamEventWire{Raw: ev.Raw, Text: ev.Text, Resumed: ev.Resumed, TaskID: ev.TaskID})
}

// DecodeStreamEvent reads an event EncodeStreamEvent wrote; its Event is
// decoded again from the Provider's JSON (a2a.StreamResponse).
func DecodeStreamEvent(b []byte) (a2aclient.StreamEvent, error) {
	var w StreamEventWire
	if err := json.Unmarshal(b, &w); err != nil {
		return a2aclient.StreamEvent{}, err
	}
	ev := a2aclient.StreamEvent{Raw: w.Raw, Text: w.Text, Resumed: w.Resumed, TaskID: w.TaskID}
	if len(w.Raw) > 0 {
		var sr a2a.StreamResponse
		if err := json.Unmarshal(w.Raw, &sr); err != nil {
			return ev, fmt.Errorf("a stream event: %v", err)
		}
		ev.Event = sr.Event
	}
	return ev, nil
}

// SendAnswer is the end of a SendStream request on the wire (the last
// Server-Sent Event, after the stream's): the Result, the error, or both
// (a *conversation.SaveError or *conversation.ContextMismatchError comes
// with the reply that arrived).
type SendAnswer struct {
	Result *conversation.Result `json:"result,omitempty"`
	Error  *WireError           `json:"error,omitempty"`
}

// Answer is the SendAnswer of what SendStream returned.
func Answer(res *conversation.Result, err error) SendAnswer {
	return SendAnswer{Result: res, Error: EncodeError(err)}
}

// Returned is what SendStream returns for a (the Result and the rebuilt
// error).
func (a SendAnswer) Returned() (*conversation.Result, error) {
	return a.Result, DecodeError(a.Error)
}
