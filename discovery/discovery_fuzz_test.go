package discovery

import (
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pact-cli/pact/httpx"
)

// FuzzCardURL checks the brand-argument rules of the CLI contract as
// properties: whatever CardURL accepts is an absolute URL that passes
// httpx.CheckURL (https, or http to loopback), carries no credentials or
// fragment, has a path ending in ".json", and is a fixed point (resolving
// the result again gives the same URL).
func FuzzCardURL(f *testing.F) {
	for _, s := range []string{
		"brand.example.com", "Brand.Example.com", "brand.example.com:8443", "localhost", "localhost:7100",
		"https://brand.example.com", "https://brand.example.com/", "http://127.0.0.1:8080", "http://[::1]:9/",
		"https://registry.example.org/cards/x.json", "https://h/x.json?q=1#frag", "http://brand.example.com",
		"ftp://brand.example.com", "https://user:pw@brand.example", "127.0.0.1", "::1", "a..b", "xn--bcher-kva.example",
		"https://brand.example.com/%2e%2e/x.json", "http://127.0.0.1:99999", "brand.example.com:abc", "", " ", "\x00",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		got, err := CardURL(arg)
		if err != nil {
			if got != "" {
				t.Fatalf("CardURL(%q) returned %q with error %v", arg, got, err)
			}
			return
		}
		u, perr := url.Parse(got)
		if perr != nil {
			t.Fatalf("CardURL(%q) = %q, which does not parse: %v", arg, got, perr)
		}
		if u.Host == "" || u.User != nil || u.Fragment != "" {
			t.Fatalf("CardURL(%q) = %q: host %q, user %v, fragment %q", arg, got, u.Host, u.User, u.Fragment)
		}
		if err := httpx.CheckURL(u); err != nil {
			t.Fatalf("CardURL(%q) = %q fails httpx.CheckURL: %v", arg, got, err)
		}
		if !strings.HasSuffix(u.Path, ".json") {
			t.Fatalf("CardURL(%q) = %q: path %q does not end in .json", arg, got, u.Path)
		}
		again, err := CardURL(got)
		if err != nil || again != got {
			t.Fatalf("CardURL(%q) = %q but CardURL(%q) = %q, %v", arg, got, got, again, err)
		}
	})
}

// FuzzParse checks §2.1 as properties of Parse: it never panics, and a card
// it accepts always has an absolute InterfaceURL that passes httpx.CheckURL
// (no trailing slash), a PA-JWT scheme name, the decoded card, and Raw
// holding exactly the bytes received.
func FuzzParse(f *testing.F) {
	if b, err := os.ReadFile("testdata/card-delegated.json"); err == nil {
		f.Add(b)
	}
	for _, s := range []string{
		`{}`, `null`, `[]`, `{"supportedInterfaces":null}`,
		`{"supportedInterfaces":[{"url":"http://127.0.0.1:1/a2a/b/","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"}],"securitySchemes":{"p":{"httpAuthSecurityScheme":{"scheme":"bearer","bearerFormat":"JWT"}}},"securityRequirements":[{"schemes":{"p":{"list":[]}}}]}`,
		`{"supportedInterfaces":[{"url":"http://brand.example.com/a2a","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"}]}`,
		`{"supportedInterfaces":[null,{"url":"https://x/a","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"}],"securitySchemes":{"p":{"httpAuthSecurityScheme":{"scheme":"Bearer","bearerFormat":"JWT"}}},"securityRequirements":[{"p":[]}]}`,
		`{"securitySchemes":{"u":{"oauth2SecurityScheme":{"flows":{"deviceCode":{"scopes":["a","b"]}}}}}}`,
		"{\"name\":\"\xff\xfe\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err != nil {
			if c != nil {
				t.Fatalf("Parse returned a card with error %v", err)
			}
			return
		}
		if c.Card == nil || c.InterfaceURL == "" || c.PAScheme == "" {
			t.Fatalf("accepted card without Card/InterfaceURL/PAScheme: %+v", c)
		}
		u, perr := url.Parse(c.InterfaceURL)
		if perr != nil || u.Host == "" {
			t.Fatalf("InterfaceURL %q is not absolute: %v", c.InterfaceURL, perr)
		}
		if err := httpx.CheckURL(u); err != nil {
			t.Fatalf("InterfaceURL %q fails httpx.CheckURL: %v", c.InterfaceURL, err)
		}
		if strings.HasSuffix(c.InterfaceURL, "/") {
			t.Fatalf("InterfaceURL %q keeps a trailing slash", c.InterfaceURL)
		}
		if string(c.Raw) != string(data) {
			t.Fatalf("Raw differs from the bytes received")
		}
		if _, ok := c.Card.SecuritySchemes[a2a.SecuritySchemeName(c.PAScheme)]; !ok {
			t.Fatalf("PAScheme %q is not among the card's security schemes", c.PAScheme)
		}
		if d := c.Delegation; d != nil {
			_ = d.ScopeIDs()
		}
	})
}
