package discovery

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pact-cli/pact/httpx"
)

func TestCardURL_ThreeForms(t *testing.T) {
	for arg, want := range map[string]string{
		"brand.example.com":                         "https://brand.example.com/.well-known/agent-card.json",
		"Brand.Example.com":                         "https://brand.example.com/.well-known/agent-card.json",
		"https://brand.example.com":                 "https://brand.example.com/.well-known/agent-card.json",
		"https://brand.example.com/":                "https://brand.example.com/.well-known/agent-card.json",
		"http://127.0.0.1:8080":                     "http://127.0.0.1:8080/.well-known/agent-card.json",
		"http://localhost:9/":                       "http://localhost:9/.well-known/agent-card.json",
		"https://registry.example.org/cards/x.json": "https://registry.example.org/cards/x.json",
	} {
		got, err := CardURL(arg)
		if err != nil || got != want {
			t.Errorf("CardURL(%q) = %q, %v; want %q", arg, got, err, want)
		}
	}
}

func TestCardURL_Refusals(t *testing.T) {
	for arg, want := range map[string]error{
		"":                              ErrBadArgument,
		"not a domain":                  ErrBadArgument,
		"brand":                         ErrBadArgument,
		"brand.example.com/path":        ErrBadArgument,
		"https://brand.example.com/x":   ErrBadArgument,
		"https://user:pw@brand.example": ErrBadArgument,
		"http://brand.example.com":      httpx.ErrInsecureURL,
		"ftp://brand.example.com":       httpx.ErrInsecureURL,
	} {
		if _, err := CardURL(arg); !errors.Is(err, want) {
			t.Errorf("CardURL(%q) error = %v, want %v", arg, err, want)
		}
	}
}

func loadCard(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile("testdata/card-delegated.json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func parseMap(t *testing.T, m map[string]any) (*Card, error) {
	b, _ := json.Marshal(m)
	return Parse(b)
}

func TestSection2_1_InterfaceChosenByBindingAndVersionNotPosition(t *testing.T) {
	c, err := parseMap(t, loadCard(t))
	if err != nil {
		t.Fatal(err)
	}
	if c.InterfaceURL != "https://provider.example.com/a2a/01J" {
		t.Fatalf("interface = %s", c.InterfaceURL)
	}
	if c.PAScheme != "paJwt" {
		t.Fatalf("PA scheme = %q", c.PAScheme)
	}
}

func TestSection2_1_NoHTTPJSON10Interface(t *testing.T) {
	m := loadCard(t)
	m["supportedInterfaces"] = []any{map[string]any{"url": "https://p.example/a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}}
	if _, err := parseMap(t, m); err == nil || !strings.Contains(err.Error(), "HTTP+JSON") {
		t.Fatalf("got %v", err)
	}
}

func TestSection2_1_InterfaceOverPlainHTTPRefused(t *testing.T) {
	m := loadCard(t)
	m["supportedInterfaces"] = []any{map[string]any{"url": "http://p.example/a", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}}
	if _, err := parseMap(t, m); err == nil || !strings.Contains(err.Error(), "http") {
		t.Fatalf("got %v", err)
	}
}

func TestSection2_1_PAJWTSchemeRequiredAlone(t *testing.T) {
	m := loadCard(t)
	m["securityRequirements"] = []any{map[string]any{"schemes": map[string]any{"paJwt": map[string]any{"list": []any{}}, "userDelegation": map[string]any{"list": []any{}}}}}
	if _, err := parseMap(t, m); err == nil || !strings.Contains(err.Error(), "alone") {
		t.Fatalf("PA scheme not alone: got %v", err)
	}
	m = loadCard(t)
	m["securitySchemes"].(map[string]any)["paJwt"] = map[string]any{"httpAuthSecurityScheme": map[string]any{"scheme": "Basic"}}
	if _, err := parseMap(t, m); err == nil {
		t.Fatal("Basic scheme accepted as the PA JWT")
	}
}

func TestSection5_1_DelegationParsed(t *testing.T) {
	c, err := parseMap(t, loadCard(t))
	if err != nil {
		t.Fatal(err)
	}
	d := c.Delegation
	if d == nil || d.Scheme != "userDelegation" || d.Scopes["orders:cancel"] != "Cancel an order that has not shipped" {
		t.Fatalf("delegation = %+v", d)
	}
	if strings.Join(d.ScopeIDs(), ",") != "orders:cancel,orders:read" || !strings.HasSuffix(d.OAuth2MetadataURL, "oauth-authorization-server") {
		t.Fatalf("delegation = %+v", d)
	}
}

func TestSection5_1_IdentityOnlyCardHasNoDelegation(t *testing.T) {
	m := loadCard(t)
	delete(m["securitySchemes"].(map[string]any), "userDelegation")
	m["securityRequirements"] = m["securityRequirements"].([]any)[:1]
	c, err := parseMap(t, m)
	if err != nil || c.Delegation != nil || len(c.Problems) != 0 {
		t.Fatalf("%+v %v", c, err)
	}
}

func TestSection5_1_BrokenDelegationIsAProblemNotAnError(t *testing.T) {
	m := loadCard(t)
	us := m["securitySchemes"].(map[string]any)["userDelegation"].(map[string]any)["oauth2SecurityScheme"].(map[string]any)
	delete(us, "oauth2MetadataUrl")
	c, err := parseMap(t, m)
	if err != nil || c.Delegation != nil || len(c.Problems) != 1 || !strings.Contains(c.Problems[0], "oauth2MetadataUrl") {
		t.Fatalf("%+v %v", c, err)
	}
}

func client() *http.Client { return httpx.NewClient(httpx.Options{Timeout: 2 * time.Second}) }

func TestFetch_FollowsBrandRedirectToProvider(t *testing.T) {
	card, _ := os.ReadFile("testdata/card-delegated.json")
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(card) }))
	defer provider.Close()
	brand := httptest.NewServer(http.RedirectHandler(provider.URL+"/a2a/01J/.well-known/agent-card.json", http.StatusFound))
	defer brand.Close()
	u, _ := CardURL(brand.URL)
	c, err := Fetch(context.Background(), client(), u)
	if err != nil {
		t.Fatal(err)
	}
	if c.URL != u || !strings.HasPrefix(c.FinalURL, provider.URL) || c.Name() != "Example Co. Support" {
		t.Fatalf("card = %s %s %s", c.URL, c.FinalURL, c.Name())
	}
}

