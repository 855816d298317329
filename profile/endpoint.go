package profile

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/pact-cli/pact/httpx"
)

// ErrUntrustedEndpoint matches every *UntrustedEndpointError.
var ErrUntrustedEndpoint = errors.New("untrusted endpoint")

// UntrustedEndpointError refuses an endpoint that a personal-agent JWT (or
// a request made on its behalf) would reach, because it is not under the
// registration of the Provider the JWT's audience belongs to (issue 9,
// PACT §3.1, §5.1). It matches ErrUntrustedEndpoint. The CLI reports it as
// UNTRUSTED_ENDPOINT (exit 1).
type UntrustedEndpointError struct {
	// What names the endpoint ("token endpoint", "jwks_uri").
	What string
	// URL is the endpoint refused (userinfo redacted).
	URL string
	// Provider is the registration whose audience was chosen (its URL and
	// audience).
	Provider Registration
	// Other is the registration that owns URL instead, when one does.
	Other *Registration
	// Reason is set when URL itself is malformed or unsafe.
	Reason string
}

func (e *UntrustedEndpointError) Error() string {
	where := originString(e.URL)
	what := e.What
	if what == "" {
		what = "endpoint"
	}
	if e.Reason != "" {
		return fmt.Sprintf("refused to contact the %s %s: %s", what, e.URL, e.Reason)
	}
	if e.Other == nil && originString(e.URL) == originString(e.Provider.URL) {
		// Same server, another path: say so, naming both.
		return fmt.Sprintf("refused to contact the %s at %s: it is outside the registered Provider's path. pact's identity for this Brand is minted for the Provider registered at %s (audience %q) "+
			"and is sent only to URLs under that path. The card or its metadata points elsewhere; nothing was sent there",
			what, redactedURL(e.URL), e.Provider.URL, e.Provider.Audience)
	}
	owner := "a server this profile has no registration for"
	if e.Other != nil {
		owner = "another registered Provider (" + e.Other.URL + ")"
	}
	return fmt.Sprintf("refused to contact the %s at %s: pact's identity for this Brand is minted for the Provider at %s (audience %q) "+
		"and is sent only to URLs under %s, but %s belongs to %s. The card or its metadata points elsewhere; nothing was sent there",
		what, where, originString(e.Provider.URL), e.Provider.Audience, e.Provider.URL, where, owner)
}

// Is makes errors.Is(err, ErrUntrustedEndpoint) true.
func (e *UntrustedEndpointError) Is(target error) bool { return target == ErrUntrustedEndpoint }

func redactedURL(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	return raw
}

func originString(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host)
}

// CheckEndpoint is the endpoint-origin rule, the one place it is decided:
// a personal-agent JWT for reg's audience — and every request the login
// and refresh of a delegation make with it — goes only to URLs under reg,
// by the same longest-prefix match (Match) that chose reg for the Brand's
// interface URL. rawURL must therefore be an acceptable URL (httpx.CheckURL:
// https, or http on loopback, no userinfo), have no "." or ".." path
// segment, and Match it to reg itself (not to a longer registration of
// another Provider). what names the endpoint in the error.
//
// Errors: *UntrustedEndpointError (matches ErrUntrustedEndpoint).
func (c *Config) CheckEndpoint(reg Registration, what, rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return &UntrustedEndpointError{What: what, URL: rawURL, Provider: reg, Reason: "it is not an absolute URL"}
	}
	if err := httpx.CheckURL(u); err != nil {
		return &UntrustedEndpointError{What: what, URL: u.Redacted(), Provider: reg, Reason: err.Error()}
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if seg == "." || seg == ".." {
			return &UntrustedEndpointError{What: what, URL: rawURL, Provider: reg, Reason: `its path has a "." or ".." segment`}
		}
	}
	m, ok := c.Match(rawURL)
	if ok && m.URL == reg.URL && m.Audience == reg.Audience {
		return nil
	}
	e := &UntrustedEndpointError{What: what, URL: rawURL, Provider: reg}
	if ok {
		other := *m
		e.Other = &other
	}
	return e
}

// Minter hands out personal-agent JWTs for one audience (*signer.Ahead).
type Minter interface {
	Token() (string, error)
}

// BoundMinter mints personal-agent JWTs for one registration and only for
// endpoints under it: the sole way the conversation and login code get a
// PA JWT, so a token for one Provider cannot be minted for a URL elsewhere
// (refusal by construction).
type BoundMinter struct {
	cfg Config
	reg Registration
	m   Minter
}

// Bind returns the BoundMinter for reg (a registration of c) minting with
// m. The registrations are copied: later edits of c do not change it.
func (c *Config) Bind(reg Registration, m Minter) *BoundMinter {
	cp := Config{Providers: append([]Registration(nil), c.Providers...)}
	return &BoundMinter{cfg: cp, reg: reg, m: m}
}

// Registration is the Provider the tokens are for.
func (b *BoundMinter) Registration() Registration { return b.reg }

// Check is CheckEndpoint for the bound registration: what names the
// endpoint in the error ("token endpoint", "jwks_uri").
func (b *BoundMinter) Check(what, endpoint string) error {
	return b.cfg.CheckEndpoint(b.reg, what, endpoint)
}

// Token returns a fresh PA JWT to send to endpoint, after CheckEndpoint.
// The signature fits a2aclient.Request.PAToken and
// deviceflow.Client.PAToken. Errors: *UntrustedEndpointError (no token is
// minted), or the minter's.
func (b *BoundMinter) Token(_ context.Context, endpoint string) (string, error) {
	if err := b.cfg.CheckEndpoint(b.reg, "endpoint", endpoint); err != nil {
		return "", err
	}
	return b.m.Token()
}
