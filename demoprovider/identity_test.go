package demoprovider

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	jose "github.com/go-jose/go-jose/v4"

	"github.com/pact-cli/pact/discovery"
	"github.com/pact-cli/pact/httpx"
)

const challenge = `Bearer realm="a2a"`

func TestSection2_1_CardShape(t *testing.T) {
	e := start(t, nil)
	b := e.example()
	r := do(t, http.MethodGet, b.CardURL, nil)
	if r.status != http.StatusOK {
		t.Fatalf("card status %d", r.status)
	}
	var card struct {
		SupportedInterfaces  []struct{ URL, ProtocolBinding, ProtocolVersion string } `json:"supportedInterfaces"`
		SecuritySchemes      map[string]json.RawMessage                               `json:"securitySchemes"`
		SecurityRequirements []struct {
			Schemes map[string]struct {
				List []string `json:"list"`
			} `json:"schemes"`
		} `json:"securityRequirements"`
		Skills []any `json:"skills"`
	}
	if err := json.Unmarshal(r.body, &card); err != nil {
		t.Fatal(err)
	}
	if len(card.SupportedInterfaces) != 1 || card.SupportedInterfaces[0].URL != e.srv.URL()+"/a2a/01JEXAMPLECO" ||
		card.SupportedInterfaces[0].ProtocolBinding != "HTTP+JSON" || card.SupportedInterfaces[0].ProtocolVersion != "1.0" {
		t.Errorf("supportedInterfaces = %+v", card.SupportedInterfaces)
	}
	if b.InterfaceURL != card.SupportedInterfaces[0].URL {
		t.Errorf("Brand.InterfaceURL %q differs from the card", b.InterfaceURL)
	}
	var pa map[string]map[string]string
	mustUnmarshal(t, card.SecuritySchemes["paJwt"], &pa)
	if pa["httpAuthSecurityScheme"]["scheme"] != "Bearer" || pa["httpAuthSecurityScheme"]["bearerFormat"] != "JWT" {
		t.Errorf("paJwt = %s", card.SecuritySchemes["paJwt"])
	}
	if len(card.SecurityRequirements) != 2 || len(card.SecurityRequirements[0].Schemes) != 1 {
		t.Fatalf("securityRequirements = %+v", card.SecurityRequirements)
	}
	if l, ok := card.SecurityRequirements[0].Schemes["paJwt"]; !ok || l.List == nil {
		t.Errorf("first requirement must be paJwt alone with {\"list\": []}: %s", r.body)
	}
	if len(card.SecurityRequirements[1].Schemes) != 2 {
		t.Errorf("second requirement must name paJwt and userDelegation: %+v", card.SecurityRequirements[1])
	}
	if len(card.Skills) == 0 {
		t.Error("no skills")
	}
}

func TestSection5_1_CardDelegationScheme(t *testing.T) {
	e := start(t, nil)
	for _, b := range e.srv.Brands() {
		r := do(t, http.MethodGet, b.CardURL, nil)
		var card struct {
			SecuritySchemes struct {
				UserDelegation struct {
					OAuth2 struct {
						Flows struct {
							DeviceCode struct {
								DeviceAuthorizationURL string            `json:"deviceAuthorizationUrl"`
								TokenURL               string            `json:"tokenUrl"`
								Scopes                 map[string]string `json:"scopes"`
							} `json:"deviceCode"`
						} `json:"flows"`
						MetadataURL string `json:"oauth2MetadataUrl"`
					} `json:"oauth2SecurityScheme"`
				} `json:"userDelegation"`
			} `json:"securitySchemes"`
		}
		if err := json.Unmarshal(r.body, &card); err != nil {
			t.Fatal(err)
		}
		o := card.SecuritySchemes.UserDelegation.OAuth2
		if o.Flows.DeviceCode.DeviceAuthorizationURL != b.InterfaceURL+"/oauth/device_authorization" ||
			o.Flows.DeviceCode.TokenURL != b.InterfaceURL+"/oauth/token" ||
			o.MetadataURL != b.InterfaceURL+"/oauth/.well-known/oauth-authorization-server" {
			t.Errorf("%s: delegation scheme = %+v", b.Name, o)
		}
		if b.ID == "01JEXAMPLECO" {
			want := map[string]string{
				"orders:read":   "Look up your orders and their status",
				"orders:cancel": "Cancel an order that has not shipped",
				"refunds:issue": "Issue a refund to your original payment method",
			}
			if len(o.Flows.DeviceCode.Scopes) != 3 {
				t.Errorf("scopes = %v", o.Flows.DeviceCode.Scopes)
			}
			for k, v := range want {
				if o.Flows.DeviceCode.Scopes[k] != v {
					t.Errorf("scope %s = %q, want %q", k, o.Flows.DeviceCode.Scopes[k], v)
				}
			}
		} else if len(o.Flows.DeviceCode.Scopes) != 1 || o.Flows.DeviceCode.Scopes["orders:read"] == "" {
			t.Errorf("Other Shop scopes = %v", o.Flows.DeviceCode.Scopes)
		}
	}
}