func TestFetch_HostileServers(t *testing.T) {
	cases := map[string]struct {
		h    http.HandlerFunc
		want string
		is   error
	}{
		"not JSON": {func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("<html>hello</html>")) }, "not an A2A Agent Card", ErrInvalidCard},
		"50 MB": {func(w http.ResponseWriter, r *http.Request) {
			chunk := []byte(strings.Repeat(" ", 1<<20))
			w.Write([]byte("{"))
			for i := 0; i < 50; i++ {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}, "larger than 512 KiB", ErrInvalidCard},
		"404":           {func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }, "HTTP 404", ErrNotFound},
		"500":           {func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) }, "HTTP 500", nil},
		"redirect loop": {func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, r.URL.Path+"x", http.StatusFound) }, "more than 5 redirects", nil},
		"stall mid-body": {func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "1000")
			w.Write([]byte(`{"name":`))
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}, "timed out", nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(tc.h)
			defer srv.Close()
			_, err := Fetch(context.Background(), client(), srv.URL+WellKnownPath)
			text := ""
			if err != nil {
				text = err.Error()
				var d interface{ Detail() string }
				if errors.As(err, &d) {
					text += " " + d.Detail() // the wire detail (--json, --debug)
				}
			}
			if err == nil || !strings.Contains(text, tc.want) {
				t.Fatalf("got %v, want it to mention %q", err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Fatalf("got %v, want errors.Is %v", err, tc.is)
			}
		})
	}
}

// a2a-go v2.4.0 writes scopes as a bare array; the spec writes {"list": []}.
// Both must be read.
func TestSection2_1_AcceptsSDKScopeArrays(t *testing.T) {
	b, _ := os.ReadFile("testdata/card-delegated.json")
	sdkForm := strings.ReplaceAll(string(b), `{"list": []}`, `[]`)
	if sdkForm == string(b) {
		t.Fatal("fixture changed: no {\"list\": []} to replace")
	}
	c, err := Parse([]byte(sdkForm))
	if err != nil || c.PAScheme != "paJwt" || c.Delegation == nil {
		t.Fatalf("%+v %v", c, err)
	}
}

func TestParse_NotAnObject(t *testing.T) {
	for _, body := range []string{`[]`, `"card"`, `42`, `null`} {
		_, err := Parse([]byte(body))
		if err == nil {
			t.Errorf("%s accepted", body)
			continue
		}
		if strings.Contains(err.Error(), "map[") {
			t.Errorf("%s: error names a Go type: %v", body, err)
		}
	}
}

// RFC 6749 §3.3: a scope id is 1*NQCHAR. A card whose delegation scopes
// hold a newline (faking a line of the consent list), a space, a quote or
// a backslash offers no usable delegation; it is a plain card problem.
func TestRFC6749_3_3_ScopeIDsMustBeScopeTokens(t *testing.T) {
	for _, id := range []string{"x\n                 orders:read", "two words", `q"uote`, `back\slash`, "tab\tx", "ünï", ""} {
		m := loadCard(t)
		dc := m["securitySchemes"].(map[string]any)["userDelegation"].(map[string]any)["oauth2SecurityScheme"].(map[string]any)["flows"].(map[string]any)["deviceCode"].(map[string]any)
		dc["scopes"].(map[string]any)[id] = "scope x"
		c, err := parseMap(t, m)
		if err != nil || c.Delegation != nil || len(c.Problems) != 1 || !strings.Contains(c.Problems[0], "characters a scope cannot have") {
			t.Errorf("scope %q: delegation %+v, problems %q, err %v", id, c.Delegation, c.Problems, err)
		}
	}
	for _, id := range []string{"orders:read", "a!#$%&'()*+,-./[]^_`{|}~"} {
		if !ScopeToken(id) {
			t.Errorf("ScopeToken(%q) = false", id)
		}
	}
}

