package providercheck

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/pact-cli/pact/delegation"
	"github.com/pact-cli/pact/deviceflow"
	"github.com/pact-cli/pact/discovery"
	"github.com/pact-cli/pact/jwks"
)

// maxExpiryWait is the longest a run waits for a device code to expire
// (delegation.expiry).
const maxExpiryWait = 60 * time.Second

// delegationHeader carries the delegation token (§5.5).
const delegationHeader = "X-A2A-User-Delegation"

// loginState is what the §5 checks share: the metadata, the probe device
// authorization (never shown to the User), the real login and its token.
type loginState struct {
	md    *deviceflow.Metadata
	mdErr error
	keys  *jwks.Cache

	probe      map[string]any // the probe's device authorization response
	probeCode  string
	probeErr   string
	probeSlow  bool // slow_down was answered
	loginTried bool
	loginErr   error
	tok        *deviceflow.Token
	claims     *delegation.Claims
	claimsErr  error
	delegated  []*turn // replies served under the token
	contextID  string  // the delegated conversation
}

func (r *runner) deleg() *loginState {
	if r.login == nil {
		r.login = &loginState{keys: jwks.NewCache(r.hc)}
	}
	return r.login
}

// needDelegation skips when the card offers no delegation; it fetches the
// RFC 8414 metadata once (§5.1).
func (r *runner) needDelegation(ctx context.Context) (*discovery.Delegation, *deviceflow.Metadata, *outcome) {
	d := r.card.Delegation
	if d == nil {
		o := skip("the card offers no delegation (§5 is optional; the Identity profile is §2–§4 and §6)")
		return nil, nil, &o
	}
	l := r.deleg()
	if l.md == nil && l.mdErr == nil {
		for _, ep := range [][2]string{{"device authorization endpoint", d.DeviceAuthorizationURL}, {"token endpoint", d.TokenURL}, {"authorization server metadata", d.OAuth2MetadataURL}} {
			if err := r.bound.Check(ep[0], ep[1]); err != nil {
				l.mdErr = err
				break
			}
		}
		if l.mdErr == nil {
			l.md, l.mdErr = deviceflow.FetchMetadata(ctx, r.hc, d.OAuth2MetadataURL)
		}
		if l.mdErr == nil {
			if err := r.bound.Check("jwks_uri of the metadata", l.md.JWKSURI); err != nil {
				l.md, l.mdErr = nil, err
			}
		}
	}
	if l.mdErr != nil {
		o := skip("the card's delegation cannot be used: %v", l.mdErr)
		return d, nil, &o
	}
	return d, l.md, nil
}

// needUser is needDelegation plus scopes that the card offers.
func (r *runner) needScopes(ctx context.Context) (*discovery.Delegation, *deviceflow.Metadata, *outcome) {
	d, md, o := r.needDelegation(ctx)
	if o != nil {
		return d, md, o
	}
	for _, s := range r.opts.Scopes {
		if _, ok := d.Scopes[s]; !ok {
			o := skip("--scope %s is not on the card (it offers %s)", s, strings.Join(d.ScopeIDs(), ", "))
			return d, md, &o
		}
	}
	return d, md, nil
}

// postForm POSTs an OAuth form to endpoint with a good PA JWT (or none).
func (r *runner) postForm(ctx context.Context, endpoint string, form url.Values, withToken bool) exchange {
	h := map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"}
	if withToken {
		tok, err := r.token(ctx, endpoint)
		if err != nil {
			return exchange{method: "POST", url: endpoint, err: err}
		}
		h["Authorization"] = "Bearer " + tok
	}
	return r.do(ctx, request{method: "POST", url: endpoint, header: h, body: []byte(form.Encode())})
}

// oauthError is the error member of an OAuth answer ("" when none).
func oauthError(e exchange) string {
	var b struct {
		Error string `json:"error"`
	}
	_ = json.Unmarshal(e.body, &b)
	return b.Error
}

// describeOAuth describes an OAuth answer without its secrets.
func describeOAuth(e exchange) string {
	if e.err != nil {
		return "no answer: " + e.err.Error()
	}
	if code := oauthError(e); code != "" {
		return fmt.Sprintf("%d error=%s", e.status, code)
	}
	if e.status == 401 {
		return e.describe()
	}
	return fmt.Sprintf("%d, %d bytes", e.status, len(e.body))
}