func TestSection2_1_BrandsAndBrandSiteServesItsSignedCard(t *testing.T) {
	e := start(t, nil)
	bs := e.srv.Brands()
	if len(bs) != 2 || bs[0].Name != "Example Co." || bs[0].ID != "01JEXAMPLECO" || bs[1].Name != "Other Shop" || bs[1].ID != "01JOTHERSHOP" {
		t.Fatalf("Brands() = %+v", bs)
	}
	hc := httpx.NewClient(httpx.Options{Timeout: 5 * time.Second})
	for _, b := range bs {
		if !b.Delegation || b.SiteURL == "" || b.SiteURL == e.srv.URL() {
			t.Errorf("brand %+v", b)
		}
		card, err := discovery.Fetch(context.Background(), hc, b.SiteURL+"/.well-known/agent-card.json")
		if err != nil {
			t.Fatal(err)
		}
		if card.FinalURL != b.SiteURL+"/.well-known/agent-card.json" || card.InterfaceURL != b.InterfaceURL {
			t.Errorf("%s: served from %s, interface %s", b.Name, card.FinalURL, card.InterfaceURL)
		}
		if sig := card.Signature; !sig.Verified || sig.KeyURL != b.SiteURL+"/.well-known/jwks.json" || len(sig.Problems) != 0 {
			t.Errorf("%s: signature %+v, want verified with the site's keys", b.Name, sig)
		}
	}
	// The keys are the same after a restart (pins stay valid).
	e2 := start(t, nil)
	k1, kid1 := brandKey(e.srv.brands[0], false)
	k2, kid2 := brandKey(e2.srv.brands[0], false)
	if !k1.Equal(k2) || kid1 != kid2 {
		t.Error("the Brand key changed across restarts")
	}
	// So is the key of delegation tokens and receipts: receipts archived
	// before a restart still verify against the jwks_uri.
	if a, b := e.srv.as.key, e2.srv.as.key; a.KeyID != b.KeyID || !a.Key.(*ecdsa.PrivateKey).Equal(b.Key) {
		t.Errorf("the receipt signing key changed across restarts: kid %s, then %s", a.KeyID, b.KeyID)
	}
}

