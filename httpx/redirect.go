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

// checkCredentialRedirect refuses a redirect to another origin of a request
// that carried a credential: a credential header (CredentialHeaders), or a
// form body (an OAuth call: device code, refresh token). Go's client drops
// only Authorization and cookies on such a redirect and re-sends custom
// headers and, on 307/308, the body. Same-origin redirects are allowed.
func checkCredentialRedirect(first, next *http.Request) error {
	if SameOrigin(first.URL, next.URL) {
		return nil
	}
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
	return &RedirectError{URL: next.URL.Redacted(), Reason: fmt.Sprintf(
		"refused: %s answered with a redirect to another server (%s), and the request carried credentials (%s) that must go to %s only",
		displayOrigin(first.URL), displayOrigin(next.URL), strings.Join(what, ", "), displayOrigin(first.URL))}
}

// displayOrigin is scheme://host[:port] as people write it.
func displayOrigin(u *url.URL) string {
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host)
}