func delegationChecks() []Check {
	return []Check{
		{ID: "delegation.card", Group: GroupDelegation, Clause: "§5.1",
			Title:  "a card offering delegation has an oauth2SecurityScheme with a deviceCode flow, a second securityRequirements entry naming both schemes, and RFC 8414 metadata with a jwks_uri",
			Sends:  "GET {oauth2MetadataUrl}",
			Expect: "the scheme and entry on the card; 200 metadata with issuer, token_endpoint, jwks_uri",
			run:    checkDelegationCard},
		{ID: "delegation.device-no-token", Group: GroupDelegation, Clause: "§5.3, §3.4",
			Title:  "the device authorization endpoint refuses a request without a PA JWT",
			Sends:  "POST {deviceAuthorizationUrl} client_id, scope; no Authorization",
			Expect: `401, WWW-Authenticate: Bearer realm="a2a"`,
			run:    checkDeviceNoToken},
		{ID: "delegation.invalid-scope", Group: GroupDelegation, Clause: "§5.3",
			Title:  "an unknown scope id gets OAuth invalid_scope",
			Sends:  "POST {deviceAuthorizationUrl} scope=pact-provider-check-no-such-scope, a good PA JWT",
			Expect: "400 error=invalid_scope",
			run:    checkInvalidScope},
		{ID: "delegation.unknown-device-code", Group: GroupDelegation, Clause: "§5.3, RFC 6749 §5.2",
			Title:  "the token endpoint refuses a device_code it never issued",
			Sends:  "POST {tokenUrl} grant_type=device_code, a made-up device_code, a good PA JWT",
			Expect: "400 error=invalid_grant",
			run:    checkUnknownDeviceCode},
		{ID: "delegation.device-authorization", Group: GroupDelegation, Clause: "§5.3, RFC 8628 §3.2", NeedsUser: true,
			Title:  "a device authorization for the --scope ids answers device_code, user_code, verification_uri(_complete), expires_in",
			Sends:  "POST {deviceAuthorizationUrl} client_id={issuer}, scope={--scope}, a good PA JWT (a probe nobody approves)",
			Expect: "200 with the RFC 8628 §3.2 members",
			run:    checkDeviceAuthorization},
		{ID: "delegation.pending", Group: GroupDelegation, Clause: "§5.3, RFC 8628 §3.5", NeedsUser: true,
			Title:  "polling before approval answers authorization_pending",
			Sends:  "POST {tokenUrl} with the probe's device_code, a good PA JWT",
			Expect: "400 error=authorization_pending (or slow_down)",
			run:    checkPending},
		{ID: "delegation.slow-down", Group: GroupDelegation, Clause: "RFC 8628 §3.5", NeedsUser: true,
			Title:  "polling faster than the interval answers slow_down",
			Sends:  "POST {tokenUrl} again at once with the probe's device_code",
			Expect: "400 error=slow_down (authorization_pending: skipped, RFC 8628 lets a server not ask)",
			run:    checkSlowDown},
		{ID: "delegation.login", Group: GroupDelegation, Clause: "§5.3", NeedsUser: true,
			Title:  "the User logs in with the Brand and approves; the token endpoint then answers a Bearer token with the scope approved",
			Sends:  "POST {deviceAuthorizationUrl}, the link shown to you, POST {tokenUrl} every interval until you answer",
			Expect: "200 token_type Bearer, access_token, scope",
			run:    checkLogin},
		{ID: "delegation.token-claims", Group: GroupDelegation, Clause: "§5.4", NeedsUser: true,
			Title:  "the delegation token is signed by a key at the metadata's jwks_uri; iss, aud (the interface URL, one string), client_id (this issuer), sub, scope, grant_id, exp",
			Sends:  "GET {jwks_uri}",
			Expect: "a verified ES256/RS256 token with those claims, scope as the token response says",
			run:    checkTokenClaims},
		{ID: "delegation.send", Group: GroupDelegation, Clause: "§5.5", NeedsUser: true,
			Title:  "message:send with both tokens is served",
			Sends:  "POST {interface}/message:send, a good PA JWT and X-A2A-User-Delegation: Bearer {token}",
			Expect: "200 { message } or { task }",
			run:    checkDelegatedSend},
		{ID: "delegation.bad-token", Group: GroupDelegation, Clause: "§5.5",
			Title:  `a delegation token the Provider did not sign gets 401 with error="invalid_token" and no A2A body`,
			Sends:  "POST {interface}/message:send, a good PA JWT and X-A2A-User-Delegation: a token signed by the personal agent's key",
			Expect: `401, WWW-Authenticate: Bearer realm="a2a", error="invalid_token", no A2A body`,
			run:    checkForgedDelegation},
		{ID: "delegation.other-brand", Group: GroupDelegation, Clause: "§5.4, §5.5", NeedsUser: true,
			Title:  "the token is refused on another Brand (aud is one Brand's interface URL)",
			Sends:  "POST {the --other-brand's interface}/message:send with this Brand's delegation token",
			Expect: `401, error="invalid_token"`,
			run:    checkOtherBrand},
		{ID: "delegation.step-up", Group: GroupDelegation, Clause: "§5.5", NeedsUser: true,
			Title:  "a turn needing a scope the token lacks is a TASK_STATE_AUTH_REQUIRED task with pact.missingScopes and a new link, and the conversation stays open",
			Sends:  "POST {interface}/message:send \"pact provider check: {--step-up TEXT}\" with both tokens, then one more message in the context",
			Expect: "200 { task } TASK_STATE_AUTH_REQUIRED, missing ids on the card and not granted; then 200",
			run:    checkStepUp},
		{ID: "delegation.receipts", Group: GroupDelegation, Clause: "§5.6", NeedsUser: true,
			Title:  "every reply served under the token carries pact.receipt, signed by a key at the jwks_uri, claims matching the turn",
			Sends:  "(nothing more: the delegated replies before)",
			Expect: "a verified receipt on each: grantId, user, pa, brand, scopesUsed within the grant, ts",
			run:    checkReceipts},
		{ID: "delegation.expiry", Group: GroupDelegation, Clause: "§5.3, RFC 8628 §3.5", NeedsUser: true,
			Title:  "a device_code past expires_in answers expired_token",
			Sends:  "POST {tokenUrl} with the probe's device_code after expires_in (only when it is at most 60 s)",
			Expect: "400 error=expired_token",
			run:    checkExpiry},
	}
}

