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

// §6: a 429 without Retry-After is not retried. The checks whose request
// got it were never judged by the Provider: they skip and point at
// errors.rate-limit, which is the one failure (not "want 401" for each).
func TestUnretried429SkipsTheCheckAndFailsRateLimit(t *testing.T) {
	var provider *httptest.Server
	provider = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/a2a/b1/.well-known/agent-card.json":
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(strings.ReplaceAll(`{"name":"Busy","version":"1","supportedInterfaces":[{"url":"IFACE","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"}],
"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[],
"securitySchemes":{"paJwt":{"httpAuthSecurityScheme":{"scheme":"Bearer","bearerFormat":"JWT"}}},
"securityRequirements":[{"schemes":{"paJwt":{"list":[]}}}]}`, "IFACE", provider.URL+"/a2a/b1")))
		default:
			w.WriteHeader(http.StatusTooManyRequests)
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
		Groups: []string{GroupIdentity, GroupErrors}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Results {
		switch {
		case r.ID == "errors.rate-limit":
			if r.Status != Fail {
				t.Errorf("errors.rate-limit: %s %q, want a failure", r.Status, r.Reason)
			}
		case r.ID == "identity.alg-none" || r.ID == "identity.expired":
			if r.Status != Skip || !strings.Contains(r.Reason, "errors.rate-limit") {
				t.Errorf("%s: %s %q, want a skip pointing at errors.rate-limit", r.ID, r.Status, r.Reason)
			}
		}
	}
}