func TestA2A_8_4_RogueCardIsSignedByAnotherKeyAfterTheFirst(t *testing.T) {
	e := start(t, func(c *Config, _ *testPA) { c.RogueCard = true })
	b := e.srv.Brands()[0]
	hc := httpx.NewClient(httpx.Options{Timeout: 5 * time.Second})
	first, err := discovery.Fetch(context.Background(), hc, b.SiteURL+"/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	second, err := discovery.Fetch(context.Background(), hc, b.SiteURL+"/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	if !first.Signature.Verified || !second.Signature.Verified || first.Signature.Thumbprint() == second.Signature.Thumbprint() {
		t.Fatalf("first %+v second %+v: want two verified cards signed by different keys", first.Signature, second.Signature)
	}
}

func TestSection2_1_UnknownBrandIs404WithoutBody(t *testing.T) {
	e := start(t, nil)
	r := do(t, http.MethodGet, e.srv.URL()+"/a2a/01JNOSUCHBRAND/.well-known/agent-card.json", nil)
	if r.status != http.StatusNotFound || len(r.body) != 0 {
		t.Fatalf("status %d body %q", r.status, r.body)
	}
}

func TestSection2_2_RoutingBeforeAuthentication(t *testing.T) {
	e := start(t, nil)
	tok := e.jwt("u1")
	cases := []struct {
		name, method, path string
		auth               bool
		want               int
	}{
		{"unknown brand with a valid token", http.MethodPost, "/a2a/01JNOSUCH/message:send", true, 404},
		{"unknown route", http.MethodGet, "/a2a/01JEXAMPLECO/nope", true, 404},
		{"outside /a2a", http.MethodGet, "/", false, 404},
		{"wrong method, no token", http.MethodGet, "/a2a/01JEXAMPLECO/message:send", false, 405},
		{"cancel by GET", http.MethodGet, "/a2a/01JEXAMPLECO/tasks/t1:cancel", false, 405},
		{"tasks by POST", http.MethodPost, "/a2a/01JEXAMPLECO/tasks", false, 405},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var h []string
			if c.auth {
				h = []string{"Authorization", "Bearer " + tok}
			}
			r := do(t, c.method, e.srv.URL()+c.path, strings.NewReader("{}"), h...)
			if r.status != c.want || len(r.body) != 0 {
				t.Fatalf("status %d body %q, want %d without body", r.status, r.body, c.want)
			}
		})
	}
}

func TestSection2_2_ListTasksPageSize(t *testing.T) {
	e := start(t, nil)
	iface := e.example().InterfaceURL
	for _, q := range []string{"", "?pageSize=1", "?pageSize=100"} {
		r := do(t, http.MethodGet, iface+"/tasks"+q, nil, "Authorization", "Bearer "+e.jwt("u1"))
		if r.status != 200 || r.header.Get("Content-Type") != "application/a2a+json" {
			t.Fatalf("%q: %d %s", q, r.status, r.body)
		}
		var lr a2a.ListTasksResponse
		if err := json.Unmarshal(r.body, &lr); err != nil || len(lr.Tasks) != 0 || lr.TotalSize != 0 {
			t.Fatalf("%q: %s", q, r.body)
		}
		if q == "" && lr.PageSize != 50 {
			t.Errorf("default pageSize %d, want 50", lr.PageSize)
		}
	}
	for _, q := range []string{"?pageSize=0", "?pageSize=101", "?pageSize=x", "?pageSize="} {
		r := do(t, http.MethodGet, iface+"/tasks"+q, nil, "Authorization", "Bearer "+e.jwt("u1"))
		wantA2AError(t, r, 400, "INVALID_ARGUMENT", "INVALID_PARAMS")
	}
}

func TestSection2_2_TaskLookupAndCancelAreTaskNotFound(t *testing.T) {
	e := start(t, nil)
	iface := e.example().InterfaceURL
	wantA2AError(t, do(t, http.MethodGet, iface+"/tasks/t-1", nil, "Authorization", "Bearer "+e.jwt("u1")), 404, "NOT_FOUND", "TASK_NOT_FOUND")
	wantA2AError(t, do(t, http.MethodPost, iface+"/tasks/t-1:cancel", nil, "Authorization", "Bearer "+e.jwt("u1")), 404, "NOT_FOUND", "TASK_NOT_FOUND")
	want401(t, do(t, http.MethodGet, iface+"/tasks/t-1", nil), challenge)
}

