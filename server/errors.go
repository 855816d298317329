package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"time"

	"github.com/pact-cli/pact/devicetoken"
	"github.com/pact-cli/pact/serverapi"
)

// Error is an answer other than success: the HTTP status, the reason of
// the error envelope (serverapi.Reason…, or a reason of `pact … --json`),
// a message in plain words for the User, and, for 429, how long to wait.
// A handler returns it; the server writes the envelope
// {"error": {"reason", "message", "httpStatus", "requestId"}}.
type Error struct {
	Status     int
	Reason     string
	Message    string
	RetryAfter time.Duration
}

func (e *Error) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Reason, e.Message) }

// NotFound is the one answer for an id that does not exist and for an id
// of another User: the same status, reason and message, so that nothing
// tells them apart.
func NotFound(what string) *Error {
	return &Error{Status: http.StatusNotFound, Reason: serverapi.ReasonNotFound, Message: "no " + what + " with that id"}
}

// BadRequest is a body or parameter the route does not take.
func BadRequest(format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Reason: serverapi.ReasonUsage, Message: fmt.Sprintf(format, args...)}
}

func unauthenticated(msg string) *Error {
	return &Error{Status: http.StatusUnauthorized, Reason: serverapi.ReasonUnauthenticated, Message: msg}
}

// writeError writes err as the envelope. An error that is not an *Error is
// a 500 whose message says nothing of it (it is logged, without secrets).
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var e *Error
	if !errors.As(err, &e) {
		s.log.LogAttrs(r.Context(), slog.LevelError, "internal error", slog.String("request_id", RequestID(r.Context())), slog.String("error", err.Error()))
		e = &Error{Status: http.StatusInternalServerError, Reason: serverapi.ReasonError, Message: "the server failed to answer this request; the operator's logs have request id " + RequestID(r.Context())}
	}
	h := w.Header()
	switch e.Status {
	case http.StatusUnauthorized:
		h.Set("WWW-Authenticate", devicetoken.Scheme+` realm="pact"`)
	case http.StatusTooManyRequests:
		if e.RetryAfter > 0 {
			h.Set("Retry-After", strconv.Itoa(int((e.RetryAfter+time.Second-1)/time.Second)))
		}
	}
	if rw, ok := w.(*recorder); ok {
		rw.reason = e.Reason
	}
	writeJSON(w, e.Status, serverapi.Envelope{Error: serverapi.Error{
		Reason: e.Reason, Message: e.Message, HTTPStatus: e.Status, RequestID: RequestID(r.Context()),
	}})
}

// writeJSON writes v as the JSON body with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status, body = http.StatusInternalServerError, []byte(`{"error":{"reason":"ERROR","message":"the answer could not be encoded","httpStatus":500,"requestId":""}}`)
	}
	w.Header().Set("Content-Type", serverapi.ContentTypeJSON)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}

// WriteJSON writes v as a 2xx answer (for handlers).
func WriteJSON(w http.ResponseWriter, status int, v any) { writeJSON(w, status, v) }

// DecodeJSON reads the request body, at most the route's limit (set by the
// server), into v: one JSON object of known members. A body over the limit
// is 413 TOO_LARGE; anything else that is not such an object is 400 USAGE.
func DecodeJSON(r *http.Request, v any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return &Error{Status: http.StatusUnsupportedMediaType, Reason: serverapi.ReasonUsage, Message: "send the body as application/json"}
		}
	}
	data, err := io.ReadAll(r.Body)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return tooLarge(mbe.Limit)
	}
	if err != nil {
		return BadRequest("the request body could not be read")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return BadRequest("the request body is not the JSON object this route takes: %v", err)
	}
	if dec.More() {
		return BadRequest("the request body holds more than one JSON value")
	}
	return nil
}

func tooLarge(limit int64) *Error {
	return &Error{Status: http.StatusRequestEntityTooLarge, Reason: serverapi.ReasonTooLarge,
		Message: fmt.Sprintf("the request body is larger than this route takes (%d bytes)", limit)}
}
