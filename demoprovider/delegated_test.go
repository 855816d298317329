package demoprovider

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// deviceAuthz starts §5.3 for scope as sub and returns the JSON answer.
func (e *env) deviceAuthz(b Brand, sub, scope string) map[string]any {
	e.t.Helper()
	r := postForm(e.t, b.InterfaceURL+"/oauth/device_authorization", e.jwt(sub), url.Values{"client_id": {e.pa.issuer}, "scope": {scope}})
	if r.status != 200 {
		e.t.Fatalf("device authorization: %d %s", r.status, r.body)
	}
	return r.json(e.t)
}

// poll sends one device_code token request.
func (e *env) poll(b Brand, sub, deviceCode string) resp {
	e.t.Helper()
	return postForm(e.t, b.InterfaceURL+"/oauth/token", e.jwt(sub), url.Values{
		"grant_type": {deviceCodeGrant}, "device_code": {deviceCode}, "client_id": {e.pa.issuer},
	})
}

func oauthErr(t *testing.T, r resp) string {
	t.Helper()
	if r.status == 200 {
		t.Fatalf("want an OAuth error, got 200 %s", r.body)
	}
	e, _ := r.json(t)["error"].(string)
	return e
}

// login runs the whole device flow with user and returns the token response.
func (e *env) login(b Brand, sub, scope string, user ScriptedUser) map[string]any {
	e.t.Helper()
	da := e.deviceAuthz(b, sub, scope)
	if err := user.Visit(context.Background(), da["verification_uri_complete"].(string)); err != nil {
		e.t.Fatal(err)
	}
	r := e.poll(b, sub, da["device_code"].(string))
	if r.status != 200 {
		e.t.Fatalf("token: %d %s", r.status, r.body)
	}
	return r.json(e.t)
}

var jane = ScriptedUser{Username: "jane", Password: "jane-demo-pass"}

// asKeys fetches the RFC 8414 metadata and the jwks_uri it names.
func asKeys(t *testing.T, b Brand) (map[string]any, jose.JSONWebKeySet) {
	t.Helper()
	md := do(t, http.MethodGet, b.InterfaceURL+"/oauth/.well-known/oauth-authorization-server", nil).json(t)
	r := do(t, http.MethodGet, md["jwks_uri"].(string), nil)
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(r.body, &set); err != nil || len(set.Keys) != 1 {
		t.Fatalf("jwks: %v %s", err, r.body)
	}
	if !set.Keys[0].IsPublic() {
		t.Fatal("jwks publishes a private key")
	}
	return md, set
}

