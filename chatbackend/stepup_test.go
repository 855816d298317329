package chatbackend

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pact-cli/pact/agent"
	"github.com/pact-cli/pact/demoprovider"
	"github.com/pact-cli/pact/tui"
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

// §5.2, §5.5: a step-up naming a scope the card does not list opens no login
// panel and offers nothing to approve: the chat shows the Brand's words, then
// pact's (agent.StepUp.Words, the words the CLI and MCP use), with the
// undeclared id quoted and never put into a /login.
func TestSection5_5_StepUpWithAnUndeclaredScopeOpensNoPanel(t *testing.T) {
	r := newRig(t, demoprovider.Config{})
	ctx := testCtx(t)
	if _, err := r.b.Login(ctx, []string{"orders:read"}, nil); err != nil {
		t.Fatal(err)
	}
	<-r.opened
	evil := "orders:read$(id>/tmp/PWNED)"
	r.rec.next = &missingScopes{next: r.rec.next, ids: []string{"orders:cancel", evil}}
	rep, err := r.b.Send(ctx, "please cancel order A-10001")
	if err != nil {
		t.Fatal(err)
	}
	if rep.StepUp != nil {
		t.Fatalf("a login panel was asked for: %+v", rep.StepUp)
	}
	if len(rep.Turns) != 2 || rep.Turns[0].Role != tui.RoleAgent || rep.Turns[0].Text == "" || rep.Turns[1].Role != tui.RoleError {
		t.Fatalf("turns = %+v, want the Brand's words and pact's", rep.Turns)
	}
	words := rep.Turns[1].Text
	if !strings.Contains(words, `its card does not list ("orders:read$(id>/tmp/PWNED)")`) ||
		!strings.Contains(words, "/login orders:cancel ") || strings.Contains(words, "/login "+evil) || strings.Contains(words, "orders:cancel "+evil) {
		t.Fatalf("words = %q", words)
	}
}

// §5.5: Resend after a step-up goes out only once the grant holds every
// scope the Brand asked for (agent.StepUp.Granted, the rule agent.SendID
// keeps for the CLI): before, it is refused and nothing is sent.
func TestSection5_5_ResendWaitsForEveryScopeAsked(t *testing.T) {
	r := newRig(t, demoprovider.Config{})
	ctx := testCtx(t)
	if _, err := r.b.Login(ctx, []string{"orders:read"}, nil); err != nil {
		t.Fatal(err)
	}
	<-r.opened
	rep, err := r.b.Send(ctx, "please cancel order A-10001")
	if err != nil || rep.StepUp == nil {
		t.Fatalf("step-up: %+v, %v", rep, err)
	}
	sent := len(r.rec.all())
	_, err = r.b.Resend(ctx)
	var ng *agent.NotGrantedError
	if !errors.As(err, &ng) || !slices.Equal(ng.Missing, []string{"orders:cancel"}) {
		t.Fatalf("Resend before the scope was granted = %v, want NotGrantedError for orders:cancel", err)
	}
	if n := len(r.rec.all()); n != sent {
		t.Fatalf("%d messages went out although the scope was not granted", n-sent)
	}
	if _, err := r.b.Login(ctx, []string{"orders:cancel"}, nil); err != nil {
		t.Fatal(err)
	}
	<-r.opened
	if rep, err := r.b.Resend(ctx); err != nil || len(rep.Turns) != 1 || !strings.Contains(rep.Turns[0].Text, "cancelled") {
		t.Fatalf("Resend once granted: %+v, %v", rep, err)
	}
}
