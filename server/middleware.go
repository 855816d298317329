package server

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/pact-cli/pact/serverapi"
)

type requestIDKey struct{}

// RequestID is the request's id (X-Request-Id), "" outside a request.
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// newRequestID is 80 random bits, base32 (16 characters).
func newRequestID() string {
	var b [10]byte
	rand.Read(b[:])
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
}

// acceptableRequestID reports whether an incoming X-Request-Id (from a
// reverse proxy) may be kept: 1 to 64 characters of letters, digits, '.',
// '_', ':' and '-', so that it cannot forge log lines or headers.
func acceptableRequestID(v string) bool {
	if len(v) == 0 || len(v) > 64 {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-' || c == ':') {
			return false
		}
	}
	return true
}

// recorder remembers what the access log and the metrics need.
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
	route  string
	reason string
	caller Caller
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

// Flush lets streamed answers (Server-Sent Events) through.
func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		if r.status == 0 {
			r.status = http.StatusOK
		}
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// wrap gives every request its id (kept from a reverse proxy's
// X-Request-Id when it is a plain token, else new), answers it in the
// X-Request-Id header, recovers a panic as a 500 envelope, and writes one
// access log line and the metrics of the request. The log line has the
// request id, method, route pattern (never the query), status, reason,
// duration, bytes, and the device and User ids when authenticated: no
// header, no body, no token, no message text.
func (s *Server) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get(serverapi.HeaderRequestID)
		if !acceptableRequestID(id) {
			id = newRequestID()
		}
		w.Header().Set(serverapi.HeaderRequestID, id)
		ctx := context.WithValue(r.Context(), requestIDKey{}, id)
		r = r.WithContext(ctx)
		rec := &recorder{ResponseWriter: w}
		s.metrics.inFlight.Inc()
		defer func() {
			s.metrics.inFlight.Dec()
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.log.LogAttrs(ctx, slog.LevelError, "panic", slog.String("request_id", id), slog.String("panic", fmt.Sprint(p)), slog.String("stack", string(debug.Stack())))
				if rec.status == 0 {
					s.writeError(rec, r, &Error{Status: http.StatusInternalServerError, Reason: serverapi.ReasonError,
						Message: "the server failed to answer this request; the operator's logs have request id " + id})
				}
			}
			if rec.status == 0 {
				rec.status = http.StatusOK
			}
			route := rec.route
			if route == "" {
				route = "unmatched"
			}
			d := time.Since(start)
			s.metrics.observe(r.Method, route, rec.status, rec.reason, d)
			attrs := []slog.Attr{
				slog.String("request_id", id), slog.String("method", r.Method), slog.String("route", route),
				slog.Int("status", rec.status), slog.Float64("duration_ms", float64(d.Microseconds())/1000), slog.Int64("bytes", rec.bytes),
			}
			if rec.reason != "" {
				attrs = append(attrs, slog.String("reason", rec.reason))
			}
			if rec.caller.DeviceID != "" {
				attrs = append(attrs, slog.String("user_id", rec.caller.UserID), slog.String("device_id", rec.caller.DeviceID))
			}
			level := slog.LevelInfo
			if rec.status >= 500 {
				level = slog.LevelError
			}
			s.log.LogAttrs(ctx, level, "request", attrs...)
		}()
		next.ServeHTTP(rec, r)
	})
}

// rateWindow is the length of a rate-limit window.
const rateWindow = time.Minute

// retryAfter is the wait until the window holding now ends.
func retryAfter(now time.Time) time.Duration {
	end := now.Truncate(rateWindow).Add(rateWindow)
	return end.Sub(now)
}