func checkDelegationCard(ctx context.Context, r *runner) outcome {
	if r.card.Delegation == nil {
		for _, p := range r.card.Problems {
			if strings.Contains(p, "deleg") || strings.Contains(p, "oauth") {
				return fail("", "", "the card's delegation scheme is malformed: %s", p)
			}
		}
	}
	d, md, o := r.needDelegation(ctx)
	if o != nil {
		if d != nil {
			return fail("GET "+d.OAuth2MetadataURL, "", "%s", o.cause)
		}
		return *o
	}
	var c cardJSON
	_ = json.Unmarshal(r.card.Raw, &c)
	both := false
	for _, e := range c.SecurityRequirements {
		s := requirementSchemes(e)
		if len(s) == 2 && slices.Contains(s, r.card.PAScheme) && slices.Contains(s, d.Scheme) {
			both = true
		}
	}
	sent := "GET " + d.OAuth2MetadataURL
	got := fmt.Sprintf("issuer %s, jwks_uri %s, %d scopes", md.Issuer, md.JWKSURI, len(d.Scopes))
	if !both {
		return fail(sent, got, "no securityRequirements entry names exactly the personal-agent JWT scheme and %q", d.Scheme)
	}
	if len(d.Scopes) == 0 {
		return fail(sent, got, "the deviceCode flow lists no scopes")
	}
	return pass(sent, got)
}

func checkDeviceNoToken(ctx context.Context, r *runner) outcome {
	d, _, o := r.needDelegation(ctx)
	if o != nil {
		return *o
	}
	form := url.Values{"client_id": {r.opts.Config.Issuer}, "scope": {d.ScopeIDs()[0]}}
	e := r.postForm(ctx, d.DeviceAuthorizationURL, form, false)
	p := want401(e)
	// An OAuth error body is allowed here (RFC 6749 §5.2 invalid_client).
	for i := len(p) - 1; i >= 0; i-- {
		if strings.Contains(p[i], "A2A body") {
			p = append(p[:i], p[i+1:]...)
		}
	}
	return judge("POST "+d.DeviceAuthorizationURL+" without Authorization", e, p)
}