// verifyJWS verifies compact with the published key; returns payload.
func verifyJWS(t *testing.T, set jose.JSONWebKeySet, compact string) []byte {
	t.Helper()
	sig, err := jose.ParseSignedCompact(compact, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		t.Fatal(err)
	}
	keys := set.Key(sig.Signatures[0].Header.KeyID)
	if len(keys) != 1 {
		t.Fatalf("kid %q not in the JWKS", sig.Signatures[0].Header.KeyID)
	}
	p, err := sig.Verify(keys[0])
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSection5_1_AuthorizationServerMetadata(t *testing.T) {
	e := start(t, nil)
	b := e.example()
	md, _ := asKeys(t, b)
	if md["issuer"] != b.InterfaceURL+"/oauth" || md["device_authorization_endpoint"] != b.InterfaceURL+"/oauth/device_authorization" ||
		md["token_endpoint"] != b.InterfaceURL+"/oauth/token" {
		t.Errorf("metadata %v", md)
	}
	gts := md["grant_types_supported"].([]any)
	if !slices.Contains(gts, any(deviceCodeGrant)) || !slices.Contains(gts, any("refresh_token")) {
		t.Errorf("grant_types_supported %v", gts)
	}
	if len(md["scopes_supported"].([]any)) != 3 {
		t.Errorf("scopes_supported %v", md["scopes_supported"])
	}
}

func TestSection5_3_DeviceAuthorization(t *testing.T) {
	e := start(t, func(c *Config, _ *testPA) { c.DeviceCodeTTL = 90 * time.Second })
	b := e.example()
	u := b.InterfaceURL + "/oauth/device_authorization"
	want401(t, postForm(t, u, "", url.Values{"client_id": {e.pa.issuer}, "scope": {"orders:read"}}), challenge)
	if r := postForm(t, u, e.jwt("u1"), url.Values{"client_id": {"https://other.example"}, "scope": {"orders:read"}}); r.status != 401 || oauthErr(t, r) != "invalid_client" {
		t.Errorf("client_id mismatch: %d %s", r.status, r.body)
	}
	for _, sc := range []string{"orders:read nope", "", "booking:change"} {
		if r := postForm(t, u, e.jwt("u1"), url.Values{"client_id": {e.pa.issuer}, "scope": {sc}}); oauthErr(t, r) != "invalid_scope" {
			t.Errorf("scope %q: %s", sc, r.body)
		}
	}
	// Other Shop has no orders:cancel.
	if r := postForm(t, e.other().InterfaceURL+"/oauth/device_authorization", e.jwt("u1"), url.Values{"client_id": {e.pa.issuer}, "scope": {"orders:cancel"}}); oauthErr(t, r) != "invalid_scope" {
		t.Errorf("other shop orders:cancel: %s", r.body)
	}
	da := e.deviceAuthz(b, "u1", "orders:read orders:cancel")
	if da["expires_in"] != float64(90) || da["interval"] != float64(1) {
		t.Errorf("expires_in/interval: %v", da)
	}
	code := da["user_code"].(string)
	if !strings.Contains(da["verification_uri_complete"].(string), url.QueryEscape(code)) || da["device_code"] == "" || da["verification_uri"] == "" {
		t.Errorf("answer %v", da)
	}
}

func TestSection5_3_TokenErrors(t *testing.T) {
	e := start(t, nil)
	b := e.example()
	da := e.deviceAuthz(b, "u1", "orders:read")
	dc := da["device_code"].(string)

	if got := oauthErr(t, e.poll(b, "u1", dc)); got != "authorization_pending" {
		t.Errorf("first poll: %s", got)
	}
	if got := oauthErr(t, e.poll(b, "u1", dc)); got != "slow_down" {
		t.Errorf("immediate second poll: %s", got)
	}
	e.clk.Add(7 * time.Second) // interval is now 1 + 5 s
	if got := oauthErr(t, e.poll(b, "u1", dc)); got != "authorization_pending" {
		t.Errorf("poll after the slowed interval: %s", got)
	}
	if got := oauthErr(t, e.poll(b, "u1", "dc_unknown")); got != "invalid_grant" {
		t.Errorf("unknown device_code: %s", got)
	}
	if got := oauthErr(t, e.poll(e.other(), "u1", dc)); got != "invalid_grant" {
		t.Errorf("device_code at another Brand: %s", got)
	}
	r := postForm(t, b.InterfaceURL+"/oauth/token", e.jwt("u1"), url.Values{"grant_type": {"password"}})
	if got := oauthErr(t, r); got != "unsupported_grant_type" {
		t.Errorf("password grant: %s", got)
	}
	want401(t, postForm(t, b.InterfaceURL+"/oauth/token", "", url.Values{"grant_type": {deviceCodeGrant}, "device_code": {dc}}), challenge)

	e.clk.Add(601 * time.Second)
	if got := oauthErr(t, e.poll(b, "u1", dc)); got != "expired_token" {
		t.Errorf("after expires_in: %s", got)
	}
	if err := jane.Visit(context.Background(), da["verification_uri_complete"].(string)); err == nil {
		t.Error("scripted user completed an expired code")
	}
}

func TestSection5_3_ScriptedUserApprovesAll(t *testing.T) {
	e := start(t, nil)
	b := e.example()
	// The "browser" is a plain client with its own timeout: pact's hardened
	// httpx client follows no redirect of a request carrying a form (its
	// forms are OAuth secrets), and the consent page posts a password form
	// answered 303 (post/redirect/get), which a browser follows.
	u := jane
	u.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	tr := e.login(b, "u1", "orders:read orders:cancel", u)
	if tr["token_type"] != "Bearer" || tr["scope"] != "orders:read orders:cancel" || tr["refresh_token"] == "" || tr["expires_in"].(float64) > 3600 {
		t.Fatalf("token response %v", tr)
	}
	_, set := asKeys(t, b)
	var c map[string]any
	if err := json.Unmarshal(verifyJWS(t, set, tr["access_token"].(string)), &c); err != nil {
		t.Fatal(err)
	}
	if c["iss"] != b.InterfaceURL+"/oauth" || c["aud"] != b.InterfaceURL || c["sub"] != "jane-4471" ||
		c["client_id"] != e.pa.issuer || c["scope"] != "orders:read orders:cancel" || c["grant_id"] == "" ||
		c["exp"].(float64)-c["iat"].(float64) > 3600 {
		t.Errorf("delegation token claims %v", c)
	}
}

func TestSection5_3_ScriptedUserUnchecksAScope(t *testing.T) {
	e := start(t, nil)
	u := jane
	u.Approve = []string{"orders:read"}
	tr := e.login(e.example(), "u1", "orders:read refunds:issue", u)
	if tr["scope"] != "orders:read" {
		t.Fatalf("scope %v, want only orders:read", tr["scope"])
	}
	u.Approve = []string{"orders:cancel"} // not offered
	da := e.deviceAuthz(e.example(), "u1", "orders:read")
	if err := u.Visit(context.Background(), da["verification_uri_complete"].(string)); err == nil {
		t.Error("approving a scope the page does not offer succeeded")
	}
}

func TestSection5_3_ScriptedUserDenies(t *testing.T) {
	e := start(t, nil)
	b := e.example()
	da := e.deviceAuthz(b, "u1", "orders:read")
	u := jane
	u.Deny = true
	if err := u.Visit(context.Background(), da["verification_uri_complete"].(string)); err != nil {
		t.Fatal(err)
	}
	if got := oauthErr(t, e.poll(b, "u1", da["device_code"].(string))); got != "access_denied" {
		t.Errorf("after deny: %s", got)
	}
}

func TestSection5_3_WrongPasswordIsRefused(t *testing.T) {
	e := start(t, nil)
	da := e.deviceAuthz(e.example(), "u1", "orders:read")
	err := ScriptedUser{Username: "jane", Password: "nope"}.Visit(context.Background(), da["verification_uri_complete"].(string))
	if err == nil || !strings.Contains(err.Error(), "login refused") {
		t.Fatalf("err = %v", err)
	}
	if got := oauthErr(t, e.poll(e.example(), "u1", da["device_code"].(string))); got != "authorization_pending" {
		t.Errorf("after failed login: %s", got)
	}
}

func TestSection5_3_LiveSessionSkipsLoginAndGrantAccumulates(t *testing.T) {
	e := start(t, nil)
	b := e.example()
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Timeout: 10 * time.Second, Jar: jar}
	first := e.login(b, "u1", "orders:read", ScriptedUser{Username: "jane", Password: "jane-demo-pass", HTTPClient: browser})
	// Same browser, wrong password: only works if login is skipped.
	second := e.login(b, "u1", "refunds:issue", ScriptedUser{Username: "jane", Password: "wrong", HTTPClient: browser})
	if second["scope"] != "orders:read refunds:issue" {
		t.Errorf("second token scope %v, want the grant's union", second["scope"])
	}
	_, set := asKeys(t, b)
	var c1, c2 map[string]any
	mustUnmarshal(t, verifyJWS(t, set, first["access_token"].(string)), &c1)
	mustUnmarshal(t, verifyJWS(t, set, second["access_token"].(string)), &c2)
	if c1["grant_id"] != c2["grant_id"] {
		t.Errorf("grant ids differ: %v %v", c1["grant_id"], c2["grant_id"])
	}
	// Refresh yields the union too; a bad refresh token is invalid_grant.
	r := postForm(t, b.InterfaceURL+"/oauth/token", e.jwt("u1"), url.Values{"grant_type": {"refresh_token"}, "refresh_token": {first["refresh_token"].(string)}})
	if r.status != 200 || r.json(t)["scope"] != "orders:read refunds:issue" {
		t.Errorf("refresh: %d %s", r.status, r.body)
	}
	r = postForm(t, b.InterfaceURL+"/oauth/token", e.jwt("u1"), url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"rt_nope"}})
	if oauthErr(t, r) != "invalid_grant" {
		t.Errorf("bad refresh: %s", r.body)
	}
}

