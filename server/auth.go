package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/pact-cli/pact/devicetoken"
	"github.com/pact-cli/pact/serverapi"
	"github.com/pact-cli/pact/store"
)

// Caller is the authenticated device of a request and the User it acts
// for. Every handler of an authenticated route reads it with CallerFrom
// and scopes every lookup to Caller.UserID: an id of another User is
// answered as one that does not exist (NotFound).
type Caller struct {
	UserID   string
	DeviceID string
	Device   store.ServerDevice
}

type callerKey struct{}

func withCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom is the request's authenticated caller; ok is false on a route
// without authentication.
func CallerFrom(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	return c, ok
}

// authenticate checks the request's device token (devicetoken.Verify
// against the device's key in the database), then, every time, that the
// device is not revoked, then records its jti (a jti used before is
// refused) and counts the request in the device's rate-limit window, in
// the database. Each refusal is 401 UNAUTHENTICATED (429 RATE_LIMITED for
// the limit) with one sentence the device's User can act on.
func (s *Server) authenticate(r *http.Request) (Caller, error) {
	ctx := r.Context()
	raw := devicetoken.FromHeader(r.Header.Get("Authorization"))
	if raw == "" {
		s.metrics.authFailures.WithLabelValues("no_token").Inc()
		return Caller{}, unauthenticated("this call needs a device token (Authorization: " + devicetoken.Scheme + "); enrol this device with `pact init --server URL --code CODE`")
	}
	now := s.now()
	var dev store.ServerDevice
	claims, err := devicetoken.Verify(raw, s.opts.Identity.Issuer(), now, func(id string) (devicetoken.Device, error) {
		d, err := s.opts.Store.Device(ctx, id)
		if errors.Is(err, store.ErrServerNotFound) {
			return devicetoken.Device{}, devicetoken.ErrUnknown
		}
		if err != nil {
			return devicetoken.Device{}, err
		}
		var k jose.JSONWebKey
		if err := json.Unmarshal([]byte(d.JWK), &k); err != nil {
			return devicetoken.Device{}, fmt.Errorf("device %s: stored key: %w", d.ID, err)
		}
		dev = d
		return devicetoken.Device{KID: d.KID, Key: &k}, nil
	})
	var te *devicetoken.Error
	if errors.As(err, &te) {
		s.metrics.authFailures.WithLabelValues("refused").Inc()
		return Caller{}, unauthenticated(te.Public)
	}
	if err != nil {
		return Caller{}, err
	}
	if dev.Revoked != nil {
		s.metrics.authFailures.WithLabelValues("revoked").Inc()
		return Caller{}, unauthenticated(fmt.Sprintf("this device (%s) was revoked on %s; enrol it again with a new code: pact init --server URL --code CODE --force",
			dev.ID, dev.Revoked.UTC().Format("2006-01-02 15:04 MST")))
	}
	expires := claimsExpiry(claims)
	count, err := s.opts.Store.Admit(ctx, dev.ID, claims.ID, expires, now.Truncate(rateWindow), now)
	if errors.Is(err, store.ErrReplay) {
		s.metrics.authFailures.WithLabelValues("replay").Inc()
		return Caller{}, unauthenticated("this device token was used before; every request needs a new one")
	}
	if err != nil {
		return Caller{}, err
	}
	if limit := s.opts.Settings.RateLimit; count > limit {
		s.metrics.rateLimited.Inc()
		return Caller{}, &Error{Status: http.StatusTooManyRequests, Reason: serverapi.ReasonRateLimited, RetryAfter: retryAfter(now),
			Message: fmt.Sprintf("this device sent more than %d requests in a minute; wait and try again", limit)}
	}
	return Caller{UserID: dev.UserID, DeviceID: dev.ID, Device: dev}, nil
}

// claimsExpiry is how long a jti is kept: until the token could no longer
// be accepted (exp + the clock skew tolerated).
func claimsExpiry(c devicetoken.Claims) time.Time {
	return time.Unix(c.Expiry, 0).Add(devicetoken.ClockSkew)
}
