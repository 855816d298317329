package demoprovider

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strings"
	"time"
)

// Conformance to A2A 1.0 (HTTP+JSON) beyond what PACT §2.2 lists: "other
// A2A operations behave as A2A defines". See docs/interop.md.

// a2aVersion is the only protocol version this Provider speaks.
const a2aVersion = "1.0"

// isA2AOperation reports whether rt is an A2A operation (as opposed to the
// public card and the OAuth endpoints of §5), so that A2A-Version applies.
func isA2AOperation(rt route) bool {
	switch rt {
	case routeSend, routeStream, routeListTasks, routeGetTask, routeCancelTask,
		routeSubscribe, routeExtendedCard, routePushConfig:
		return true
	}
	return false
}

// checkA2AVersion answers VERSION_NOT_SUPPORTED (400, the §6 / AIP-193
// envelope) and returns false when the request's A2A-Version header names
// a version other than 1.0. A missing or empty header is taken as 1.0:
// PACT §2 makes sending it a SHOULD, so a PACT Provider cannot refuse a
// request without it (A2A alone would read it as 0.3).
func checkA2AVersion(w http.ResponseWriter, r *http.Request) bool {
	v := strings.TrimSpace(r.Header.Get("A2A-Version"))
	if v == "" || v == a2aVersion {
		return true
	}
	writeA2AError(w, ReasonVersionNotSupported, "A2A-Version "+sanitizeHeader(v)+" is not supported; this Provider speaks A2A "+a2aVersion)
	return false
}

// sanitizeHeader keeps a client's header value printable and short before
// it is echoed in an error message.
func sanitizeHeader(v string) string {
	var b strings.Builder
	for _, r := range v {
		if b.Len() >= 32 {
			b.WriteString("…")
			break
		}
		if r < 0x20 || r == 0x7f {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// matchPushConfigRoute matches the push-notification config routes of
// A2A 1.0 HTTP+JSON: tasks/{id}/pushNotificationConfigs (POST create, GET
// list) and tasks/{id}/pushNotificationConfigs/{configId} (GET, DELETE).
func matchPushConfigRoute(rest string) (route, []string, string) {
	id, tail, ok := strings.Cut(strings.TrimPrefix(rest, "tasks/"), "/")
	if !strings.HasPrefix(rest, "tasks/") || !ok || id == "" || strings.Contains(id, ":") {
		return routeNone, nil, ""
	}
	switch {
	case tail == "pushNotificationConfigs":
		return routePushConfig, []string{http.MethodPost, http.MethodGet}, id
	case strings.HasPrefix(tail, "pushNotificationConfigs/"):
		cfg := strings.TrimPrefix(tail, "pushNotificationConfigs/")
		if cfg == "" || strings.Contains(cfg, "/") {
			return routeNone, nil, ""
		}
		return routePushConfig, []string{http.MethodGet, http.MethodDelete}, id
	}
	return routeNone, nil, ""
}

// serveUnsupported answers the A2A operations the card does not declare:
// streaming (message:stream, tasks/{id}:subscribe) and the extended card are
// UNSUPPORTED_OPERATION, push-notification configs
// PUSH_NOTIFICATION_NOT_SUPPORTED (A2A 1.0, PACT §6; 400).
func (s *Server) serveUnsupported(w http.ResponseWriter, rt route, b *brandDef) {
	caps := s.card(b).Capabilities
	switch rt {
	case routeStream, routeSubscribe:
		if !caps.Streaming {
			writeA2AError(w, ReasonUnsupportedOperation, "streaming is not supported by this agent (its card does not declare capabilities.streaming)")
			return
		}
	case routeExtendedCard:
		if !caps.ExtendedAgentCard {
			writeA2AError(w, ReasonUnsupportedOperation, "this agent has no extended Agent Card (its card does not declare capabilities.extendedAgentCard)")
			return
		}
	case routePushConfig:
		if !caps.PushNotifications {
			writeA2AError(w, ReasonPushNotSupported, "push notifications are not supported by this agent")
			return
		}
	}
	// A capability declared but not implemented would be a bug in the
	// demo: say so rather than pretend.
	writeA2AError(w, ReasonInternal, "declared but not implemented by the demo Provider")
}

// serveCacheable writes body for GET (headers only for HEAD) with a strong
// ETag (the body's SHA-256) and Last-Modified (the Provider's start, when
// the cards were made), and answers a conditional request whose
// If-None-Match matches, or, without If-None-Match, whose If-Modified-Since
// is not older, with 304 and no body (RFC 9110 §13, via http.ServeContent).
func (s *Server) serveCacheable(w http.ResponseWriter, r *http.Request, body []byte, contentType string) {
	sum := sha256.Sum256(body)
	w.Header().Set("ETag", `"`+base64.RawURLEncoding.EncodeToString(sum[:16])+`"`)
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Access-Control-Allow-Origin", "*")
	http.ServeContent(w, r, "", s.cardsMadeAt(), bytes.NewReader(body))
}

// cardsMadeAt is the Last-Modified of the cards: the Provider's start, to
// the second (HTTP dates have no finer unit).
func (s *Server) cardsMadeAt() time.Time { return s.started.Truncate(time.Second) }
