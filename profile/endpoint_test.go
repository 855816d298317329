package profile

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
)

type countMinter struct{ n int }

func (m *countMinter) Token() (string, error) { m.n++; return "pa.jwt", nil }

func endpointConfig() (*Config, Registration) {
	p := Registration{URL: "https://p.example/a2a", Audience: "aud-p"}
	q := Registration{URL: "https://p.example/a2a/other", Audience: "aud-q"}
	r := Registration{URL: "https://q.example", Audience: "aud-r"}
	return &Config{Providers: []Registration{p, q, r}}, p
}

// Issue 9 rule 1 (endpoint origin): a PA JWT for audience X goes only to
// URLs under the registration of the Provider that owns X, by the same
// longest-prefix match that chose X.
func TestIssue9_EndpointOriginRule(t *testing.T) {
	c, p := endpointConfig()
	ok := []string{
		"https://p.example/a2a/b1/oauth/token",
		"https://P.EXAMPLE:443/a2a/b1/oauth/.well-known/oauth-authorization-server",
		"https://p.example/a2a",
	}
	for _, u := range ok {
		if err := c.CheckEndpoint(p, "token endpoint", u); err != nil {
			t.Errorf("CheckEndpoint(%s) = %v, want accepted", u, err)
		}
	}
	bad := map[string]string{
		"https://evil.example/a2a/b1/oauth/token":   "a server this profile has no registration",
		"https://p.example/a2ab/oauth/token":        "https://p.example/a2ab/oauth/token: it is outside the registered Provider's path. pact's identity for this Brand is minted for the Provider registered at https://p.example/a2a (audience \"aud-p\")",
		"https://p.example/oauth/token":             "outside the registered Provider's path",
		"https://p.example/a2a/other/oauth/token":   "another registered Provider (https://p.example/a2a/other)",
		"https://q.example/a2a/oauth/token":         "another registered Provider (https://q.example)",
		"http://p.example/a2a/b1/oauth/token":       "plain http",
		"https://p.example:8443/a2a/oauth/token":    "no registration",
		"https://u:pw@p.example/a2a/oauth/token":    "user name or password",
		"https://p.example/a2a/../evil/oauth/token": `".."`,
		"/a2a/b1/oauth/token":                       "not an absolute URL",
	}
	for u, want := range bad {
		err := c.CheckEndpoint(p, "token endpoint", u)
		var ue *UntrustedEndpointError
		if !errors.As(err, &ue) || !errors.Is(err, ErrUntrustedEndpoint) {
			t.Errorf("CheckEndpoint(%s) = %v, want an UntrustedEndpointError", u, err)
			continue
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("CheckEndpoint(%s): %q does not say %q", u, err, want)
		}
		if strings.Contains(err.Error(), ":pw@") {
			t.Errorf("password leaked: %q", err)
		}
	}
	msg := c.CheckEndpoint(p, "token endpoint", "https://evil.example/t").Error()
	for _, origin := range []string{"https://evil.example", "https://p.example"} {
		if !strings.Contains(msg, origin) {
			t.Errorf("message %q does not name %s", msg, origin)
		}
	}
}

// The BoundMinter refuses by construction: no token is minted for an
// endpoint outside the registration.
func TestIssue9_BoundMinterMintsOnlyForEndpointsUnderTheRegistration(t *testing.T) {
	c, p := endpointConfig()
	m := &countMinter{}
	b := c.Bind(p, m)
	if tok, err := b.Token(context.Background(), "https://p.example/a2a/b1/message:send"); err != nil || tok != "pa.jwt" {
		t.Fatalf("own endpoint: %q %v", tok, err)
	}
	if tok, err := b.Token(context.Background(), "https://evil.example/oauth/token"); !errors.Is(err, ErrUntrustedEndpoint) || tok != "" {
		t.Fatalf("foreign endpoint: %q %v", tok, err)
	}
	if m.n != 1 {
		t.Fatalf("minted %d tokens, want 1", m.n)
	}
}

func FuzzCheckEndpoint(f *testing.F) {
	f.Add("https://p.example/a2a", "https://p.example/a2a/b1/oauth/token")
	f.Add("http://127.0.0.1:8080", "http://127.0.0.1:8080/a2a/x")
	f.Add("https://p.example/a2a", "https://p.example/a2ab")
	f.Add("https://p.example", "https://u:p@p.example/")
	f.Add("https://p.example/a", "https://p.example/a/../b")
	f.Fuzz(func(t *testing.T, regURL, endpoint string) {
		reg := Registration{URL: regURL, Audience: "aud"}
		c := &Config{Providers: []Registration{reg, {URL: "https://other.example", Audience: "o"}}}
		if c.CheckEndpoint(reg, "endpoint", endpoint) != nil {
			return
		}
		// Accepted: same origin as the registration, its path segments
		// first, no userinfo, no dot segments.
		eu, err := url.Parse(endpoint)
		if err != nil {
			t.Fatalf("accepted an unparsable URL %q", endpoint)
		}
		ru, err := url.Parse(regURL)
		if err != nil {
			t.Fatalf("accepted %q for an unparsable registration %q", endpoint, regURL)
		}
		if eu.User != nil {
			t.Fatalf("accepted userinfo in %q", endpoint)
		}
		if !strings.EqualFold(eu.Scheme, ru.Scheme) || hostPort(eu) != hostPort(ru) {
			t.Fatalf("accepted %q on another origin than %q", endpoint, regURL)
		}
		es, rs := segments(eu.Path), segments(ru.Path)
		if len(rs) > len(es) {
			t.Fatalf("accepted %q outside %q", endpoint, regURL)
		}
		for i := range rs {
			if rs[i] != es[i] {
				t.Fatalf("accepted %q outside %q", endpoint, regURL)
			}
		}
		for _, s := range es {
			if s == "." || s == ".." {
				t.Fatalf("accepted a dot segment in %q", endpoint)
			}
		}
	})
}
