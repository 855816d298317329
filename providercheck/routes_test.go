package providercheck

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/signer"
)

// A Provider that offers only message:send (§2.2: the one required
// operation) and leaves tasks unrouted (a bare 404): routes.tasks-list
// fails with a reason naming both fixes (serve it, or UNSUPPORTED_OPERATION),
// and routes.tasks-page-size skips instead of failing a second time for
// the same missing route.
func TestTasksUnroutedOneFailureNamingBothFixes(t *testing.T) {
	var provider *httptest.Server
	provider = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/a2a/b1/.well-known/agent-card.json":
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(strings.ReplaceAll(`{"name":"Only send","version":"1","supportedInterfaces":[{"url":"IFACE","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"}],
"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[],
"securitySchemes":{"paJwt":{"httpAuthSecurityScheme":{"scheme":"Bearer","bearerFormat":"JWT"}}},
"securityRequirements":[{"schemes":{"paJwt":{"list":[]}}}]}`, "IFACE", provider.URL+"/a2a/b1")))
		case "/a2a/b1/message:send":
			w.Header().Set("Content-Type", "application/a2a+json")
			w.Write([]byte(`{"message":{"messageId":"r-1","contextId":"c-1","role":"ROLE_AGENT","parts":[{"text":"hi"}]}}`))
		default:
			w.WriteHeader(http.StatusNotFound)
		}
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
		Groups: []string{GroupRoutes}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Result{}
	for _, r := range rep.Results {
		got[r.ID] = r
	}
	if r := got["routes.tasks-list"]; r.Status != Fail || !strings.Contains(r.Reason, "UNSUPPORTED_OPERATION") {
		t.Errorf("routes.tasks-list: %s %q, want a failure naming UNSUPPORTED_OPERATION as the other fix", r.Status, r.Reason)
	}
	if r := got["routes.tasks-page-size"]; r.Status != Skip {
		t.Errorf("routes.tasks-page-size: %s %q, want a skip (tasks is not routed)", r.Status, r.Reason)
	}
}