func TestSection3_2_Rejections(t *testing.T) {
	e := start(t, func(c *Config, pa *testPA) {
		c.Registered = append(c.Registered, Registration{Issuer: "https://disabled.example", JWKSURI: pa.jwksURI(), Disabled: true})
	})
	iface := e.example().InterfaceURL
	now := e.clk.Now()
	aud := e.srv.Audience()
	hsKey := []byte("0123456789abcdef0123456789abcdef")
	otherKey := newTestPA(t)
	cases := map[string]string{
		"HS256":               signRaw(t, jose.HS256, hsKey, "es-1", e.pa.claims(aud, "u1", now)),
		"wrong signature key": signRaw(t, jose.ES256, otherKey.es.Key, "es-1", e.pa.claims(aud, "u1", now)),
		"unknown kid":         signRaw(t, jose.ES256, e.pa.es.Key, "nope", e.pa.claims(aud, "u1", now)),
		"wrong aud":           e.pa.token(t, "other-aud", "u1", now, nil),
		"aud array":           e.pa.token(t, aud, "u1", now, func(c map[string]any) { c["aud"] = []string{aud, "x"} }),
		"no sub":              e.pa.token(t, aud, "u1", now, func(c map[string]any) { delete(c, "sub") }),
		"no iat":              e.pa.token(t, aud, "u1", now, func(c map[string]any) { delete(c, "iat") }),
		"iat 31s ahead":       e.pa.token(t, aud, "u1", now.Add(31*time.Second), nil),
		"no exp":              e.pa.token(t, aud, "u1", now, func(c map[string]any) { delete(c, "exp") }),
		"exp over iat+300":    e.pa.token(t, aud, "u1", now, func(c map[string]any) { c["exp"] = now.Add(301 * time.Second).Unix() }),
		"expired beyond skew": e.pa.token(t, aud, "u1", now.Add(-200*time.Second), nil),
		"unregistered issuer": e.pa.token(t, aud, "u1", now, func(c map[string]any) { c["iss"] = "https://unknown.example" }),
		"disabled issuer":     e.pa.token(t, aud, "u1", now, func(c map[string]any) { c["iss"] = "https://disabled.example" }),
		"not a JWT":           "not-a-jwt",
		"unsigned (alg none)": "eyJhbGciOiJub25lIn0." + strings.Split(e.jwt("u1"), ".")[1] + ".",
	}
	// Algorithms outside §3.2's ES256/RS256, each signed by a key the PA
	// publishes: only the alg allow-list can refuse them.
	for alg, k := range e.pa.other {
		cases[string(alg)+" (key published)"] = signRaw(t, alg, k.Key, k.KeyID, e.pa.claims(aud, "u1", now))
	}
	for name, tok := range cases {
		t.Run(name, func(t *testing.T) {
			want401(t, sendRaw(t, iface, tok, msgBody("m1", "", "hi")), challenge)
		})
	}
	t.Run("no Authorization", func(t *testing.T) {
		want401(t, sendRaw(t, iface, "", msgBody("m1", "", "hi")), challenge)
	})
	t.Run("Basic scheme", func(t *testing.T) {
		want401(t, sendRaw(t, iface, "", msgBody("m1", "", "hi"), "Authorization", "Basic dTpw"), challenge)
	})
}

