package receipts

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/pact-cli/pact/delegation"
	"github.com/pact-cli/pact/demoprovider"
	"github.com/pact-cli/pact/deviceflow"
	"github.com/pact-cli/pact/jwks"
	"github.com/pact-cli/pact/secrets"
	"github.com/pact-cli/pact/signer"
	"github.com/pact-cli/pact/store"
)

// TestSection5_EndToEndWithDemoProvider runs the client side of §5 against
// the built-in demo Provider on 127.0.0.1: RFC 8414 metadata, device
// authorization with a scope the User unchecks, polling, token verification
// and storage, a delegated message:send, and the receipt verified and
// archived, then verified again offline.
func TestSection5_EndToEndWithDemoProvider(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// The personal agent: a key, its JWKS and OIDC discovery on loopback.
	key, err := signer.Generate("ES256", 0)
	if err != nil {
		t.Fatal(err)
	}
	var h http.Handler
	paSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	defer paSrv.Close()
	issuer := paSrv.URL
	pub, err := signer.PublicJWK(key)
	if err != nil {
		t.Fatal(err)
	}
	h = jwks.Handler(issuer, issuer+"/.well-known/jwks.json", func() (jose.JSONWebKeySet, error) {
		return jose.JSONWebKeySet{Keys: []jose.JSONWebKey{pub}}, nil
	})
	sg, err := signer.New(issuer, key, nil)
	if err != nil {
		t.Fatal(err)
	}

	prov, err := demoprovider.Start(ctx, demoprovider.Config{PollInterval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer prov.Close()
	var brand demoprovider.Brand
	for _, b := range prov.Brands() {
		if b.Delegation && brand.InterfaceURL == "" {
			brand = b
		}
	}
	if brand.InterfaceURL == "" {
		// The fixture changed under the test: fail, never skip silently.
		t.Fatal("the demo Provider has no Brand offering delegation: this test needs one")
	}
	mint := func(context.Context, string) (string, error) { return sg.Mint(prov.Audience(), "u-e2e") }

	// The card's delegation block.
	card := getJSON(t, brand.CardURL)
	dc := card["securitySchemes"].(map[string]any)["userDelegation"].(map[string]any)["oauth2SecurityScheme"].(map[string]any)
	flow := dc["flows"].(map[string]any)["deviceCode"].(map[string]any)
	cardScopes := map[string]string{}
	for id, d := range flow["scopes"].(map[string]any) {
		cardScopes[id] = d.(string)
	}

	md, err := deviceflow.FetchMetadata(ctx, http.DefaultClient, dc["oauth2MetadataUrl"].(string))
	if err != nil {
		t.Fatal(err)
	}
	client := &deviceflow.Client{ClientID: issuer, PAToken: mint}
	auth, err := client.Authorize(ctx, flow["deviceAuthorizationUrl"].(string), []string{"orders:read", "orders:cancel"}, cardScopes)
	if err != nil {
		t.Fatal(err)
	}
	user := demoprovider.ScriptedUser{Username: "jane", Password: "jane-demo-pass", Approve: []string{"orders:read", "orders:cancel"}}
	if err := user.Visit(ctx, auth.VerificationURIComplete); err != nil {
		t.Fatal(err)
	}
	tok, err := client.Poll(ctx, flow["tokenUrl"].(string), auth)
	if err != nil {
		t.Fatal(err)
	}

	sec := map[string]string{}
	m := &delegation.Manager{
		Store:    delegation.DBStore{DB: testDB(t).ForUser(store.LocalUser)},
		Secrets:  mapSecrets(sec),
		Keys:     jwks.NewCache(http.DefaultClient),
		Flow:     client,
		ClientID: issuer,
	}
	g, err := m.Accept(ctx, delegation.Origin{Brand: brand.CardURL, InterfaceURL: brand.InterfaceURL, MetadataURL: dc["oauth2MetadataUrl"].(string), Metadata: md}, tok)
	if err != nil {
		t.Fatal(err)
	}
	if !g.HasScopes("orders:read", "orders:cancel") || g.Subject == "" {
		t.Fatalf("grant = %+v", g)
	}

	// A delegated message:send and its receipt.
	var body []byte
	err = m.Send(ctx, brand.InterfaceURL, func(dt string, g *delegation.Grant) error {
		pa, _ := mint(ctx, "")
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, brand.InterfaceURL+"/message:send",
			strings.NewReader(`{"message":{"messageId":"m-e2e-1","role":"ROLE_USER","parts":[{"text":"cancel A-10001"}]}}`))
		req.Header.Set("Authorization", "Bearer "+pa)
		req.Header.Set("X-A2A-User-Delegation", "Bearer "+dt)
		req.Header.Set("A2A-Version", "1.0")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ = io.ReadAll(resp.Body)
		if resp.StatusCode == 401 && delegation.IsInvalidTokenChallenge(resp.Header.Get("WWW-Authenticate")) {
			return delegation.ErrInvalidToken
		}
		if resp.StatusCode != 200 {
			return fmt.Errorf("HTTP %d: %s", resp.StatusCode, body)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var reply struct {
		Message struct {
			Metadata map[string]any `json:"metadata"`
		} `json:"message"`
	}
	if err := json.Unmarshal(body, &reply); err != nil {
		t.Fatal(err)
	}
	rc, ok, err := FromMetadata(reply.Message.Metadata)
	if !ok || err != nil {
		t.Fatalf("no receipt: %v %s", err, body)
	}
	res, err := Verify(ctx, jwks.NewCache(http.DefaultClient), rc, ExpectFromGrant(g, issuer))
	if err != nil {
		t.Fatal(err)
	}
	a := &Archive{DB: testDB(t).ForUser(store.LocalUser), Keys: jwks.NewCache(http.DefaultClient)}
	if _, err := a.Put(res); err != nil {
		t.Fatal(err)
	}
	for _, online := range []bool{true, false} {
		checks, err := a.VerifyAll(ctx, online)
		if err != nil || len(checks) != 1 || !checks[0].Verified {
			t.Errorf("online=%v: %+v %v", online, checks, err)
		}
	}
	// The same receipt checked against another grant fails.
	other := *g
	other.GrantID = "a2agrant_other"
	if _, err := Verify(ctx, jwks.NewCache(http.DefaultClient), rc, ExpectFromGrant(&other, issuer)); err == nil {
		t.Error("receipt accepted for another grant")
	}
}

type mapSecrets map[string]string

func (m mapSecrets) Get(k string) (string, error) {
	v, ok := m[k]
	if !ok {
		return "", fmt.Errorf("%s: %w", k, secrets.ErrNotFound)
	}
	return v, nil
}
func (m mapSecrets) Set(k, v string) error { m[k] = v; return nil }
func (m mapSecrets) Delete(k string) error { delete(m, k); return nil }

func getJSON(t *testing.T, u string) map[string]any {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}
