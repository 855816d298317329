// Package deviceflow is the personal agent's OAuth 2.0 device authorization
// client (RFC 8628) as PACT §5.3 profiles it, plus RFC 8414 authorization
// server metadata (PACT §5.1).
//
// PACT's two rules on top of RFC 8628 are implemented here: the OAuth client
// is the personal agent (client_id = its issuer URL), and it authenticates
// every call (device authorization, each poll, refresh) with a freshly minted
// personal-agent JWT sent as "Authorization: Bearer" (PACT §3.2, §5.3).
//
// Secrets (device codes, access and refresh tokens) are typed [Secret], whose
// String, GoString and JSON forms are redacted, and never appear in errors.
package deviceflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/pact-cli/pact/httpx"
)

// maxBody caps every response body read from an authorization server (bytes).
const maxBody = 1 << 20

// Metadata is RFC 8414 authorization server metadata, as served at a card's
// oauth2MetadataUrl (PACT §5.1). Its JWKSURI publishes the keys that sign
// delegation tokens (§5.4) and receipts (§5.6).
type Metadata struct {
	Issuer                            string   `json:"issuer"`
	DeviceAuthorizationEndpoint       string   `json:"device_authorization_endpoint,omitempty"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	JWKSURI                           string   `json:"jwks_uri"`
	ScopesSupported                   []string `json:"scopes_supported,omitempty"`
	GrantTypesSupported               []string `json:"grant_types_supported,omitempty"`
	ResponseTypesSupported            []string `json:"response_types_supported,omitempty"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported,omitempty"`
}

// SupportsGrantType reports whether grantType is listed in
// grant_types_supported. An absent list means RFC 8414 §2's default
// ("authorization_code", "implicit"), so the device-code grant is then not
// advertised; callers may still try it, since PACT cards name the endpoints.
func (m *Metadata) SupportsGrantType(grantType string) bool {
	for _, g := range m.GrantTypesSupported {
		if g == grantType {
			return true
		}
	}
	return false
}

// FetchMetadata GETs RFC 8414 metadata from metadataURL (a card's
// oauth2MetadataUrl, PACT §5.1) with client (nil means http.DefaultClient).
//
// It checks: HTTP 200 with a JSON object; issuer, token_endpoint and jwks_uri
// present; issuer, every endpoint and jwks_uri are https URLs (plain http only
// on loopback hosts) without fragment or userinfo; and the issuer is exactly
// the one metadataURL was built from, path included (RFC 8414 §3.3, see
// ExpectedIssuer) — so the delegation token's iss, which must equal it
// (PACT §5.4), is bound to the metadata URL the card named. Every failed
// check is reported in one error. Asks for application/json.
func FetchMetadata(ctx context.Context, client *http.Client, metadataURL string) (*Metadata, error) {
	if client == nil {
		client = http.DefaultClient
	}
	if _, err := checkURL(metadataURL); err != nil {
		return nil, fmt.Errorf("deviceflow: metadata URL: %w", err)
	}
	wantIssuer, err := ExpectedIssuer(metadataURL)
	if err != nil {
		return nil, fmt.Errorf("deviceflow: metadata URL: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, metadataURL, nil)
	if err != nil {
		return nil, fmt.Errorf("deviceflow: metadata request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("could not fetch the Brand's login server settings (%s): %w", metadataURL, httpx.Describe(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, fmt.Errorf("could not read the Brand's login server settings (%s): %w", metadataURL, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the Brand's login server settings are not available at %s (status %d)", metadataURL, resp.StatusCode)
	}
	if len(body) > maxBody {
		return nil, fmt.Errorf("the Brand's login server settings at %s are larger than %d bytes", metadataURL, maxBody)
	}
	var md Metadata
	if err := json.Unmarshal(body, &md); err != nil {
		return nil, fmt.Errorf("the Brand's login server settings at %s are not readable: %w", metadataURL, err)
	}
	var problems []string
	if md.Issuer == "" {
		problems = append(problems, "issuer missing")
	} else if _, err := checkURL(md.Issuer); err != nil {
		problems = append(problems, "issuer: "+err.Error())
	} else if md.Issuer != wantIssuer {
		problems = append(problems, fmt.Sprintf("issuer %q is not %q, the issuer the metadata URL was built from (RFC 8414 §3.3)", md.Issuer, wantIssuer))
	}
	for _, f := range []struct{ name, v string }{
		{"token_endpoint", md.TokenEndpoint},
		{"jwks_uri", md.JWKSURI},
	} {
		if f.v == "" {
			problems = append(problems, f.name+" missing")
		} else if _, err := checkURL(f.v); err != nil {
			problems = append(problems, f.name+": "+err.Error())
		}
	}
	if md.DeviceAuthorizationEndpoint != "" {
		if _, err := checkURL(md.DeviceAuthorizationEndpoint); err != nil {
			problems = append(problems, "device_authorization_endpoint: "+err.Error())
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("the Brand's login server settings at %s are not usable: %s", metadataURL, strings.Join(problems, "; "))
	}
	return &md, nil
}

// WellKnownSuffix is the RFC 8414 well-known URI suffix.
const WellKnownSuffix = "/.well-known/oauth-authorization-server"

// ExpectedIssuer is the issuer identifier a metadata URL was built from
// (RFC 8414 §3.1, §3.3): for the form PACT cards use (§5.1),
// {issuer}/.well-known/oauth-authorization-server, the URL without that
// suffix; for the RFC 8414 §3.1 form,
// {origin}/.well-known/oauth-authorization-server{path}, the origin followed
// by the path. A URL in neither form, or with a query or fragment, is an
// error: its metadata cannot be bound to an issuer.
func ExpectedIssuer(metadataURL string) (string, error) {
	u, err := url.Parse(metadataURL)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("%q is not an absolute URL", metadataURL)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("%q has a query or fragment; RFC 8414 metadata URLs have neither", metadataURL)
	}
	origin := u.Scheme + "://" + u.Host
	p := u.EscapedPath()
	switch {
	case strings.HasPrefix(p, WellKnownSuffix+"/"): // RFC 8414 §3.1: inserted after the host
		return origin + strings.TrimPrefix(p, WellKnownSuffix), nil
	case strings.HasSuffix(p, WellKnownSuffix): // PACT §5.1: appended to the issuer
		return origin + strings.TrimSuffix(p, WellKnownSuffix), nil
	}
	return "", fmt.Errorf("%q is not an RFC 8414 metadata URL (it must contain %s)", metadataURL, WellKnownSuffix)
}

// checkURL parses raw as an absolute https URL (http allowed for loopback
// hosts only) with no fragment and no user info.
func checkURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%q is not a URL", raw)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("%q is not an absolute URL", raw)
	}
	if u.User != nil {
		return nil, fmt.Errorf("%q carries user info", u.Redacted())
	}
	if u.Fragment != "" {
		return nil, fmt.Errorf("%q has a fragment", raw)
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !httpx.IsLoopback(u.Hostname()) {
			return nil, fmt.Errorf("%q uses plain http on a non-loopback host", raw)
		}
	default:
		return nil, fmt.Errorf("%q is not https", raw)
	}
	return u, nil
}

var errNilClient = errors.New("deviceflow: Client.PAToken is nil: every call needs a fresh personal-agent JWT (PACT §5.3)")
