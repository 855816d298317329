package tour

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/pact-cli/pact/demoprovider"
	"github.com/pact-cli/pact/deviceflow"
	"github.com/pact-cli/pact/iostreams"
)

// person plays Jane in the browser: the scripted User by default, or the
// real browser.
type person struct {
	open   func(string) error
	jar    http.CookieJar
	t      *tour
	visits int
	wait   *iostreams.Spinner
}

func (p *person) stopWaiting() {
	if p.wait != nil {
		p.wait.Stop()
		p.wait = nil
	}
}

func (p *person) visit(ctx context.Context, scopes []string) func(*deviceflow.Authorization) {
	return func(a *deviceflow.Authorization) {
		p.t.line("user_code %s · link %s", p.t.st.Bold.Render(a.UserCode), a.VerificationURIComplete)
		p.t.json(func(st *Step) {
			st.Logins = append(st.Logins, StepLogin{Scopes: append([]string{}, scopes...), UserCode: a.UserCode, Link: a.VerificationURIComplete})
		})
		if p.open != nil {
			// The opener is started detached and never waited for: the
			// countdown (and Ctrl+C) starts at once.
			if err := p.open(a.VerificationURIComplete); err != nil {
				p.t.line("Could not open the browser (%v); open this link: %s", err, a.VerificationURIComplete)
				p.t.line("Log in there as jane / jane-demo-pass and approve.")
			} else {
				p.t.line("Opening it in your browser: log in as jane / jane-demo-pass and approve.")
			}
			p.wait = p.t.io.StartCountdown("Waiting for your approval in the browser", a.ExpiresAt)
			return
		}
		p.visits++
		if p.visits == 1 {
			p.t.line("Jane (played by a script) opens the link, logs in as jane and approves on the consent page.")
		} else {
			p.t.line("Jane opens the link; still logged in with the Brand, she only approves on the consent page.")
		}
		defer func() { p.wait = p.t.io.StartCountdown("Waiting for Jane's approval", a.ExpiresAt) }()
		u := demoprovider.ScriptedUser{Username: "jane", Password: "jane-demo-pass",
			HTTPClient: &http.Client{Jar: p.jar, Timeout: 10 * time.Second}}
		go func() {
			if err := u.Visit(ctx, a.VerificationURIComplete); err != nil {
				if p.t.emit != nil {
					p.t.io.Eprintf("the scripted User failed: %v\n", err)
					return
				}
				p.t.line("the scripted User failed: %v", err)
			}
		}()
	}
}

// describeJWT shows a token's header and claims (our own token, shown for
// explanation; the token itself is never printed).
func describeJWT(tok string) string {
	c := jwtClaims(tok)
	if c == nil {
		return "?"
	}
	return fmt.Sprintf("alg %s, kid %s, iss %s, sub %s (pairwise, anonymous), aud %s, exp = iat + %ds, random jti",
		c.Alg, short(c.KID), c.Iss, short(c.Sub), c.Aud, c.LifetimeSeconds)
}

// jwtClaims reads a token's header and claims (nil when it is no JWS).
func jwtClaims(tok string) *StepToken {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return nil
	}
	var h struct{ Alg, Kid string }
	var c struct {
		Iss, Sub, Aud string
		Iat, Exp      int64
	}
	if b, err := base64.RawURLEncoding.DecodeString(parts[0]); err == nil {
		json.Unmarshal(b, &h)
	}
	if b, err := base64.RawURLEncoding.DecodeString(parts[1]); err == nil {
		json.Unmarshal(b, &c)
	}
	return &StepToken{Alg: h.Alg, KID: h.Kid, Iss: c.Iss, Sub: c.Sub, Aud: c.Aud, LifetimeSeconds: c.Exp - c.Iat}
}

func short(s string) string {
	if len(s) > 10 {
		return s[:10] + "…"
	}
	return s
}