func checkInvalidScope(ctx context.Context, r *runner) outcome {
	d, _, o := r.needDelegation(ctx)
	if o != nil {
		return *o
	}
	form := url.Values{"client_id": {r.opts.Config.Issuer}, "scope": {"pact-provider-check-no-such-scope"}}
	e := r.postForm(ctx, d.DeviceAuthorizationURL, form, true)
	sent := "POST " + d.DeviceAuthorizationURL + " scope=pact-provider-check-no-such-scope"
	if code := oauthError(e); code != "invalid_scope" || e.status != 400 {
		return fail(sent, describeOAuth(e), "want 400 error=invalid_scope")
	}
	return pass(sent, describeOAuth(e))
}

func checkUnknownDeviceCode(ctx context.Context, r *runner) outcome {
	d, _, o := r.needDelegation(ctx)
	if o != nil {
		return *o
	}
	form := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:device_code"}, "device_code": {randomID("pact-check-dc-")}, "client_id": {r.opts.Config.Issuer}}
	e := r.postForm(ctx, d.TokenURL, form, true)
	sent := "POST " + d.TokenURL + " with a made-up device_code"
	if code := oauthError(e); code != "invalid_grant" || e.status != 400 {
		return fail(sent, describeOAuth(e), "want 400 error=invalid_grant: a device_code the Provider never issued must not be pending or succeed")
	}
	return pass(sent, describeOAuth(e))
}

// probe starts the device authorization that nobody approves.
func (r *runner) probe(ctx context.Context, d *discovery.Delegation) *loginState {
	l := r.deleg()
	if l.probe != nil || l.probeErr != "" {
		return l
	}
	form := url.Values{"client_id": {r.opts.Config.Issuer}, "scope": {strings.Join(r.opts.Scopes, " ")}}
	e := r.postForm(ctx, d.DeviceAuthorizationURL, form, true)
	if e.err != nil || e.status != 200 {
		l.probeErr = describeOAuth(e)
		return l
	}
	if err := json.Unmarshal(e.body, &l.probe); err != nil {
		l.probeErr = "200 but not a JSON object"
		return l
	}
	l.probeCode, _ = l.probe["device_code"].(string)
	return l
}

func checkDeviceAuthorization(ctx context.Context, r *runner) outcome {
	d, _, o := r.needScopes(ctx)
	if o != nil {
		return *o
	}
	l := r.probe(ctx, d)
	sent := "POST " + d.DeviceAuthorizationURL + " scope=" + strings.Join(r.opts.Scopes, " ")
	if l.probeErr != "" {
		return fail(sent, l.probeErr, "want 200 with a device authorization")
	}
	var missing []string
	for _, k := range []string{"device_code", "user_code", "verification_uri", "verification_uri_complete"} {
		if s, _ := l.probe[k].(string); s == "" {
			missing = append(missing, k)
		}
	}
	if n, _ := l.probe["expires_in"].(float64); n <= 0 {
		missing = append(missing, "expires_in")
	}
	got := fmt.Sprintf("200, expires_in %v, interval %v", l.probe["expires_in"], l.probe["interval"])
	if len(missing) > 0 {
		return fail(sent, got, "missing or empty: %s", strings.Join(missing, ", "))
	}
	return pass(sent, got)
}

// pollProbe polls the token endpoint once with the probe's device_code.
func (r *runner) pollProbe(ctx context.Context, d *discovery.Delegation, l *loginState) exchange {
	form := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:device_code"}, "device_code": {l.probeCode}, "client_id": {r.opts.Config.Issuer}}
	return r.postForm(ctx, d.TokenURL, form, true)
}

func checkPending(ctx context.Context, r *runner) outcome {
	d, _, o := r.needScopes(ctx)
	if o != nil {
		return *o
	}
	l := r.probe(ctx, d)
	if l.probeCode == "" {
		return skip("no device authorization to poll (see delegation.device-authorization)")
	}
	e := r.pollProbe(ctx, d, l)
	sent := "POST " + d.TokenURL + " before approval"
	switch code := oauthError(e); code {
	case "authorization_pending":
		return pass(sent, describeOAuth(e))
	case "slow_down":
		l.probeSlow = true
		return pass(sent, describeOAuth(e))
	}
	if e.status == 200 {
		return fail(sent, describeOAuth(e), "the token endpoint answered without an error before anyone approved")
	}
	return fail(sent, describeOAuth(e), "want error=authorization_pending")
}

