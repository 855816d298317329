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

	"github.com/pact-cli/pact/demoprovider"
	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/signer"
)

const busyCard = `{"name":"Busy","version":"1","supportedInterfaces":[{"url":"IFACE","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"}],
"capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[],
"securitySchemes":{"paJwt":{"httpAuthSecurityScheme":{"scheme":"Bearer","bearerFormat":"JWT"}}},
"securityRequirements":[{"schemes":{"paJwt":{"list":[]}}}]}`

// busyProvider serves a card and answers every other request 429 with
// the given Retry-After; served counts the 429s.
func busyProvider(t *testing.T, retryAfter string, served *atomic.Int32) *httptest.Server {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/a2a/b1/.well-known/agent-card.json" {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(strings.ReplaceAll(busyCard, "IFACE", srv.URL+"/a2a/b1")))
			return
		}
		served.Add(1)
		w.Header().Set("Retry-After", retryAfter)
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func runAgainst(t *testing.T, providerURL, cardURL string, groups ...string) *Report {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	sig, err := signer.New("https://pa.example", key, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &profile.Config{Issuer: "https://pa.example", Providers: []profile.Registration{{URL: providerURL, Audience: "aud"}}}
	rep, err := Run(context.Background(), Options{HTTP: &http.Client{}, Config: cfg, Signer: sig,
		Sub: func(string) (string, error) { return "sub-1", nil }, CardURL: cardURL, Groups: groups})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func resultOf(t *testing.T, rep *Report, id string) Result {
	t.Helper()
	for _, r := range rep.Results {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("no result for %s", id)
	return Result{}
}

// Issue 31 item 21 (§6): a request pact retried after Retry-After that is
// answered 429 again was never judged by the Provider: the check skips
// (saying so) instead of failing; and every 429 is counted, the second
// ones too.
func TestIssue31_21_A429AgainAfterTheWaitSkipsTheCheck(t *testing.T) {
	var served atomic.Int32
	p := busyProvider(t, "0", &served)
	rep := runAgainst(t, p.URL, p.URL+"/a2a/b1/.well-known/agent-card.json", GroupConversation, GroupErrors)
	r := resultOf(t, rep, "conversation.ignored-members")
	if r.Status != Skip || !strings.Contains(r.Reason, "429 again after waiting its Retry-After") {
		t.Errorf("conversation.ignored-members: %s %q, want a skip saying the retry got 429 again", r.Status, r.Reason)
	}
	if rep.Failed != 0 {
		for _, r := range rep.Results {
			if r.Status == Fail {
				t.Errorf("%s failed: %s; %s", r.ID, r.Got, r.Reason)
			}
		}
	}
	if got := int(served.Load()); rep.RateLimited != got {
		t.Errorf("the report counts %d answers 429, the Provider gave %d", rep.RateLimited, got)
	}
	rl := resultOf(t, rep, "errors.rate-limit")
	if want := plural(int(served.Load()), "answer") + " 429"; !strings.HasPrefix(rl.Got, want) {
		t.Errorf("errors.rate-limit got %q, want it to start %q", rl.Got, want)
	}
}

// Issue 31 item 21 (§6): a Retry-After over the longest pact waits is not
// waited out, and errors.rate-limit says so; it never claims a wait that
// did not happen.
func TestIssue31_21_RateLimitSaysWhatWasWaitedOut(t *testing.T) {
	var served atomic.Int32
	p := busyProvider(t, "45", &served)
	rep := runAgainst(t, p.URL, p.URL+"/a2a/b1/.well-known/agent-card.json", GroupErrors)
	rl := resultOf(t, rep, "errors.rate-limit")
	if rl.Status != Pass || strings.Contains(rl.Got, "waited out and sent again") ||
		!strings.Contains(rl.Got, "not waited out (Retry-After up to 45s, over the 30s pact waits at most)") {
		t.Errorf("errors.rate-limit: %s, got %q", rl.Status, rl.Got)
	}
}

// Issue 31 item 21: on a defective card the skip texts say what is true:
// a card whose PA scheme is not alone still names its interface (the
// Provider's copy and the unknown Brand are checked), and a card without
// an HTTP+JSON 1.0 interface is said to have none, not an interface URL of
// another form.
func TestIssue31_21_SkipTextsAreTrueOnADefectiveCard(t *testing.T) {
	for fault, want := range map[string]map[string]string{
		"card-shared-requirement": {"card.provider-copy": "", "card.unknown-brand": ""},
		"card-old-version": {
			"card.provider-copy": "the card names no usable HTTP+JSON 1.0 interface (see card.interface)",
			"card.unknown-brand": "the card names no usable HTTP+JSON 1.0 interface (see card.interface)",
		},
	} {
		srv, err := demoprovider.Start(context.Background(), demoprovider.Config{Faults: []string{fault}})
		if err != nil {
			t.Fatal(err)
		}
		rep := runAgainst(t, srv.URL(), srv.Brands()[0].CardURL, GroupCard)
		srv.Close()
		for id, reason := range want {
			r := resultOf(t, rep, id)
			switch {
			case reason == "" && r.Status != Pass:
				t.Errorf("%s: %s: %s %q, want a pass", fault, id, r.Status, r.Reason)
			case reason != "" && (r.Status != Skip || r.Reason != reason):
				t.Errorf("%s: %s: %s %q, want a skip %q", fault, id, r.Status, r.Reason, reason)
			}
		}
	}
}
