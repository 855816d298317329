package demoprovider

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// Deliberate faults: `pact demo serve --fault NAME` makes the demo Provider
// break one rule of PACT 1.0, so that `pact provider check` can be seen to
// catch it (and its tests can require that it does). With no fault the
// Provider is correct; each fault is consulted at one or two points, all
// through the helpers of this file.

// Fault is one deliberate mistake, by name (see Faults).
type Fault struct {
	Name        string `json:"name"`
	Clause      string `json:"clause"`
	Description string `json:"description"`
}

var faults = []Fault{
	{"card-old-version", "§2.1", "the card's interface says protocolVersion 0.3 instead of 1.0"},
	{"card-shared-requirement", "§2.1", "the personal-agent JWT is never listed alone in a securityRequirements entry"},
	{"unknown-brand-body", "§2.1, §2.2", "an unknown brandId gets 404 with an A2A error body"},
	{"tasks-missing", "§2.2", "GET tasks is 404"},
	{"task-get-invalid", "§2.2", "GET tasks/{id} answers INVALID_PARAMS instead of TASK_NOT_FOUND"},
	{"auth-before-routing", "§2.2", "an unknown route without a token gets 401 (authentication before routing)"},
	{"unknown-route-body", "§2.2", "an unknown route gets 404 with an A2A error body"},
	{"accept-alg-none", "§3.2", `a PA JWT with alg "none" is accepted unsigned`},
	{"accept-hs256", "§3.2", "a PA JWT with alg HS256 is accepted without checking its MAC"},
	{"lifetime-unchecked", "§3.2", "a PA JWT with exp more than 300 s after iat is accepted"},
	{"iat-future-accepted", "§3.2", "a PA JWT whose iat is more than 30 s ahead is accepted"},
	{"expired-accepted", "§3.2", "an expired PA JWT is accepted"},
	{"aud-array-accepted", "§3.2", "a PA JWT whose aud is an array holding the audience is accepted"},
	{"sub-optional", "§3.2", "a PA JWT without sub is accepted"},
	{"challenge-invalid-token", "§3.4", `a refused PA JWT gets WWW-Authenticate with error="invalid_token"`},
	{"no-context-id", "§4.2", "replies carry no contextId"},
	{"unknown-context-new", "§4.2", "an unknown contextId starts a new conversation instead of INVALID_PARAMS"},
	{"retry-reruns", "§4.3", "a repeated messageId runs the agent again (a new reply) instead of returning the stored reply"},
	{"reject-configuration", "§4.1", "a request with configuration or metadata members is refused with INVALID_PARAMS"},
	{"reason-not-first", "§6", "A2A errors put a DebugInfo entry before the ErrorInfo in details"},
	{"json-content-type", "§2", "A2A responses say Content-Type application/json instead of application/a2a+json"},
	{"no-retry-after", "§6", "the third message:send gets 429 without Retry-After"},
	{"device-no-auth", "§5.3", "the device authorization endpoint serves requests without a PA JWT"},
	{"invalid-scope-ignored", "§5.3", "unknown scope ids are dropped instead of answered invalid_scope"},
	{"token-aud-provider", "§5.4", "delegation tokens name the Provider's URL as aud instead of the Brand's interface URL"},
	{"token-any-brand", "§5.4, §5.5", "a delegation token is accepted on every Brand of the Provider"},
	{"stepup-fails", "§5.5", "a turn needing a missing scope answers a plain message instead of a step-up task"},
	{"receipt-claims-mismatch", "§5.6", "the receipt's claims shown next to the JWS name another user than the signed ones"},
}

// Faults lists the deliberate faults `Config.Faults` accepts, by name.
func Faults() []Fault { return slices.Clone(faults) }

// faultSet is the faults a Server makes.
type faultSet map[string]bool

func (f faultSet) has(name string) bool { return f[name] }

