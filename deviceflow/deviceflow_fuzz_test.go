package deviceflow

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/pact-cli/pact/httpx"
)

// bodyTransport answers every request with status and body, without network.
type bodyTransport struct {
	status int
	body   []byte
}

func (b bodyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: b.status, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(string(b.body))), Request: r}, nil
}

const fuzzMetadataURL = "https://as.example.com/.well-known/oauth-authorization-server"

// FuzzFetchMetadata checks RFC 8414 metadata handling (PACT §5.1) as
// properties: any body never panics, and accepted metadata always has an
// issuer on the metadata URL's origin and a token_endpoint, jwks_uri (and
// device_authorization_endpoint when present) that are https or loopback
// http, with no user info or fragment.
func FuzzFetchMetadata(f *testing.F) {
	for _, s := range []string{
		`{"issuer":"https://as.example.com","token_endpoint":"https://as.example.com/token","jwks_uri":"https://as.example.com/jwks.json","device_authorization_endpoint":"https://as.example.com/device","grant_types_supported":["urn:ietf:params:oauth:grant-type:device_code"]}`,
		`{"issuer":"https://evil.example.com","token_endpoint":"https://as.example.com/token","jwks_uri":"https://as.example.com/jwks.json"}`,
		`{"issuer":"https://as.example.com","token_endpoint":"http://as.example.com/token","jwks_uri":"https://as.example.com/j#f"}`,
		`{"issuer":"https://as.example.com","token_endpoint":"https://u:p@as.example.com/t","jwks_uri":"http://127.0.0.1:1/j"}`,
		`{"issuer":"https://AS.example.com:443","token_endpoint":"https://as.example.com/token","jwks_uri":"https://as.example.com/jwks.json"}`,
		`{}`, `[]`, `null`, `{"issuer":1}`,
	} {
		f.Add([]byte(s))
	}
	client := &http.Client{Transport: bodyTransport{status: 200}}
	f.Fuzz(func(t *testing.T, body []byte) {
		client.Transport = bodyTransport{status: 200, body: body}
		md, err := FetchMetadata(context.Background(), client, fuzzMetadataURL)
		if err != nil {
			if md != nil {
				t.Fatalf("metadata returned with error %v", err)
			}
			return
		}
		iu, err := checkURL(md.Issuer)
		if err != nil || iu.Scheme != "https" || iu.Host != "as.example.com" {
			t.Fatalf("accepted issuer %q (origin check): %v", md.Issuer, err)
		}
		for name, v := range map[string]string{"token_endpoint": md.TokenEndpoint, "jwks_uri": md.JWKSURI, "device_authorization_endpoint": md.DeviceAuthorizationEndpoint} {
			if v == "" && name == "device_authorization_endpoint" {
				continue
			}
			u, err := checkURL(v)
			if err != nil {
				t.Fatalf("accepted %s %q: %v", name, v, err)
			}
			if err := httpx.CheckURL(u); err != nil || u.User != nil || u.Fragment != "" {
				t.Fatalf("accepted %s %q: %v", name, v, err)
			}
		}
	})
}

// FuzzTokenResponse checks token-endpoint handling (RFC 6749 §5.1/§5.2,
// PACT §5.3) as properties: parseToken never panics; an accepted token has
// an access token, token_type Bearer and expires_in ≥ 0, and its scope is
// the request when "scope" is omitted; and no error text (parse errors and
// OAuth error responses alike) ever contains the access token, the refresh
// token or the device code, which are secrets.
func FuzzTokenResponse(f *testing.F) {
	for _, s := range []string{
		`{"access_token":"at-0123456789","token_type":"Bearer","expires_in":600,"refresh_token":"rt-0123456789","scope":"orders:read"}`,
		`{"access_token":"at-0123456789","token_type":"bearer"}`,
		`{"access_token":"at-0123456789","token_type":"mac","expires_in":-1}`,
		`{"access_token":"","token_type":"Bearer","expires_in":"x"}`,
		`{"error":"authorization_pending"}`, `{"error":"slow_down","error_description":"device code dc-0123456789 is slow"}`,
		`{"error":"access_denied","error_description":"dc-01234\u000056789"}`,
		`{"error":"dc-0123456789"}`,
		`{"scope":null}`, `{}`, `[]`, `null`, `{"expires_in":1e400}`,
	} {
		f.Add([]byte(s), 400, "dc-0123456789")
	}
	f.Fuzz(func(t *testing.T, body []byte, status int, deviceCode string) {
		requested := []string{"orders:read", "orders:cancel"}
		tok, err := parseToken(body, requested, "old-refresh-token")
		if err == nil {
			if tok.AccessToken == "" || tok.TokenType != "Bearer" || tok.ExpiresIn < 0 {
				t.Fatalf("accepted token: type %q, access empty %v, expires_in %d", tok.TokenType, tok.AccessToken == "", tok.ExpiresIn)
			}
			if tok.ScopeOmitted && strings.Join(tok.Scope, " ") != strings.Join(requested, " ") {
				t.Fatalf("scope omitted but Scope = %q", tok.Scope)
			}
			if tok.RefreshToken == "" {
				t.Fatalf("refresh token lost (the old one must be kept)")
			}
		}
		secrets := []Secret{}
		for _, s := range []Secret{Secret(deviceCode)} {
			if secretLike(s) {
				secrets = append(secrets, s)
			}
		}
		if tok != nil {
			for _, s := range []Secret{tok.AccessToken, tok.RefreshToken} {
				if secretLike(s) {
					secrets = append(secrets, s)
				}
			}
		}
		var texts []string
		if err != nil {
			texts = append(texts, err.Error())
		}
		if rerr := responseError(status, body, secrets...); rerr != nil {
			texts = append(texts, rerr.Error())
		}
		for _, txt := range texts {
			for _, s := range secrets {
				if strings.Contains(txt, s.Reveal()) {
					t.Fatalf("error text %q reveals a secret", txt)
				}
			}
		}
	})
}

// secretLike reports whether s looks like a real credential: at least 9
// characters of the token alphabet (RFC 6749 Appendix A, without spaces or
// brackets). Shorter strings match ordinary text by chance, and "[REDACTED]"
// itself can only be a secret when a secret shares its brackets.
func secretLike(s Secret) bool {
	if len(s) < 9 {
		return false
	}
	for _, r := range s.Reveal() {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-._~+/=", r)) {
			return false
		}
	}
	return true
}
