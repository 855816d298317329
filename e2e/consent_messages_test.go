package e2e

import (
	"net/http"
	"strings"
	"testing"
)

// Trust finding 5: access_denied and expired_token say what happened ("the
// permission was declined…", "the login code expired…"), not a generic
// refusal, and --json carries the response's status (400).
func TestDeviceFlow_ConsentErrorsSayWhatHappened(t *testing.T) {
	t.Parallel()
	for code, want := range map[string]string{
		"access_denied": "declined at the Brand's login page",
		"expired_token": "the login code expired before it was approved",
	} {
		t.Run(code, func(t *testing.T) {
			t.Parallel()
			p := newTrustProvider(t)
			inner := p.srv.Config.Handler
			p.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/a2a/b1/oauth/token" {
					p.rec.record(r)
					writeJSON(w, 400, map[string]any{"error": code})
					return
				}
				inner.ServeHTTP(w, r)
			})
			e := trustEnv(t, p)
			r := e.run("login", p.CardURL(), "--scope", "orders:read", "--no-browser", "--json")
			wantError(t, r, 4, strings.ToUpper(code), 400, want)
			r = e.run("login", p.CardURL(), "--scope", "orders:read", "--no-browser")
			if r.code != 4 || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "refused the request") {
				t.Errorf("exit %d; the human line does not say %q:\n%s", r.code, want, r.stderr)
			}
		})
	}
}