// newFaultSet checks names against Faults.
func newFaultSet(names []string) (faultSet, error) {
	set := faultSet{}
	for _, n := range names {
		if !slices.ContainsFunc(faults, func(f Fault) bool { return f.Name == n }) {
			known := make([]string, 0, len(faults))
			for _, f := range faults {
				known = append(known, f.Name)
			}
			sort.Strings(known)
			return nil, fmt.Errorf("demoprovider: unknown fault %q (known: %s)", n, strings.Join(known, ", "))
		}
		set[n] = true
	}
	return set, nil
}

func (s *Server) fault(name string) bool { return s.faults.has(name) }

// faultCard applies the card faults to c (§2.1).
func (s *Server) faultCard(c *a2a.AgentCard) {
	if s.fault("card-old-version") {
		for _, i := range c.SupportedInterfaces {
			i.ProtocolVersion = "0.3"
		}
	}
	if s.fault("card-shared-requirement") {
		extra := a2a.SecuritySchemeName("apiKey")
		c.SecuritySchemes[extra] = a2a.APIKeySecurityScheme{Name: "X-Api-Key", Location: a2a.APIKeySecuritySchemeLocationHeader}
		for i := range c.SecurityRequirements {
			c.SecurityRequirements[i][extra] = []string{}
		}
	}
}

// faultRoute answers the routing faults (§2.2) and reports whether it did.
// known is whether brandID names a Brand; rt is the matched route.
func (s *Server) faultRoute(w http.ResponseWriter, r *http.Request, known bool, rt route) bool {
	switch {
	case !known && s.fault("unknown-brand-body"):
		writeA2AError(w, ReasonTaskNotFound, "no such Brand")
		return true
	case known && rt == routeNone && s.fault("auth-before-routing") && r.Header.Get("Authorization") == "":
		writeUnauthorized(w, "")
		return true
	case known && rt == routeNone && s.fault("unknown-route-body"):
		writeA2AError(w, ReasonTaskNotFound, "no such route")
		return true
	case known && rt == routeListTasks && s.fault("tasks-missing"):
		w.WriteHeader(http.StatusNotFound)
		return true
	case known && rt == routeGetTask && s.fault("task-get-invalid"):
		writeA2AError(w, ReasonInvalidParams, "bad task id")
		return true
	}
	return false
}

// faultWriter rewrites what the Provider writes for the faults that change
// every answer: the 401 challenge (§3.4), the A2A media type (§2) and the
// order of error details (§6).
func (s *Server) faultWriter(w http.ResponseWriter) http.ResponseWriter {
	if !s.fault("challenge-invalid-token") && !s.fault("json-content-type") && !s.fault("reason-not-first") {
		return w
	}
	return &faultyWriter{ResponseWriter: w, s: s}
}

type faultyWriter struct {
	http.ResponseWriter
	s    *Server
	code int
	buf  bytes.Buffer
	hold bool
}

func (f *faultyWriter) WriteHeader(code int) {
	h := f.Header()
	if code == http.StatusUnauthorized && f.s.fault("challenge-invalid-token") && !strings.Contains(h.Get("WWW-Authenticate"), "error=") {
		h.Set("WWW-Authenticate", `Bearer realm="a2a", error="invalid_token"`)
	}
	if h.Get("Content-Type") == a2aContentType && f.s.fault("json-content-type") {
		h.Set("Content-Type", "application/json")
	}
	if code >= 400 && f.s.fault("reason-not-first") && isJSONType(h.Get("Content-Type")) {
		// Only a JSON body can be an A2A error envelope: held and
		// rewritten when complete (see Write). An answer without one (a
		// bare 401, 404 or 405) goes as it is: one fault breaks one thing.
		f.hold, f.code = true, code
		return
	}
	f.ResponseWriter.WriteHeader(code)
}

