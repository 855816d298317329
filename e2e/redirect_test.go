package e2e

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// Trust finding 1: a request that carries a credential (the PA JWT, the
// delegation token, a device code or refresh token in a form) follows no
// redirect at all, same origin included. Here the registration is the
// interface's path only, and the server sends each credentialed call to
// /other/steal (same origin, outside the registration) or to
// /a2a/evil/steal (another registered Provider, another audience). For
// each call (device authorization, token poll, refresh, message:send with
// 302 and 307) the redirect target receives nothing, the call is made
// once (not retried), and the error says "redirect", not "could not
// reach".
func TestCredentialedRequestsFollowNoRedirect(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, path string // the endpoint that answers with a redirect
		status     int
		target     string
		loginFirst bool
		expired    bool // message:send answers 401 invalid_token: a refresh
	}{
		{"device authorization", "/a2a/b1/oauth/device_authorization", 307, "/other/steal", false, false},
		{"token poll", "/a2a/b1/oauth/token", 308, "/a2a/evil/steal", false, false},
		{"refresh", "/a2a/b1/oauth/token", 307, "/other/steal", true, true},
		{"send 307", "/a2a/b1/message:send", 307, "/a2a/evil/steal", true, false},
		{"send 302", "/a2a/b1/message:send", 302, "/other/steal", true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := newTrustProvider(t)
			inner := p.srv.Config.Handler
			var armed atomic.Bool
			var hits atomic.Int32
			p.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasSuffix(r.URL.Path, "/steal") {
					p.rec.record(r)
					writeJSON(w, 200, map[string]any{})
					return
				}
				if armed.Load() && tc.expired && r.URL.Path == "/a2a/b1/message:send" {
					p.rec.record(r)
					w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
					w.WriteHeader(401)
					return
				}
				if armed.Load() && r.URL.Path == tc.path {
					hits.Add(1)
					p.rec.record(r)
					http.Redirect(w, r, tc.target, tc.status)
					return
				}
				inner.ServeHTTP(w, r)
			})
			e := newEnv(t, "http://127.0.0.1:1")
			e.must("provider", "add", p.Iface(), "--audience", "aud-p", "--json")
			e.must("provider", "add", p.URL()+"/a2a/evil", "--audience", "aud-evil", "--json")
			var r result
			if tc.loginFirst {
				e.must("login", p.CardURL(), "--scope", "orders:read", "--no-browser", "--json")
				armed.Store(true)
				r = e.run("send", p.CardURL(), "hello", "--json")
			} else {
				armed.Store(true)
				r = e.run("login", p.CardURL(), "--scope", "orders:read", "--no-browser", "--json")
			}
			if r.code == 0 {
				t.Fatalf("exit 0 despite the redirect:\n%s", r.stdout)
			}
			status := 0
			if tc.expired {
				status = 401 // the Provider's refusal of the token that led to the refresh
			}
			je := wantError(t, r, r.code, anyReason, status, "redirect")
			if strings.Contains(je.Message, "could not reach") || strings.Contains(je.Message, "check your connection") {
				t.Errorf("a refused redirect reads as a network failure: %q", je.Message)
			}
			if !tc.expired && je.Reason != "REDIRECT" {
				t.Errorf("reason %q, want REDIRECT", je.Reason)
			}
			for _, s := range p.rec.all() {
				if strings.HasSuffix(s.Path, "/steal") {
					t.Errorf("the redirect target received %s %s (Authorization %v for %q, delegation %v, body %q)",
						s.Method, s.Path, s.Authorization != "", jwtAud(s.Authorization), s.Delegation != "", s.Body)
				}
			}
			if n := hits.Load(); n != 1 {
				t.Errorf("%s was called %d times, want once (a refused redirect is not retried)", tc.path, n)
			}
		})
	}
}
