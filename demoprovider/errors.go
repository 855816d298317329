package demoprovider

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// A2A error reasons used by this Provider, per PACT §6.
const (
	ReasonInvalidParams           = "INVALID_PARAMS"
	ReasonContentTypeNotSupported = "CONTENT_TYPE_NOT_SUPPORTED"
	ReasonUnsupportedOperation    = "UNSUPPORTED_OPERATION"
	ReasonPushNotSupported        = "PUSH_NOTIFICATION_NOT_SUPPORTED"
	ReasonTaskNotFound            = "TASK_NOT_FOUND"
	ReasonInternal                = "INTERNAL"
	// ReasonVersionNotSupported is A2A 1.0's answer to an A2A-Version the
	// Provider does not speak (§3 of A2A; 400 FAILED_PRECONDITION).
	ReasonVersionNotSupported = "VERSION_NOT_SUPPORTED"
)

// errorDomain is the google.rpc.ErrorInfo domain of every A2A error (§6).
const errorDomain = "a2a-protocol.org"

// a2aContentType is the Content-Type of every A2A response (§2).
const a2aContentType = "application/a2a+json"

// reasonStatus maps a §6 reason to its HTTP status and google.rpc status name.
var reasonStatus = map[string]struct {
	code   int
	status string
}{
	ReasonInvalidParams:           {http.StatusBadRequest, "INVALID_ARGUMENT"},
	ReasonContentTypeNotSupported: {http.StatusBadRequest, "INVALID_ARGUMENT"},
	ReasonUnsupportedOperation:    {http.StatusBadRequest, "FAILED_PRECONDITION"},
	ReasonPushNotSupported:        {http.StatusBadRequest, "FAILED_PRECONDITION"},
	ReasonTaskNotFound:            {http.StatusNotFound, "NOT_FOUND"},
	ReasonVersionNotSupported:     {http.StatusBadRequest, "FAILED_PRECONDITION"},
	ReasonInternal:                {http.StatusInternalServerError, "INTERNAL"},
}

// errorInfo is a google.rpc.ErrorInfo detail entry.
type errorInfo struct {
	Type   string `json:"@type"`
	Reason string `json:"reason"`
	Domain string `json:"domain"`
}

// errorEnvelope is the A2A / AIP-193 error body of §6.
type errorEnvelope struct {
	Error struct {
		Code    int         `json:"code"`
		Status  string      `json:"status"`
		Message string      `json:"message"`
		Details []errorInfo `json:"details"`
	} `json:"error"`
}

// writeA2AError writes the §6 envelope for reason with the ErrorInfo entry
// first (and only) in details. Hand-written because a2asrv appends ErrorInfo
// after other details and names the 500 reason INTERNAL_ERROR, while PACT §6
// says INTERNAL and clients read details[0].
func writeA2AError(w http.ResponseWriter, reason, message string) {
	rs, ok := reasonStatus[reason]
	if !ok {
		reason, rs = ReasonInternal, reasonStatus[ReasonInternal]
	}
	var env errorEnvelope
	env.Error.Code = rs.code
	env.Error.Status = rs.status
	env.Error.Message = message
	env.Error.Details = []errorInfo{{
		Type:   "type.googleapis.com/google.rpc.ErrorInfo",
		Reason: reason,
		Domain: errorDomain,
	}}
	writeJSON(w, rs.code, a2aContentType, env)
}

// writeJSON writes v as JSON with the given status and content type.
func writeJSON(w http.ResponseWriter, code int, contentType string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

// writeUnauthorized answers an authentication failure per §3.4: 401, the
// Bearer challenge, no body. oauthError, when set, is added as the RFC 6750
// error attribute (§5.5 uses "invalid_token").
func writeUnauthorized(w http.ResponseWriter, oauthError string) {
	challenge := `Bearer realm="a2a"`
	if oauthError != "" {
		challenge += `, error="` + oauthError + `"`
	}
	w.Header().Set("WWW-Authenticate", challenge)
	w.WriteHeader(http.StatusUnauthorized)
}

// writeRateLimited answers 429 with Retry-After in whole seconds (§6).
func writeRateLimited(w http.ResponseWriter, retryAfter time.Duration) {
	secs := int((retryAfter + time.Second - 1) / time.Second)
	if secs < 1 {
		secs = 1
	}
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	w.WriteHeader(http.StatusTooManyRequests)
}

// writeOAuthError writes an RFC 6749 §5.2 error response.
func writeOAuthError(w http.ResponseWriter, code int, errCode, description string) {
	body := map[string]string{"error": errCode}
	if description != "" {
		body["error_description"] = description
	}
	writeJSON(w, code, "application/json", body)
}
