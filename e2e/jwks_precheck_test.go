package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// Trust finding 7: a jwks_uri that cannot be used (here a set over the
// 256 KiB cap) fails the login before the device flow starts — before the
// User is shown a code to approve — not after the approval.
func TestLogin_UnusableJWKSFailsBeforeTheUserApproves(t *testing.T) {
	t.Parallel()
	p := newTrustProvider(t)
	for i := 0; i < 3000; i++ {
		p.JWKSExtra = append(p.JWKSExtra, fmt.Sprintf(`{"kty":"EC","crv":"P-256","kid":"k-%d","x":"MKBCTNIcKUSDii11ySs3526iDZ8AiTo7Tu6KPAqv7D4","y":"4Etl6SRW2YiLUrN5vfvVHuhp7x8PxltmWWlbbM4IFyM"}`, i))
	}
	e := trustEnv(t, p)
	r := e.run("login", p.CardURL(), "--scope", "orders:read", "--no-browser", "--json")
	wantError(t, r, 1, anyReason, 0, "signing keys", "larger than 256 KiB")
	for _, s := range p.rec.all() {
		if strings.HasSuffix(s.Path, "/device_authorization") || strings.HasSuffix(s.Path, "/token") {
			t.Errorf("the device flow started despite the unusable JWKS: %s %s", s.Method, s.Path)
		}
	}
	if strings.Contains(r.stderr, "Code:") {
		t.Errorf("the User was shown a code to approve:\n%s", r.stderr)
	}
}
