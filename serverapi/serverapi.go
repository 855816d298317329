// Package serverapi is the wire of `pact serve`'s HTTP API (/v1): the
// paths, the JSON bodies and the one error envelope, shared by the server
// (package server) and its clients on the devices (package device, and
// agentclient), so that both sides read one definition. The API itself is
// described by the OpenAPI 3.1 document served at /v1/openapi.json (and
// kept in docs/openapi.json).
package serverapi

import (
	"encoding/json"
	"fmt"
	"time"
)

// Paths of the API. A path with {id} takes a device id.
const (
	PathInfo            = "/v1/info"
	PathEnrol           = "/v1/enrol"
	PathMe              = "/v1/me"
	PathDevices         = "/v1/devices"
	PathDevice          = "/v1/devices/{id}"
	PathDeviceRevoke    = "/v1/devices/{id}/revoke"
	PathEnrolmentCodes  = "/v1/enrolment-codes"
	PathOpenAPI         = "/v1/openapi.json"
	PathHealth          = "/healthz"
	PathReady           = "/readyz"
	PathMetrics         = "/metrics"
	HeaderRequestID     = "X-Request-Id"
	ContentTypeJSON     = "application/json"
	MaxEnrolRequestSize = 16 << 10
)

// Reasons of the error envelope that the API itself answers (handlers of
// turns add the reasons of `pact … --json`, docs/json.md). A device maps
// each to the exit code the CLI gives it.
const (
	ReasonUnauthenticated = "UNAUTHENTICATED"        // 401: no, a bad, a replayed token, or a revoked device
	ReasonCodeRefused     = "ENROLMENT_CODE_REFUSED" // 400: the code is unknown, expired or used
	ReasonNotFound        = "NOT_FOUND"              // 404 (and 405): no such route, or an id that is not the caller's
	ReasonUsage           = "USAGE"                  // 400: a body that is not what the route takes
	ReasonTooLarge        = "TOO_LARGE"              // 413: a body over the route's limit
	ReasonRateLimited     = "RATE_LIMITED"           // 429: the device's requests per minute; Retry-After says when
	ReasonUnavailable     = "UNAVAILABLE"            // 503: stopping, or the database does not answer
	ReasonError           = "ERROR"                  // 500: anything else
)

// Error is the body of every error: {"error": {...}}, the envelope of
// `pact … --json` (docs/json.md) with the request id added.
type Error struct {
	Reason     string `json:"reason"`
	Message    string `json:"message"`
	HTTPStatus int    `json:"httpStatus"`
	RequestID  string `json:"requestId"`
}

// Envelope wraps an Error.
type Envelope struct {
	Error Error `json:"error"`
}

// Info answers GET /v1/info (no authentication): what a device checks
// before it enrols.
type Info struct {
	Issuer  string `json:"issuer"`  // the server's identity (PACT §3.1); the aud of device tokens
	Name    string `json:"name"`    // client_name of its metadata document
	Version string `json:"version"` // pact version of the server
	API     string `json:"api"`     // "v1"
}

// EnrolRequest is the body of POST /v1/enrol: a one-time enrolment code,
// the device's name, and the proof of possession of its key
// (devicetoken.MintProof, which carries the public key).
type EnrolRequest struct {
	Code  string `json:"code"`
	Name  string `json:"name"`
	Proof string `json:"proof"`
}

// User is a User as a device sees it.
type User struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// Device is one of a User's devices. State is "active" or "revoked";
// Current marks the device that asked.
type Device struct {
	ID       string     `json:"id"`
	Name     string     `json:"name"`
	KID      string     `json:"kid"`
	State    string     `json:"state"`
	Current  bool       `json:"current"`
	Created  time.Time  `json:"created"`
	LastSeen *time.Time `json:"lastSeen"`
	Revoked  *time.Time `json:"revoked"`
}

// Device states.
const (
	StateActive  = "active"
	StateRevoked = "revoked"
)

// Enrolled answers POST /v1/enrol (201).
type Enrolled struct {
	Issuer string `json:"issuer"`
	User   User   `json:"user"`
	Device Device `json:"device"`
}

// Me answers GET /v1/me: the User and the device that asked.
type Me struct {
	Issuer string `json:"issuer"`
	User   User   `json:"user"`
	Device Device `json:"device"`
}

// EnrolmentCode answers POST /v1/enrolment-codes (201): a one-time code
// for another device of the same User (`pact devices add`).
type EnrolmentCode struct {
	Code    string    `json:"code"`
	Expires time.Time `json:"expiresAt"`
	User    User      `json:"user"`
}

// APIError is an error answer of the server, as a client reads it: the
// envelope's members. Error() is the server's message (plain words);
// Detail() the reason, status and request id (shown in brackets under
// --json and under --debug); ErrorDetails() adds requestId to the CLI's
// own envelope.
type APIError struct {
	Reason     string
	Message    string
	HTTPStatus int
	RequestID  string
}

func (e *APIError) Error() string { return e.Message }

// Detail is "REASON (HTTP n), request ID".
func (e *APIError) Detail() string {
	return fmt.Sprintf("%s (HTTP %d), request %s", e.Reason, e.HTTPStatus, e.RequestID)
}

// ErrorDetails are the members added to `pact … --json`'s error envelope.
func (e *APIError) ErrorDetails() map[string]any { return map[string]any{"requestId": e.RequestID} }

// ParseError reads an error envelope answered with status; ok is false
// when body is not one.
func ParseError(status int, body []byte) (*APIError, bool) {
	var env struct {
		Error *Error `json:"error"`
	}
	if json.Unmarshal(body, &env) != nil || env.Error == nil || env.Error.Reason == "" {
		return nil, false
	}
	e := env.Error
	if e.HTTPStatus == 0 {
		e.HTTPStatus = status
	}
	return &APIError{Reason: e.Reason, Message: e.Message, HTTPStatus: e.HTTPStatus, RequestID: e.RequestID}, true
}