func TestSection3_2_Accepts(t *testing.T) {
	e := start(t, nil)
	iface := e.example().InterfaceURL
	now, aud := e.clk.Now(), e.srv.Audience()
	ok := map[string]string{
		"ES256":               e.jwt("u1"),
		"RS256":               signRaw(t, jose.RS256, e.pa.rs.Key, e.pa.rs.KeyID, e.pa.claims(aud, "u1", now)),
		"iat 25s ahead":       e.pa.token(t, aud, "u1", now.Add(25*time.Second), nil),
		"expired within skew": e.pa.token(t, aud, "u1", now.Add(-140*time.Second), nil),
		"exp exactly iat+300": e.pa.token(t, aud, "u1", now, func(c map[string]any) { c["exp"] = now.Add(300 * time.Second).Unix() }),
	}
	for name, tok := range ok {
		t.Run(name, func(t *testing.T) {
			r := sendRaw(t, iface, tok, msgBody("m1", "", "hi"))
			if r.status != 200 {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
		})
	}
}

func TestSection3_1_OpenPolicyUsesOIDCDiscovery(t *testing.T) {
	e := start(t, func(c *Config, _ *testPA) { c.Policy = Open; c.Registered = nil })
	if r := sendRaw(t, e.example().InterfaceURL, e.jwt("u1"), msgBody("m1", "", "hi")); r.status != 200 {
		t.Fatalf("open provider refused a discoverable PA: %d", r.status)
	}
	// A registration takes precedence: disabled wins over discovery.
	e2 := start(t, func(c *Config, pa *testPA) {
		c.Policy = Open
		c.Registered = []Registration{{Issuer: pa.issuer, JWKSURI: pa.jwksURI(), Disabled: true}}
	})
	want401(t, sendRaw(t, e2.example().InterfaceURL, e2.jwt("u1"), msgBody("m1", "", "hi")), challenge)
	// An Open Provider still refuses an issuer without discovery.
	bogus := e.pa.token(t, e.srv.Audience(), "u1", e.clk.Now(), func(c map[string]any) { c["iss"] = e.pa.issuer + "/nothing-here" })
	want401(t, sendRaw(t, e.example().InterfaceURL, bogus, msgBody("m1", "", "hi")), challenge)
}

func TestSection3_4_AuthenticatesBeforeReadingBody(t *testing.T) {
	e := start(t, nil)
	want401(t, sendRaw(t, e.example().InterfaceURL, "", "{not json"), challenge)
}

func TestSection4_1_RequestValidation(t *testing.T) {
	e := start(t, nil)
	iface := e.example().InterfaceURL
	cases := []struct {
		name, body, reason, status string
		code                       int
	}{
		{"bad JSON", `{"message":`, "INVALID_PARAMS", "INVALID_ARGUMENT", 400},
		{"no message", `{}`, "INVALID_PARAMS", "INVALID_ARGUMENT", 400},
		{"agent role", `{"message":{"messageId":"m1","role":"ROLE_AGENT","parts":[{"text":"hi"}]}}`, "INVALID_PARAMS", "INVALID_ARGUMENT", 400},
		{"no role", `{"message":{"messageId":"m1","parts":[{"text":"hi"}]}}`, "INVALID_PARAMS", "INVALID_ARGUMENT", 400},
		{"blank text", `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"  \n"}]}}`, "INVALID_PARAMS", "INVALID_ARGUMENT", 400},
		{"no parts", `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[]}}`, "INVALID_PARAMS", "INVALID_ARGUMENT", 400},
		{"data part", `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"},{"data":{"a":1}}]}}`, "CONTENT_TYPE_NOT_SUPPORTED", "INVALID_ARGUMENT", 400},
		{"url part", `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"url":"https://x.example/a.png","mediaType":"image/png"}]}}`, "CONTENT_TYPE_NOT_SUPPORTED", "INVALID_ARGUMENT", 400},
		{"unknown part kind", `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"file":{"uri":"https://x.example/a"}}]}}`, "CONTENT_TYPE_NOT_SUPPORTED", "INVALID_ARGUMENT", 400},
		{"taskId", `{"message":{"messageId":"m1","taskId":"t-1","role":"ROLE_USER","parts":[{"text":"hi"}]}}`, "TASK_NOT_FOUND", "NOT_FOUND", 404},
		{"push config", `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"taskPushNotificationConfig":{"url":"https://x.example/cb"}}}`, "PUSH_NOTIFICATION_NOT_SUPPORTED", "FAILED_PRECONDITION", 400},
		{"no messageId", `{"message":{"role":"ROLE_USER","parts":[{"text":"hi"}]}}`, "INVALID_PARAMS", "INVALID_ARGUMENT", 400},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantA2AError(t, sendRaw(t, iface, e.jwt("u1"), c.body), c.code, c.status, c.reason)
		})
	}
	if n := e.srv.AgentRuns(); n != 0 {
		t.Errorf("agent ran %d times on invalid requests", n)
	}
}