// Hostile re-review: other spellings of a pinned card URL made a new pin
// instead of meeting the old one. CardURL gives one spelling (the pin's
// key) for the forms that only spell the same URL, and refuses the forms
// whose meaning is the server's choice.
func TestCardURL_OneSpellingPerCard(t *testing.T) {
	const want = "http://127.0.0.1:8080/.well-known/agent-card.json"
	for _, arg := range []string{
		"http://127.0.0.1:8080",
		"http://127.0.0.1:8080/.well-known/agent-card.json",
		"http://127.0.0.1:8080//.well-known/agent-card.json",
		"http://127.0.0.1:8080/.well-known//agent-card.json",
		"http://127.0.0.1:8080/.well-known/agent-card.json?",
		"http://127.0.0.1:8080/.well-known/agent-card.json#",
		"http://127.0.0.1:8080/.WELL-KNOWN/agent-card.json",
		"http://127.0.0.1:8080/.Well-Known/Agent-Card.json",
		"http://127.0.0.1:8080/%2Ewell-known/agent-card.json",
		"http://127.0.0.1:8080/?",
	} {
		if got, err := CardURL(arg); err != nil || got != want {
			t.Errorf("CardURL(%q) = %q, %v; want %q", arg, got, err, want)
		}
	}
	for arg, want := range map[string]string{
		"https://Brand.Example.com:443/cards/x.json": "https://brand.example.com/cards/x.json",
		"http://LOCALHOST:80/":                       "http://localhost/.well-known/agent-card.json",
		"https://brand.example.com/cards/X.json":     "https://brand.example.com/cards/X.json",
	} {
		if got, err := CardURL(arg); err != nil || got != want {
			t.Errorf("CardURL(%q) = %q, %v; want %q", arg, got, err, want)
		}
	}
	for _, arg := range []string{
		"http://127.0.0.1:8080/.well-known/../.well-known/agent-card.json",
		"http://127.0.0.1:8080/./.well-known/agent-card.json",
		"http://127.0.0.1:8080/x/%2e%2e/.well-known/agent-card.json",
		"http://127.0.0.1:8080/.well-known/agent-card.json?v=1",
		"http://127.0.0.1:8080/?v=1",
		"http://127.0.0.1:8080/.well-known/agent-card.json#x",
		"http://127.0.0.1:8080/a%2fb/card.json",
	} {
		if got, err := CardURL(arg); !errors.Is(err, ErrBadArgument) {
			t.Errorf("CardURL(%q) = %q, %v; want refused", arg, got, err)
		}
	}
}

// Hostile re-review: an interface URL with a "%2e%2e" segment was accepted
// and pinned by `pact card` and refused only later by send. The card is
// refused up front, with the same path rule.
func TestSection2_1_InterfaceURLWithDotSegmentsRefused(t *testing.T) {
	for _, iface := range []string{"https://p.example/a2a/%2e%2e/other", "https://p.example/a2a/../other", "https://p.example/a2a/./b1", "https://p.example/a2a/%2E/b1"} {
		m := loadCard(t)
		m["supportedInterfaces"] = []any{map[string]any{"url": iface, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}}
		if c, err := parseMap(t, m); err == nil || !strings.Contains(err.Error(), `".." path segment`) {
			t.Errorf("interface %q: card %+v, err %v", iface, c, err)
		}
	}
}

// Issue 31 item 17: hints name a Brand by its origin when its card is at
// the well-known path (what the User typed), and by the card URL otherwise.
func TestIssue31_17_BrandArgIsTheOriginOfAWellKnownCard(t *testing.T) {
	for in, want := range map[string]string{
		"https://brand.example.com/.well-known/agent-card.json":   "https://brand.example.com",
		"http://127.0.0.1:8791/.well-known/agent-card.json":       "http://127.0.0.1:8791",
		"https://brand.example.com/support/agent-card.json":       "https://brand.example.com/support/agent-card.json",
		"https://brand.example.com/a/.well-known/agent-card.json": "https://brand.example.com/a/.well-known/agent-card.json",
	} {
		if got := BrandArg(in); got != want {
			t.Errorf("BrandArg(%s) = %s, want %s", in, got, want)
		}
		if back, err := CardURL(BrandArg(in)); err != nil || back != in {
			t.Errorf("CardURL(BrandArg(%s)) = %s, %v: not the same card", in, back, err)
		}
	}
}