// TestSection5_3_UncheckingTakesAScopeBack: a consent that asks again for a
// scope of the grant, with the User unchecking it, takes it out of the
// grant; the token carries what the User approved this time (§5.3: the
// personal agent MUST read scope).
func TestSection5_3_UncheckingTakesAScopeBack(t *testing.T) {
	e := start(t, nil)
	b := e.example()
	jane := ScriptedUser{Username: "jane", Password: "jane-demo-pass"}
	if got := e.login(b, "u1", "orders:read orders:cancel", jane)["scope"]; got != "orders:read orders:cancel" {
		t.Fatalf("first consent: %v", got)
	}
	jane.Approve = []string{"orders:read"}
	if got := e.login(b, "u1", "orders:read orders:cancel", jane)["scope"]; got != "orders:read" {
		t.Fatalf("after unchecking orders:cancel the token carries %v", got)
	}
}

// delegatedSend sends with both tokens.
func (e *env) delegatedSend(b Brand, sub, tok, messageID, contextID, text string) resp {
	return sendRaw(e.t, b.InterfaceURL, e.jwt(sub), msgBody(messageID, contextID, text), "X-A2A-User-Delegation", "Bearer "+tok)
}

func TestSection5_5_ActsAsUserWithReceipts(t *testing.T) {
	e := start(t, nil)
	b := e.example()
	tr := e.login(b, "u1", "orders:read orders:cancel", jane)
	tok := tr["access_token"].(string)
	_, set := asKeys(t, b)

	// A context started under §3 continues under delegation.
	_, ctxID := replyText(t, e.send(b.InterfaceURL, "u1", "m1", "", "hello"))
	r := e.delegatedSend(b, "u1", tok, "m2", ctxID, "cancel A-10001")
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	var reply struct {
		Message struct {
			Parts    []map[string]string `json:"parts"`
			Metadata map[string]struct {
				JWS    string          `json:"jws"`
				Claims json.RawMessage `json:"claims"`
			} `json:"metadata"`
		} `json:"message"`
	}
	if err := json.Unmarshal(r.body, &reply); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(reply.Message.Parts[0]["text"], "A-10001 is cancelled") {
		t.Errorf("text %q", reply.Message.Parts[0]["text"])
	}
	rc := reply.Message.Metadata["pact.receipt"]
	payload := verifyJWS(t, set, rc.JWS)
	if string(payload) != string(rc.Claims) {
		t.Errorf("jws payload %s != claims %s", payload, rc.Claims)
	}
	var claims struct {
		GrantID, User, PA, Brand, TS string
		ScopesUsed                   []string
		Actions                      []action
	}
	mustUnmarshal(t, rc.Claims, &claims)
	if claims.User != "jane-4471" || claims.PA != e.pa.issuer || claims.Brand != b.InterfaceURL || claims.GrantID == "" ||
		!slices.Equal(claims.ScopesUsed, []string{"orders:cancel"}) || len(claims.Actions) != 1 || claims.Actions[0].Tool != "cancel_order" || claims.Actions[0].ArgsHash == "" {
		t.Errorf("receipt claims %s", rc.Claims)
	}
	if _, err := time.Parse(time.RFC3339, claims.TS); err != nil {
		t.Errorf("ts %q: %v", claims.TS, err)
	}
	// Even a turn that uses no scope carries a receipt.
	r = e.delegatedSend(b, "u1", tok, "m3", ctxID, "hello again")
	if !strings.Contains(string(r.body), `"pact.receipt"`) || !strings.Contains(string(r.body), "Hello Jane") {
		t.Errorf("plain delegated turn: %s", r.body)
	}
}

