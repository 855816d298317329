package httpx

import (
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
)

// CredentialHeaders are the request headers that carry a credential: the
// personal-agent JWT (PACT §3.2) and the delegation token (§5.5). Neither
// may follow a redirect to another origin.
var CredentialHeaders = []string{"Authorization", "X-A2A-User-Delegation"}

// Origin returns scheme://host:port of u, lower-cased, with the scheme's
// default port made explicit (RFC 6454 §4), so that https://A and
// https://a:443 are the same origin.
func Origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return scheme + "://" + host + ":" + port
}

// SameOrigin reports whether a and b have the same Origin.
func SameOrigin(a, b *url.URL) bool { return Origin(a) == Origin(b) }

// checkCredentialRedirect refuses every redirect of a request that
// carried a credential: a credential header (CredentialHeaders), or a form
// body (an OAuth call: device code, refresh token). Not only across
// origins: a same-origin redirect can lead outside the registered
// Provider's path, to another Provider's interface with another audience,
// or (302/303) turn the POST into a GET that still carries the headers.
// A PA JWT, a delegation token or a form secret goes to the URL it was
// minted or checked for, and nowhere else; no PACT exchange (message:send,
// device authorization, token) needs a redirect. Credential-free GETs
// (cards, metadata, JWKS) follow redirects under the other rules.
func checkCredentialRedirect(first, next *http.Request) error {
	var what []string
	for _, h := range CredentialHeaders {
		if first.Header.Get(h) != "" {
			what = append(what, h)
		}
	}
	if ct, _, _ := mime.ParseMediaType(first.Header.Get("Content-Type")); ct == "application/x-www-form-urlencoded" {
		what = append(what, "a form body (OAuth: device code or refresh token)")
	}
	if len(what) == 0 {
		return nil
	}
	status := ""
	if next.Response != nil {
		status = fmt.Sprintf(" (HTTP %d)", next.Response.StatusCode)
	}
	return &RedirectError{URL: next.URL.Redacted(), Credentialed: true, Reason: fmt.Sprintf(
		"refused: %s answered with a redirect%s, and the request carried credentials (%s) that pact sends only to the URL they were made for, never along a redirect",
		first.URL.Redacted(), status, strings.Join(what, ", "))}
}
