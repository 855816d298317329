package a2aclient

import (
	"encoding/json"
	"errors"
	"regexp"
	"strings"
)

// The details of an A2A error (PACT §6, A2A 1.0 §11 over HTTP+JSON): an
// AIP-193 envelope whose details hold a google.rpc.ErrorInfo (reason,
// domain, metadata) and possibly a google.rpc.BadRequest (fieldViolations,
// each naming a field of the request).

const badRequestType = "type.googleapis.com/google.rpc.BadRequest"

// isError reports whether the envelope holds an A2A error at all.
func (e *Envelope) isError() bool {
	return e.Error.Status != "" || e.Error.Message != "" || len(e.Error.Details) > 0
}

// fill sets on err what the envelope says: status, message, reason
// (ReasonOf, else ReasonUnknown), the ErrorInfo's metadata and the fields of
// a BadRequest's violations.
func (e *Envelope) fill(err *Error) {
	err.Status, err.Message = e.Error.Status, e.Error.Message
	err.Reason = e.ReasonOf()
	if err.Reason == "" {
		err.Reason = ReasonUnknown
	}
	for _, d := range e.Error.Details {
		var detail struct {
			Type            string            `json:"@type"`
			Reason          string            `json:"reason"`
			Metadata        map[string]string `json:"metadata"`
			FieldViolations []struct {
				Field string `json:"field"`
			} `json:"fieldViolations"`
		}
		if json.Unmarshal(d, &detail) != nil {
			continue
		}
		switch detail.Type {
		case errorInfoType:
			if detail.Reason == err.Reason && err.Metadata == nil {
				err.Metadata = detail.Metadata
			}
		case badRequestType:
			for _, v := range detail.FieldViolations {
				err.Fields = append(err.Fields, v.Field)
			}
		}
	}
}

// contextWord finds "context" as (the start of) a word: "Unknown contextId",
// "context not found", "unknown context_id".
var contextWord = regexp.MustCompile(`(?i)(^|[^a-z])context`)

// AboutContext reports whether err is an INVALID_PARAMS answer about the
// message's contextId: the one INVALID_PARAMS of §4.2 (an unknown or foreign
// context) that means the Provider no longer knows the conversation. PACT
// §6 lists many other causes under the same reason (bad JSON, a body the
// Provider will not take, a repeated messageId with no stored reply), so
// it is read conservatively, from what the error says itself: a
// BadRequest field violation or an ErrorInfo metadata key or value naming
// the contextId, or the error's message speaking of the context ("Unknown
// contextId", as in the example of §6). An INVALID_PARAMS that says nothing
// of the context is not about it.
func AboutContext(err error) bool {
	var e *Error
	if !errors.As(err, &e) || e.Reason != ReasonInvalidParams {
		return false
	}
	for _, f := range e.Fields {
		if namesContextID(f) {
			return true
		}
	}
	for k, v := range e.Metadata {
		if namesContextID(k) || namesContextID(v) {
			return true
		}
	}
	return contextWord.MatchString(e.Message)
}

// namesContextID reports whether s names the contextId field: "contextId",
// "context_id", "message.contextId" (in any case).
func namesContextID(s string) bool {
	s = strings.ToLower(strings.ReplaceAll(s, "_", ""))
	return s == "contextid" || strings.HasSuffix(s, ".contextid")
}