func (f *faultyWriter) Write(p []byte) (int, error) {
	if !f.hold {
		return f.ResponseWriter.Write(p)
	}
	f.buf.Write(p)
	if !json.Valid(f.buf.Bytes()) {
		return len(p), nil // not complete yet (finish sends it as it is)
	}
	_, err := f.ResponseWriter.Write(f.release())
	return len(p), err
}

// release ends the hold: it writes the held status and returns the body to
// write, an A2A error envelope (an "error" object with "details") with a
// DebugInfo entry put before its ErrorInfo, any other body (an OAuth
// error, RFC 6749 §5.2) unchanged.
func (f *faultyWriter) release() []byte {
	body := f.buf.Bytes()
	f.hold = false
	f.ResponseWriter.WriteHeader(f.code)
	var env map[string]json.RawMessage
	var e map[string]any
	if json.Unmarshal(body, &env) != nil || json.Unmarshal(env["error"], &e) != nil {
		return body
	}
	d, ok := e["details"].([]any)
	if !ok {
		return body
	}
	e["details"] = append([]any{map[string]any{"@type": "type.googleapis.com/google.rpc.DebugInfo", "detail": "demo fault reason-not-first"}}, d...)
	env["error"], _ = json.Marshal(e)
	out, err := json.Marshal(env)
	if err != nil {
		return body
	}
	return out
}

// finish sends what is still held when the handler returns (a body that
// never became complete JSON, or none at all), as it was.
func (f *faultyWriter) finish() {
	if f.hold {
		f.ResponseWriter.Write(f.release())
	}
}

// isJSONType reports whether a Content-Type is JSON (application/json,
// application/a2a+json, any +json).
func isJSONType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// faultAccept is the PA JWT acceptance faults before the signature is
// checked (§3.2): alg none, or HS256 with any MAC, taken at their word.
func (v *paVerifier) faultAccept(raw string) (paIdentity, bool) {
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return paIdentity{}, false
	}
	var h struct {
		Alg string `json:"alg"`
	}
	hb, _ := base64.RawURLEncoding.DecodeString(parts[0])
	if json.Unmarshal(hb, &h) != nil {
		return paIdentity{}, false
	}
	if !(h.Alg == "none" && v.faults.has("accept-alg-none")) && !(h.Alg == "HS256" && v.faults.has("accept-hs256")) {
		return paIdentity{}, false
	}
	var c paClaims
	pb, _ := base64.RawURLEncoding.DecodeString(parts[1])
	if json.Unmarshal(pb, &c) != nil || c.Iss == "" {
		return paIdentity{}, false
	}
	return paIdentity{Issuer: c.Iss, Sub: c.Sub}, true
}

// faultAud is the aud-array-accepted fault: an array holding the audience
// is taken for it.
func (v *paVerifier) faultAud(raw json.RawMessage) bool {
	var auds []string
	return v.faults.has("aud-array-accepted") && json.Unmarshal(raw, &auds) == nil && slices.Contains(auds, v.audience)
}

// faultRateLimited answers the no-retry-after fault: the third
// message:send gets 429 without Retry-After.
func (s *Server) faultRateLimited(w http.ResponseWriter) bool {
	if !s.fault("no-retry-after") {
		return false
	}
	s.mu.Lock()
	s.faultSends++
	n := s.faultSends
	s.mu.Unlock()
	if n != 3 {
		return false
	}
	w.WriteHeader(http.StatusTooManyRequests)
	return true
}

// tokenAudience is the aud of b's delegation tokens: its interface URL
// (§5.4), or the Provider's URL under the token-aud-provider fault.
func (as *authServer) tokenAudience(b *brandDef) string {
	if as.s.fault("token-aud-provider") {
		return as.s.url
	}
	return as.s.interfaceURL(b)
}

// Flush passes a flush on (a streamed reply under a fault still streams),
// unless the answer is held.
func (f *faultyWriter) Flush() {
	if fl, ok := f.ResponseWriter.(http.Flusher); ok && !f.hold {
		fl.Flush()
	}
}