func TestSection5_5_StepUpTaskKeepsContextOpen(t *testing.T) {
	e := start(t, nil)
	b := e.example()
	tok := e.login(b, "u1", "orders:read", jane)["access_token"].(string)
	r := e.delegatedSend(b, "u1", tok, "m1", "", "refund A-20002")
	var reply struct {
		Task struct {
			ID        string
			ContextID string
			Status    struct {
				State   string
				Message struct{ Parts []map[string]string }
			}
			Metadata map[string]json.RawMessage
		}
	}
	if err := json.Unmarshal(r.body, &reply); err != nil || r.status != 200 {
		t.Fatalf("%d %v %s", r.status, err, r.body)
	}
	task := reply.Task
	if task.Status.State != "TASK_STATE_AUTH_REQUIRED" || task.ContextID == "" || task.ID == "" || task.Status.Message.Parts[0]["text"] == "" {
		t.Fatalf("task %s", r.body)
	}
	var missing []string
	var link string
	mustUnmarshal(t, task.Metadata["pact.missingScopes"], &missing)
	mustUnmarshal(t, task.Metadata["pact.verificationUriComplete"], &link)
	if !slices.Equal(missing, []string{"refunds:issue"}) || link == "" || task.Metadata["pact.receipt"] == nil {
		t.Fatalf("metadata %s", r.body)
	}
	// Step-up: the PA runs §5.3 for the missing scope and re-sends with a new messageId.
	tok2 := e.login(b, "u1", "refunds:issue", jane)["access_token"].(string)
	r = e.delegatedSend(b, "u1", tok2, "m2", task.ContextID, "refund A-20002")
	if r.status != 200 || !strings.Contains(string(r.body), "A-20002 is refunded") {
		t.Fatalf("after step-up: %d %s", r.status, r.body)
	}
	// The task link itself works too: approving it adds the scope to the grant.
	if err := (ScriptedUser{Username: "jane", Password: "jane-demo-pass"}).Visit(context.Background(), link); err != nil {
		t.Fatal(err)
	}
}

