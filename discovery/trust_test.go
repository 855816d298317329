package discovery

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// Issue 9 (binding names): protocolBinding is compared case-insensitively.
func TestSection2_1_ProtocolBindingComparedCaseInsensitively(t *testing.T) {
	for _, b := range []string{"http+json", "Http+Json", "HTTP+JSON"} {
		m := loadCard(t)
		m["supportedInterfaces"] = []any{map[string]any{"url": "https://p.example/a", "protocolBinding": b, "protocolVersion": "1.0"}}
		c, err := parseMap(t, m)
		if err != nil || c.InterfaceURL != "https://p.example/a" {
			t.Errorf("binding %q: %v", b, err)
		}
	}
}

// Issue 9 (credentials in URLs): an interface URL with userinfo is not
// used, and its password appears nowhere in the error.
func TestIssue9_InterfaceURLWithUserinfoRefused(t *testing.T) {
	m := loadCard(t)
	m["supportedInterfaces"] = []any{map[string]any{"url": "https://user:hunter2@p.example/a", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}}
	_, err := parseMap(t, m)
	if err == nil || !strings.Contains(err.Error(), "user name or password") || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("got %v", err)
	}
	if _, err := CardURL("https://user:pw@p.example/card.json"); !errors.Is(err, ErrBadArgument) {
		t.Fatalf("CardURL with userinfo: %v", err)
	}
}

// Issue 9: delegation endpoints with userinfo make the §5.1 scheme unusable.
func TestIssue9_DelegationEndpointWithUserinfoUnusable(t *testing.T) {
	b := strings.Replace(string(mustJSON(loadCard(t))), "https://provider.example.com/a2a/01J/oauth/token", "https://u:pw@provider.example.com/a2a/01J/oauth/token", 1)
	c, err := Parse([]byte(b))
	if err != nil {
		t.Fatal(err)
	}
	if c.Delegation != nil || !strings.Contains(strings.Join(c.Problems, ";"), "user name or password") {
		t.Fatalf("delegation %+v problems %v", c.Delegation, c.Problems)
	}
}

func mustJSON(m map[string]any) []byte {
	b, _ := json.Marshal(m)
	return b
}

// Trust finding 4: an interface URL with a query or a fragment would build
// a wrong endpoint (…/b?x=1/message:send, or the fragment dropped): the
// interface is refused with a plain message.
func TestSection2_1_InterfaceURLWithQueryOrFragmentRefused(t *testing.T) {
	for _, u := range []string{"https://p.example/a2a/b?x=1", "https://p.example/a2a/b#frag", "https://p.example/a2a/b?", "https://p.example/a2a/b#"} {
		m := loadCard(t)
		m["supportedInterfaces"] = []any{map[string]any{"url": u, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}}
		c, err := parseMap(t, m)
		if err == nil || !strings.Contains(err.Error(), "query (?…) or fragment (#…)") {
			t.Errorf("%s: card accepted (interface %q), err %v", u, func() string {
				if c != nil {
					return c.InterfaceURL
				}
				return ""
			}(), err)
		}
	}
}