func TestSection4_2_ContextLifecycle(t *testing.T) {
	e := start(t, nil)
	iface := e.example().InterfaceURL
	r := sendRaw(t, iface, e.jwt("u1"), msgBody("m1", "", "Hello"))
	if r.status != 200 || r.header.Get("Content-Type") != "application/a2a+json" {
		t.Fatalf("%d %s", r.status, r.body)
	}
	var reply struct{ Message a2a.Message }
	if err := json.Unmarshal(r.body, &reply); err != nil {
		t.Fatal(err)
	}
	ctxID := reply.Message.ContextID
	if ctxID == "" || reply.Message.Role != a2a.MessageRoleAgent || reply.Message.ID == "" {
		t.Fatalf("reply %+v", reply.Message)
	}
	if !strings.Contains(reply.Message.Parts[0].Text(), "order number") {
		t.Errorf("greeting %q does not ask for an order number", reply.Message.Parts[0].Text())
	}
	text, got := replyText(t, e.send(iface, "u1", "m2", ctxID, "It's A-88213"))
	if got != ctxID || !strings.Contains(text, "shipped") {
		t.Errorf("continue: ctx %q text %q", got, text)
	}
	unknown := wantA2AError(t, sendRaw(t, iface, e.jwt("u1"), msgBody("m3", "no-such-context", "hi")), 400, "INVALID_ARGUMENT", "INVALID_PARAMS")
	foreign := wantA2AError(t, sendRaw(t, iface, e.jwt("someone-else"), msgBody("m3", ctxID, "hi")), 400, "INVALID_ARGUMENT", "INVALID_PARAMS")
	if unknown != foreign {
		t.Errorf("foreign context message %q differs from unknown %q (leaks existence)", foreign, unknown)
	}
	wantA2AError(t, sendRaw(t, e.other().InterfaceURL, e.jwt("u1"), msgBody("m3", ctxID, "hi")), 400, "INVALID_ARGUMENT", "INVALID_PARAMS")

	text, _ = replyText(t, e.send(iface, "u1", "m4", ctxID, "ok bye"))
	if !strings.Contains(text, "Goodbye") {
		t.Errorf("bye reply %q", text)
	}
	wantA2AError(t, sendRaw(t, iface, e.jwt("u1"), msgBody("m5", ctxID, "one more thing")), 400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION")
	// The closing turn itself is still retryable (§4.3).
	if r := sendRaw(t, iface, e.jwt("u1"), msgBody("m4", ctxID, "ok bye")); r.status != 200 {
		t.Errorf("retry of the closing turn: %d", r.status)
	}
}

func TestSection4_2_AgentAnswersFromOrderTable(t *testing.T) {
	e := start(t, nil)
	cases := map[string]string{
		"A-88213":            "shipped",
		"status of a-10001?": "not shipped yet",
		"A-20002":            "delivered",
		"A-99999":            "couldn't find order A-99999",
		"cancel A-10001":     "permission (orders:cancel)",
	}
	for in, want := range cases {
		text, _ := replyText(t, e.send(e.example().InterfaceURL, "u1", "m-"+in, "", in)) // one messageId per message
		if !strings.Contains(text, want) {
			t.Errorf("%q → %q, want it to contain %q", in, text, want)
		}
	}
	text, _ := replyText(t, e.send(e.other().InterfaceURL, "u1", "m1", "", "B-5501"))
	if !strings.Contains(text, "shipped") {
		t.Errorf("Other Shop B-5501 → %q", text)
	}
}

func TestSection4_3_RepeatedMessageIDReturnsStoredReply(t *testing.T) {
	e := start(t, nil)
	iface := e.example().InterfaceURL
	first := sendRaw(t, iface, e.jwt("u1"), msgBody("m1", "", "hello"))
	_, ctxID := replyText(t, first.json(t))
	a := sendRaw(t, iface, e.jwt("u1"), msgBody("m2", ctxID, "A-88213"))
	runs := e.srv.AgentRuns()
	b := sendRaw(t, iface, e.jwt("u1"), msgBody("m2", ctxID, "A-88213"))
	if a.status != 200 || !bytes.Equal(a.body, b.body) {
		t.Fatalf("retry differs:\n%s\n%s", a.body, b.body)
	}
	if e.srv.AgentRuns() != runs {
		t.Errorf("agent re-ran on retry: %d → %d", runs, e.srv.AgentRuns())
	}
}

func TestSection4_3_InFlightDuplicateIsInvalidParams(t *testing.T) {
	e := start(t, func(c *Config, _ *testPA) { c.AgentDelay = 300 * time.Millisecond })
	iface := e.example().InterfaceURL
	_, ctxID := replyText(t, e.send(iface, "u1", "m1", "", "hello"))
	var wg sync.WaitGroup
	var first resp
	wg.Add(1)
	go func() { defer wg.Done(); first = sendRaw(t, iface, e.jwt("u1"), msgBody("m2", ctxID, "A-88213")) }()
	// Wait until the first turn is in flight.
	deadline := time.Now().Add(5 * time.Second)
	for {
		e.srv.mu.Lock()
		inflight := e.srv.contexts[ctxID].inflight["m2"]
		e.srv.mu.Unlock()
		if inflight || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	wantA2AError(t, sendRaw(t, iface, e.jwt("u1"), msgBody("m2", ctxID, "A-88213")), 400, "INVALID_ARGUMENT", "INVALID_PARAMS")
	wg.Wait()
	if first.status != 200 {
		t.Fatalf("first: %d %s", first.status, first.body)
	}
}

func TestSection6_InternalErrorThenStoredReplyOnRetry(t *testing.T) {
	e := start(t, func(c *Config, _ *testPA) { c.FailReplies = 1 })
	iface := e.example().InterfaceURL
	_, ctxID := replyText(t, e.send(iface, "u1", "m1", "", "hello")) // new contexts are never failed
	r := sendRaw(t, iface, e.jwt("u1"), msgBody("m2", ctxID, "A-88213"))
	wantA2AError(t, r, 500, "INTERNAL", "INTERNAL")
	if e.srv.AgentRuns() != 2 {
		t.Fatalf("runs %d, want 2", e.srv.AgentRuns())
	}
	text, _ := replyText(t, e.send(iface, "u1", "m2", ctxID, "A-88213"))
	if !strings.Contains(text, "shipped") || e.srv.AgentRuns() != 2 {
		t.Fatalf("retry: %q, runs %d", text, e.srv.AgentRuns())
	}
}

func TestSection6_RateLimitAnswers429WithRetryAfter(t *testing.T) {
	e := start(t, func(c *Config, _ *testPA) { c.RateLimit = 1 })
	iface := e.example().InterfaceURL
	if r := sendRaw(t, iface, e.jwt("u1"), msgBody("m1", "", "hi")); r.status != 200 {
		t.Fatalf("first: %d", r.status)
	}
	r := sendRaw(t, iface, e.jwt("u1"), msgBody("m2", "", "hi"))
	if r.status != 429 || r.header.Get("Retry-After") != "1" {
		t.Fatalf("second: %d Retry-After %q", r.status, r.header.Get("Retry-After"))
	}
	if r := sendRaw(t, iface, e.jwt("u2"), msgBody("m3", "", "hi")); r.status != 200 {
		t.Errorf("another sub is limited separately: %d", r.status)
	}
	e.clk.Add(time.Second)
	if r := sendRaw(t, iface, e.jwt("u1"), msgBody("m4", "", "hi")); r.status != 200 {
		t.Errorf("after Retry-After: %d", r.status)
	}
}

// TestBeyond4_3_FirstMessageRetryWithoutContextIDReturnsStoredReply covers a
// rule that goes beyond §4.3 (which dedupes within a contextId): a first
// message retried without contextId gets the stored reply of its first
// attempt and the same context, per (personal agent, sub, Brand).
func TestBeyond4_3_FirstMessageRetryWithoutContextIDReturnsStoredReply(t *testing.T) {
	e := start(t, nil)
	iface := e.example().InterfaceURL
	a := sendRaw(t, iface, e.jwt("u1"), msgBody("m1", "", "hello"))
	b := sendRaw(t, iface, e.jwt("u1"), msgBody("m1", "", "hello"))
	if a.status != 200 || !bytes.Equal(a.body, b.body) {
		t.Fatalf("retry of a first message differs:\n%s\n%s", a.body, b.body)
	}
	if e.srv.AgentRuns() != 1 {
		t.Fatalf("agent ran %d times for one first message, want 1", e.srv.AgentRuns())
	}
	// Another sub, or another Brand, with the same messageId is a new turn.
	_, ctxA := replyText(t, a.json(t))
	_, ctxOther := replyText(t, sendRaw(t, iface, e.jwt("u2"), msgBody("m1", "", "hello")).json(t))
	_, ctxBrand := replyText(t, sendRaw(t, e.other().InterfaceURL, e.jwt("u1"), msgBody("m1", "", "hello")).json(t))
	if ctxOther == ctxA || ctxBrand == ctxA || e.srv.AgentRuns() != 3 {
		t.Fatalf("contexts %q %q %q, runs %d: want three distinct contexts and 3 runs", ctxA, ctxOther, ctxBrand, e.srv.AgentRuns())
	}
}