func TestSection5_5_BadDelegationTokenIs401InvalidToken(t *testing.T) {
	e := start(t, nil)
	b := e.example()
	tr := e.login(b, "u1", "orders:read", jane)
	tok := tr["access_token"].(string)
	inv := `Bearer realm="a2a", error="invalid_token"`

	want401(t, e.delegatedSend(b, "u1", "garbage", "m1", "", "A-88213"), inv)
	parts := strings.Split(tok, ".")
	want401(t, e.delegatedSend(b, "u1", parts[0]+"."+parts[1]+".AAAA", "m1", "", "A-88213"), inv)
	// aud is Example Co.'s interface: refused at Other Shop.
	want401(t, e.delegatedSend(e.other(), "u1", tok, "m1", "", "B-5501"), inv)
	// Expired token.
	e.clk.Add(time.Hour + time.Minute)
	want401(t, e.delegatedSend(b, "u1", tok, "m1", "", "A-88213"), inv)
	e.clk.Add(-time.Hour - time.Minute)
	// Revoked grant.
	var c map[string]any
	_, set := asKeys(t, b)
	mustUnmarshal(t, verifyJWS(t, set, tok), &c)
	if !e.srv.RevokeGrant(c["grant_id"].(string)) {
		t.Fatal("RevokeGrant: unknown grant")
	}
	want401(t, e.delegatedSend(b, "u1", tok, "m1", "", "A-88213"), inv)
}

func TestSection5_5_ClientIDMustMatchPAIssuer(t *testing.T) {
	pa2 := newTestPA(t)
	e := start(t, func(c *Config, _ *testPA) { c.Registered = append(c.Registered, pa2.registration()) })
	b := e.example()
	tok := e.login(b, "u1", "orders:read", jane)["access_token"].(string)
	r := sendRaw(t, b.InterfaceURL, pa2.token(t, e.srv.Audience(), "u1", e.clk.Now(), nil), msgBody("m1", "", "A-88213"),
		"X-A2A-User-Delegation", "Bearer "+tok)
	want401(t, r, `Bearer realm="a2a", error="invalid_token"`)
}

func TestSection5_5_SubMismatchInContextIsInvalidParams(t *testing.T) {
	e := start(t, nil)
	b := e.example()
	janeTok := e.login(b, "u1", "orders:read", jane)["access_token"].(string)
	omarTok := e.login(b, "u1", "orders:read", ScriptedUser{Username: "omar", Password: "omar-demo-pass"})["access_token"].(string)
	r := e.delegatedSend(b, "u1", janeTok, "m1", "", "my orders")
	text, ctxID := replyText(t, r.json(t))
	if !strings.Contains(text, "A-88213") || strings.Contains(text, "A-30003") {
		t.Errorf("jane's orders: %q", text)
	}
	wantA2AError(t, e.delegatedSend(b, "u1", omarTok, "m2", ctxID, "my orders"), 400, "INVALID_ARGUMENT", "INVALID_PARAMS")
}