func checkSlowDown(ctx context.Context, r *runner) outcome {
	d, _, o := r.needScopes(ctx)
	if o != nil {
		return *o
	}
	l := r.probe(ctx, d)
	if l.probeCode == "" {
		return skip("no device authorization to poll (see delegation.device-authorization)")
	}
	e := r.pollProbe(ctx, d, l)
	sent := "POST " + d.TokenURL + " again at once"
	switch code := oauthError(e); code {
	case "slow_down":
		l.probeSlow = true
		return pass(sent, describeOAuth(e))
	case "authorization_pending":
		return skip("polling faster than the interval got authorization_pending: the Provider does not ask for slower polling (RFC 8628 §3.5 lets it)")
	}
	return fail(sent, describeOAuth(e), "want error=slow_down (or authorization_pending)")
}

func checkExpiry(ctx context.Context, r *runner) outcome {
	d, _, o := r.needScopes(ctx)
	if o != nil {
		return *o
	}
	l := r.probe(ctx, d)
	if l.probeCode == "" {
		return skip("no device authorization to poll (see delegation.device-authorization)")
	}
	n, _ := l.probe["expires_in"].(float64)
	wait := time.Duration(n)*time.Second + time.Second
	if wait > maxExpiryWait {
		return skip("expires_in is %v s: waiting it out would take longer than this check's %s", n, maxExpiryWait)
	}
	t := time.NewTimer(wait)
	select {
	case <-t.C:
	case <-ctx.Done():
		t.Stop()
		return skip("interrupted")
	}
	e := r.pollProbe(ctx, d, l)
	sent := fmt.Sprintf("POST %s %s after the device authorization", d.TokenURL, wait)
	if code := oauthError(e); code != "expired_token" {
		return fail(sent, describeOAuth(e), "want error=expired_token once expires_in has passed")
	}
	return pass(sent, describeOAuth(e))
}

// doLogin runs the User's login once: device authorization, the link shown
// (ShowLogin), polling per RFC 8628 until the User answers.
func (r *runner) doLogin(ctx context.Context, d *discovery.Delegation) *loginState {
	l := r.deleg()
	if l.loginTried {
		return l
	}
	l.loginTried = true
	flow := &deviceflow.Client{HTTP: r.hc, ClientID: r.opts.Config.Issuer, PAToken: r.bound.Token}
	auth, err := flow.Authorize(ctx, d.DeviceAuthorizationURL, r.opts.Scopes, d.Scopes)
	if err != nil {
		l.loginErr = err
		return l
	}
	if r.opts.ShowLogin != nil {
		r.opts.ShowLogin(r.card, r.opts.Scopes, auth)
	}
	l.tok, l.loginErr = flow.Poll(ctx, d.TokenURL, auth)
	if r.opts.LoginDone != nil {
		r.opts.LoginDone()
	}
	return l
}

func checkLogin(ctx context.Context, r *runner) outcome {
	d, _, o := r.needScopes(ctx)
	if o != nil {
		return *o
	}
	l := r.doLogin(ctx, d)
	sent := "the device flow at " + d.DeviceAuthorizationURL + " and " + d.TokenURL
	if l.loginErr != nil {
		if deviceflow.IsConsentError(l.loginErr) {
			return skip("the login did not complete: %v", l.loginErr)
		}
		return fail(sent, l.loginErr.Error(), "the login failed")
	}
	got := fmt.Sprintf("token_type %s, scope %q, expires_in %d", l.tok.TokenType, strings.Join(l.tok.Scope, " "), l.tok.ExpiresIn)
	if !strings.EqualFold(l.tok.TokenType, "Bearer") {
		return fail(sent, got, "token_type is not Bearer")
	}
	if l.tok.ScopeOmitted {
		return fail(sent, got, "the token response has no scope: §5.3 has the Provider say what the User approved")
	}
	for _, s := range l.tok.Scope {
		if !slices.Contains(r.opts.Scopes, s) {
			return fail(sent, got, "scope %q was granted but not requested", s)
		}
	}
	return pass(sent, got)
}
