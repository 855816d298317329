package providercheck

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/signer"
)

// A card whose delegation endpoints and metadata point to another origin
// gets nothing sent there: the delegation checks say why and skip, and
// the other server sees no request (PA JWTs go only under the
// registration, and the run talks only to the Brand's and its Provider's
// origins).
func TestNothingIsSentToAnotherOrigin(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	defer other.Close()
	var provider *httptest.Server
	provider = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/a2a/b1/.well-known/agent-card.json" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		card := `{"name":"Hostile","version":"1","supportedInterfaces":[{"url":"IFACE","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"}],
"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[],
"securitySchemes":{"paJwt":{"httpAuthSecurityScheme":{"scheme":"Bearer","bearerFormat":"JWT"}},
 "userDelegation":{"oauth2SecurityScheme":{"flows":{"deviceCode":{"deviceAuthorizationUrl":"OTHER/device","tokenUrl":"OTHER/token","scopes":{"orders:read":"Read"}}},"oauth2MetadataUrl":"OTHER/.well-known/oauth-authorization-server"}}},
"securityRequirements":[{"schemes":{"paJwt":{"list":[]}}},{"schemes":{"paJwt":{"list":[]},"userDelegation":{"list":[]}}}]}`
		card = strings.ReplaceAll(card, "IFACE", provider.URL+"/a2a/b1")
		card = strings.ReplaceAll(card, "OTHER", other.URL)
		w.Write([]byte(card))
	}))
	defer provider.Close()

	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	sig, err := signer.New("https://pa.example", key, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &profile.Config{Issuer: "https://pa.example", Providers: []profile.Registration{{URL: provider.URL, Audience: "aud"}}}
	rep, err := Run(context.Background(), Options{HTTP: &http.Client{}, Config: cfg, Signer: sig,
		Sub: func(string) (string, error) { return "sub-1", nil }, CardURL: provider.URL + "/a2a/b1/.well-known/agent-card.json",
		Scopes: []string{"orders:read"}, Groups: []string{GroupDelegation}})
	if err != nil {
		t.Fatal(err)
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("%d requests reached the other origin", n)
	}
	for _, r := range rep.Results {
		if r.Status == Pass {
			t.Errorf("%s passed against a card whose delegation is elsewhere", r.ID)
		}
		if r.ID == "delegation.card" && (r.Status != Fail || !strings.Contains(r.Reason, "refused to contact")) {
			t.Errorf("delegation.card: %s %q", r.Status, r.Reason)
		}
	}
}

// A card whose interface is on an origin this profile has no
// registration for: the card checks that would GET under the interface
// (card.provider-copy, card.unknown-brand) skip and say why, rather than
// fail the Provider for a request pact itself refused to send; the other
// origin sees nothing.
func TestCardChecksSkipAnInterfaceOnAnotherOrigin(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		w.WriteHeader(http.StatusNotFound)
	}))
	defer other.Close()
	brand := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/.well-known/agent-card.json" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(strings.ReplaceAll(`{"name":"Elsewhere","version":"1","supportedInterfaces":[{"url":"OTHER/a2a/b1","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"}],
"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[],
"securitySchemes":{"paJwt":{"httpAuthSecurityScheme":{"scheme":"Bearer","bearerFormat":"JWT"}}},
"securityRequirements":[{"schemes":{"paJwt":{"list":[]}}}]}`, "OTHER", other.URL)))
	}))
	defer brand.Close()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	sig, err := signer.New("https://pa.example", key, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &profile.Config{Issuer: "https://pa.example", Providers: []profile.Registration{{URL: "http://127.0.0.1:1", Audience: "aud"}}}
	rep, err := Run(context.Background(), Options{HTTP: &http.Client{}, Config: cfg, Signer: sig,
		Sub: func(string) (string, error) { return "sub-1", nil }, CardURL: brand.URL + "/.well-known/agent-card.json",
		Groups: []string{GroupCard}})
	if err != nil {
		t.Fatal(err)
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("%d requests reached the other origin", n)
	}
	for _, r := range rep.Results {
		if r.ID != "card.provider-copy" && r.ID != "card.unknown-brand" {
			continue
		}
		if r.Status != Skip || !strings.Contains(r.Reason, "nothing was sent there") {
			t.Errorf("%s: %s %q, want a skip saying nothing was sent", r.ID, r.Status, r.Reason)
		}
	}
}
