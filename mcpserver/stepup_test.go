package mcpserver

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pact-cli/pact/demoprovider"
)

// missingScopes is an http.RoundTripper that makes every step-up the
// Provider sends name ids instead of its own pact.missingScopes, as a
// Provider whose card and agent disagree would.
type missingScopes struct {
	next http.RoundTripper
	ids  []string
}

func (m *missingScopes) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := m.next.RoundTrip(req)
	if err != nil || !strings.HasSuffix(req.URL.Path, "/message:send") {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if json.Unmarshal(body, &doc) == nil {
		if task, ok := doc["task"].(map[string]any); ok {
			if md, ok := task["metadata"].(map[string]any); ok && md["pact.missingScopes"] != nil {
				md["pact.missingScopes"] = m.ids
				body, _ = json.Marshal(doc)
			}
		}
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	return resp, nil
}

// §5.2, §5.5: a step-up naming a scope the card does not list is no tool
// error and starts no login: stepUp lists the declared scope in
// missingScopes and the other in undeclared, login is null, and the text
// gives the core's words (agent.StepUp.Words, as the CLI and the chat say
// it), the undeclared id quoted and never offered to start_login.
func TestSection5_5_MCP_StepUpWithAnUndeclaredScopeStartsNoLogin(t *testing.T) {
	evil := "orders:read$(id>/tmp/PWNED)"
	e := newEnvWith(t, false, func(rt http.RoundTripper) http.RoundTripper {
		return &missingScopes{next: rt, ids: []string{"orders:cancel", evil}}
	}, demoprovider.Config{PollInterval: time.Second})
	b := e.brands[0].SiteURL
	var started LoginStarted
	e.mustCall("start_login", map[string]any{"brand": b, "scopes": []string{"orders:read"}}, &started)
	<-e.opened
	e.approve(started.VerificationURIComplete, demoprovider.ScriptedUser{})
	if st := e.waitLogin(b); st.Status != StatusGranted {
		t.Fatalf("login: %+v", st)
	}

	var su SendOutput
	res := e.mustCall("send_message", map[string]any{"brand": b, "text": "cancel A-10001"}, &su)
	if su.StepUp == nil || su.StepUp.Login != nil || !slices.Equal(su.StepUp.MissingScopes, []string{"orders:cancel"}) ||
		!slices.Equal(su.StepUp.Undeclared, []string{evil}) {
		t.Fatalf("step-up = %+v", su.StepUp)
	}
	words := text(res)
	if !strings.Contains(words, `its card does not list ("orders:read$(id>/tmp/PWNED)")`) ||
		!strings.Contains(words, "call start_login with scopes orders:cancel,") || strings.Contains(words, "scopes orders:cancel, "+evil) {
		t.Fatalf("text = %s", words)
	}
	// No login replaced the one granted: login_status still reports it.
	var st LoginStatus
	e.mustCall("login_status", map[string]any{"brand": b}, &st)
	if st.Status != StatusGranted || !slices.Equal(st.ScopesRequested, []string{"orders:read"}) {
		t.Fatalf("a login was started for the step-up: %+v", st)
	}
}
