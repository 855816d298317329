package providercheck

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pact-cli/pact/delegation"
	"github.com/pact-cli/pact/discovery"
	"github.com/pact-cli/pact/receipts"
)

// The §5 checks that use the delegation token: its claims (§5.4), sending
// with it (§5.5), step-up and receipts (§5.6).

// needToken is the verified delegation token, or why there is none.
func (r *runner) needToken(ctx context.Context) (*loginState, *outcome) {
	d, md, o := r.needScopes(ctx)
	if o != nil {
		return nil, o
	}
	l := r.doLogin(ctx, d)
	if l.loginErr != nil || l.tok == nil {
		o := skip("no delegation token (see delegation.login)")
		return nil, &o
	}
	if l.claims == nil && l.claimsErr == nil {
		l.claims, l.claimsErr = delegation.VerifyToken(ctx, l.keys, l.tok.AccessToken.Reveal(), delegation.Expect{
			Issuer: md.Issuer, JWKSURI: md.JWKSURI, Audience: r.iface(), ClientID: r.opts.Config.Issuer, Now: r.now()})
	}
	return l, nil
}

func checkTokenClaims(ctx context.Context, r *runner) outcome {
	l, o := r.needToken(ctx)
	if o != nil {
		return *o
	}
	sent := "GET " + r.login.md.JWKSURI
	if l.claimsErr != nil {
		return fail(sent, "", "%v", l.claimsErr)
	}
	c := l.claims
	got := fmt.Sprintf("iss %s, aud %s, client_id %s, scope %q, grant_id set, lifetime %s", c.Issuer, c.Audience, c.ClientID, strings.Join(c.Scopes, " "), c.ExpiresAt.Sub(c.IssuedAt).Round(time.Second))
	if !sameSet(c.Scopes, l.tok.Scope) {
		return fail(sent, got, "the token's scope %q is not the token response's %q", strings.Join(c.Scopes, " "), strings.Join(l.tok.Scope, " "))
	}
	return pass(sent, got)
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// sendDelegated sends text under the token in the delegated conversation.
func (r *runner) sendDelegated(ctx context.Context, l *loginState, text string) *turn {
	t := r.sendTurn(ctx, text, l.contextID, map[string]string{delegationHeader: "Bearer " + l.tok.AccessToken.Reveal()})
	if t.problem == "" {
		l.delegated = append(l.delegated, t)
		if l.contextID == "" {
			l.contextID = t.contextOf()
		}
	}
	return t
}

func checkDelegatedSend(ctx context.Context, r *runner) outcome {
	l, o := r.needToken(ctx)
	if o != nil {
		return *o
	}
	t := r.sendDelegated(ctx, l, "a message under a delegation token; no action is needed")
	sent := t.sent + ", with the delegation token"
	if t.problem != "" {
		return fail(sent, t.ex.describe(), "%s", t.problem)
	}
	return pass(sent, t.ex.describe())
}

func checkForgedDelegation(ctx context.Context, r *runner) outcome {
	_, md, o := r.needDelegation(ctx)
	if o != nil {
		return *o
	}
	f := &forge{s: r.opts.Signer, aud: r.reg.Audience, sub: r.sub, now: r.now()}
	n := r.now().Unix()
	forged, err := f.signed(map[string]any{"iss": md.Issuer, "aud": r.iface(), "sub": "pact-provider-check", "client_id": r.opts.Config.Issuer,
		"scope": strings.Join(r.card.Delegation.ScopeIDs(), " "), "grant_id": "pact-provider-check-forged", "iat": n, "exp": n + 300})
	if err != nil {
		return skip("the token could not be made: %v", err)
	}
	e := r.sendGood(ctx, message("a message with a delegation token the Provider did not sign; it must be refused", "", randomID("pact-check-m-"), nil),
		map[string]string{delegationHeader: "Bearer " + forged})
	return judge("POST message:send, X-A2A-User-Delegation signed by the personal agent's key", e, wantInvalidToken(e))
}

// wantInvalidToken lists how an answer differs from §5.5's refusal of a
// bad delegation token.
func wantInvalidToken(e exchange) []string {
	if e.err != nil {
		return []string{"no answer: " + e.err.Error()}
	}
	var p []string
	if e.status != 401 {
		p = append(p, fmt.Sprintf("status %d, want 401", e.status))
	}
	ch := e.header.Get("WWW-Authenticate")
	if !strings.Contains(ch, `realm="a2a"`) || !strings.Contains(ch, `error="invalid_token"`) {
		p = append(p, `WWW-Authenticate is not Bearer realm="a2a", error="invalid_token"`)
	}
	if e.status == 401 && e.hasA2ABody() {
		p = append(p, "the 401 has an A2A body")
	}
	return p
}

func checkOtherBrand(ctx context.Context, r *runner) outcome {
	if r.opts.OtherCardURL == "" {
		return skip("name another Brand of this Provider with --other-brand BRAND to check that this Brand's token is refused there")
	}
	l, o := r.needToken(ctx)
	if o != nil {
		return *o
	}
	other, err := discovery.Fetch(ctx, r.hc, r.opts.OtherCardURL)
	if err != nil {
		return skip("the other Brand's card could not be used: %v", err)
	}
	if other.InterfaceURL == r.iface() {
		return skip("--other-brand names this Brand's interface")
	}
	u := other.InterfaceURL + "/message:send"
	if err := r.bound.Check("other Brand's interface", u); err != nil {
		return skip("the other Brand is not under this Provider's registration, so no PA JWT for it is sent there: %v", err)
	}
	tok, err := r.token(ctx, u)
	if err != nil {
		return skip("%v", err)
	}
	h := a2aHeaders(tok)
	h["Content-Type"] = "application/json"
	h[delegationHeader] = "Bearer " + l.tok.AccessToken.Reveal()
	e := r.do(ctx, request{method: "POST", url: u, header: h, body: message("a message to another Brand with this Brand's delegation token; it must be refused", "", randomID("pact-check-m-"), nil)})
	return judge("POST "+u+" with "+r.card.Name()+"'s delegation token", e, wantInvalidToken(e))
}

func checkStepUp(ctx context.Context, r *runner) outcome {
	if r.opts.StepUpText == "" {
		return skip("give --step-up TEXT: a message that needs a scope you did not name with --scope (the Provider must answer it with a step-up task)")
	}
	l, o := r.needToken(ctx)
	if o != nil {
		return *o
	}
	t := r.sendDelegated(ctx, l, r.opts.StepUpText)
	sent := t.sent + fmt.Sprintf(", %q with the delegation token", checkText+r.opts.StepUpText)
	if t.problem != "" {
		return fail(sent, t.ex.describe(), "%s: a turn needing a missing scope MUST NOT fail; it is a task in TASK_STATE_AUTH_REQUIRED", t.problem)
	}
	task := t.rep.Task
	if task == nil {
		return fail(sent, t.ex.describe(), "the reply is a message, not a step-up task: either the text needs no missing scope, or the Provider does not step up")
	}
	var p []string
	if task.Status.State != a2a.TaskStateAuthRequired {
		p = append(p, fmt.Sprintf("state %s, want TASK_STATE_AUTH_REQUIRED", task.Status.State))
	}
	var missing []string
	if v, ok := task.Metadata["pact.missingScopes"].([]any); ok {
		for _, x := range v {
			if s, ok := x.(string); ok {
				missing = append(missing, s)
			}
		}
	}
	if len(missing) == 0 {
		p = append(p, "metadata pact.missingScopes is missing or empty")
	}
	for _, s := range missing {
		if _, ok := r.card.Delegation.Scopes[s]; !ok {
			p = append(p, fmt.Sprintf("missing scope %q is not on the card", s))
		}
		if slices.Contains(l.tok.Scope, s) {
			p = append(p, fmt.Sprintf("missing scope %q was granted", s))
		}
	}
	if link, _ := task.Metadata["pact.verificationUriComplete"].(string); link == "" {
		p = append(p, "metadata pact.verificationUriComplete is missing")
	}
	if t.contextID != "" && task.ContextID != t.contextID {
		p = append(p, "the task is in another context")
	}
	got := t.ex.describe() + ", missing " + strings.Join(missing, " ")
	if len(p) > 0 {
		return fail(sent, got, "%s", strings.Join(p, "; "))
	}
	after := r.sendDelegated(ctx, l, "a message after the step-up; the conversation stays open")
	if after.problem != "" {
		return fail(sent+"; then one more message", after.ex.describe(), "after the step-up the conversation must stay open: %s", after.problem)
	}
	return pass(sent+"; then one more message", got+"; then "+after.ex.describe())
}

func checkReceipts(ctx context.Context, r *runner) outcome {
	l, o := r.needToken(ctx)
	if o != nil {
		return *o
	}
	if l.claims == nil {
		return skip("the delegation token did not verify (see delegation.token-claims), so receipts cannot be matched to its grant")
	}
	if len(l.delegated) == 0 {
		return skip("no reply was served under the token")
	}
	exp := receipts.Expect{PA: r.opts.Config.Issuer, Brand: r.iface(), GrantID: l.claims.GrantID, User: l.claims.Subject,
		Scopes: l.claims.Scopes, JWKSURI: l.md.JWKSURI}
	var p []string
	for _, t := range l.delegated {
		var md map[string]any
		if t.rep.Message != nil {
			md = t.rep.Message.Metadata
		} else {
			md = t.rep.Task.Metadata
		}
		rc, ok, err := receipts.FromMetadata(md)
		switch {
		case !ok:
			p = append(p, "reply to "+t.messageID+" has no pact.receipt")
			continue
		case err != nil:
			p = append(p, "reply to "+t.messageID+": "+err.Error())
			continue
		}
		res, _ := receipts.Verify(ctx, l.keys, rc, exp)
		if !res.Verified() {
			p = append(p, "reply to "+t.messageID+": "+strings.Join(res.Problems, "; "))
			continue
		}
		if ts, err := time.Parse(time.RFC3339, res.Claims.TS); err == nil && r.now().Sub(ts) > 10*time.Minute {
			p = append(p, "reply to "+t.messageID+": ts "+res.Claims.TS+" is not the time of this turn")
		}
	}
	sent := fmt.Sprintf("GET %s; %d delegated replies", l.md.JWKSURI, len(l.delegated))
	if len(p) > 0 {
		return fail(sent, "", "%s", strings.Join(p, "; "))
	}
	return pass(sent, fmt.Sprintf("%d receipts, each verified", len(l.delegated)))
}
