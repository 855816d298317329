// Package discovery turns a brand argument into a Brand's Agent Card and
// checks the card against PACT §2.1 (and reads the §5.1 delegation scheme
// when the Brand offers one).
//
// The brand argument has three forms (CLI contract):
//
//	brand.example.com                       → https://brand.example.com/.well-known/agent-card.json
//	https://brand.example.com, http://127.0.0.1:8080 → {origin}/.well-known/agent-card.json
//	https://host/any/path/card.json         → used as given
//
// Plain http is accepted only for loopback hosts; redirects follow httpx's
// policy (at most 5, never https→http).
package discovery

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pact-cli/pact/errs"
	"github.com/pact-cli/pact/httpx"
)

// WellKnownPath is where a Brand's domain serves (or redirects to) its card.
const WellKnownPath = "/.well-known/agent-card.json"

// MaxCardSize is the largest card read (512 KiB).
const MaxCardSize = 512 << 10

// ErrBadArgument wraps errors about the brand argument itself (exit 2).
var ErrBadArgument = errors.New("invalid brand")

// ErrNotFound means the card URL answered 404 (exit 5).
var ErrNotFound = errors.New("no Agent Card")

// ErrInvalidCard wraps every reason a fetched card is unusable (exit 1).
var ErrInvalidCard = errors.New("invalid Agent Card")

// Compiled on first use, not at package init: every pact process pays for
// package init (issue 21).
var domainPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)
})

// CardURL resolves a brand argument to the URL of its Agent Card. Errors wrap
// ErrBadArgument, or httpx.ErrInsecureURL for plain http to a non-loopback host.
func CardURL(arg string) (string, error) {
	arg = strings.TrimSpace(arg)
	if arg == "" {
		return "", fmt.Errorf("%w: empty brand; give a domain (brand.example.com), an origin (https://brand.example.com) or a card URL ending in .json", ErrBadArgument)
	}
	if !strings.Contains(arg, "://") {
		host := strings.ToLower(arg)
		h := host
		if hh, port, err := net.SplitHostPort(host); err == nil && port != "" {
			h = hh
		}
		if strings.ContainsAny(arg, "/?#@ ") || (!domainPattern().MatchString(h) && net.ParseIP(h) == nil) || !strings.Contains(h, ".") && h != "localhost" {
			return "", fmt.Errorf("%w: %q is not a domain name; give a domain (brand.example.com), an origin (https://brand.example.com) or a card URL ending in .json", ErrBadArgument, arg)
		}
		out := "https://" + host + WellKnownPath
		if _, err := url.Parse(out); err != nil { // e.g. a non-numeric port
			return "", fmt.Errorf("%w: %q is not a domain name with an optional numeric port", ErrBadArgument, arg)
		}
		return out, nil
	}
	u, err := url.Parse(arg)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("%w: %q is not a valid URL", ErrBadArgument, arg)
	}
	if u.User != nil {
		return "", fmt.Errorf("%w: %q must not carry credentials", ErrBadArgument, arg)
	}
	if err := httpx.CheckURL(u); err != nil {
		return "", errs.New(err.Error(), ErrBadArgument, err)
	}
	if err := canonicalCardURL(u); err != nil {
		return "", fmt.Errorf("%w: %q %v", ErrBadArgument, arg, err)
	}
	switch {
	case u.Path == "" || u.Path == "/":
		u.Path = WellKnownPath
	case strings.HasSuffix(u.Path, ".json"):
	default:
		return "", fmt.Errorf("%w: %q is neither an origin nor a card URL ending in .json", ErrBadArgument, arg)
	}
	return u.String(), nil
}

// BrandArg is the shortest brand argument that names cardURL, for the
// commands hints print: the origin when cardURL is that origin's
// well-known card (https://brand.example.com/.well-known/agent-card.json →
// https://brand.example.com, which CardURL maps back to it), else cardURL
// itself. A User who typed an origin reads it back as typed.
func BrandArg(cardURL string) string {
	u, err := url.Parse(cardURL)
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Path != WellKnownPath {
		return cardURL
	}
	origin := u.Scheme + "://" + u.Host
	if back, err := CardURL(origin); err != nil || back != cardURL {
		return cardURL
	}
	return origin
}

// canonicalCardURL makes u the one spelling of its card URL, which is also
// the key of the Brand's pin: another spelling of a pinned card must meet
// its pin, not make a new one. Forms that only spell the same URL are
// normalised: host in lower case, the scheme's default port dropped, "//"
// in the path collapsed to "/", a "/.well-known/" written in another case
// lower-cased (RFC 8615 names are lower case), an empty query ("?") or
// fragment ("#") dropped, percent-encoding of plain characters decoded.
// Forms whose meaning is the server's choice are refused: dot segments
// ("." or "..", also written %2e), an encoded slash (%2f), a query, a
// fragment.
func canonicalCardURL(u *url.URL) error {
	switch {
	case u.RawQuery != "":
		return errors.New("has a query (?…); give the card URL without one")
	case u.Fragment != "":
		return errors.New("has a fragment (#…); give the card URL without one")
	case strings.Contains(strings.ToLower(u.EscapedPath()), "%2f"):
		return errors.New("has an encoded slash (%2f) in its path")
	}
	u.ForceQuery, u.RawFragment = false, ""
	if dotSegment(u) {
		return errors.New("has dot segments (/./ or /../) in its path; give the card URL without them")
	}
	for strings.Contains(u.Path, "//") {
		u.Path = strings.ReplaceAll(u.Path, "//", "/")
	}
	if first, rest, ok := strings.Cut(strings.TrimPrefix(u.Path, "/"), "/"); ok && strings.EqualFold(first, ".well-known") {
		u.Path = "/.well-known/" + rest
		if strings.EqualFold(u.Path, WellKnownPath) {
			u.Path = WellKnownPath
		}
	}
	u.RawPath = ""
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if (u.Scheme == "https" && port == "443") || (u.Scheme == "http" && port == "80") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	u.Host = host
	return nil
}

// InvalidCardError is a card that was fetched but cannot be used: too
// large, not JSON, or failing the §2.1 checks. Raw holds the card as
// received when it is a JSON object (for `pact card --json`). It matches
// ErrInvalidCard.
type InvalidCardError struct {
	URL, FinalURL string
	Raw           json.RawMessage
	Reason        string
	// Signature is set when the card was refused for its signatures
	// (A2A §8.4): what was found, with the problems.
	Signature *Signature
	// HTTPStatus and ContentType are the response's, when the card was
	// fetched (0 and "" for a kept copy checked again).
	HTTPStatus  int
	ContentType string
	// HTML: the body is a web page (an HTML document), not JSON: the
	// address is a site's page rather than its Agent Card.
	HTML bool
}

func (e *InvalidCardError) Error() string {
	if e.HTML {
		return fmt.Sprintf("%s answered with an HTML page (a web page), not an Agent Card: check the brand's domain or card URL", e.FinalURL)
	}
	return fmt.Sprintf("%v at %s: %s", ErrInvalidCard, e.FinalURL, e.Reason)
}

// Detail is the response as the wire had it (for --json and --debug):
// "GET URL: HTTP 200, Content-Type text/html", and the reason when Error
// does not say it (an HTML page).
func (e *InvalidCardError) Detail() string {
	if e.HTTPStatus == 0 {
		return ""
	}
	d := fmt.Sprintf("GET %s: HTTP %d", e.FinalURL, e.HTTPStatus)
	if e.ContentType != "" {
		d += ", Content-Type " + e.ContentType
	}
	if e.HTML {
		d += ": " + e.Reason
	}
	return d
}

// ResponseStatus is the HTTP status the card was served with (0: none).
func (e *InvalidCardError) ResponseStatus() int { return e.HTTPStatus }

// Is makes errors.Is(err, ErrInvalidCard) true.
func (e *InvalidCardError) Is(target error) bool { return target == ErrInvalidCard }

// Delegation is the §5.1 delegated-authority scheme of a card.
type Delegation struct {
	Scheme                 string            `json:"-"`
	Scopes                 map[string]string `json:"scopes"` // id → description, shown verbatim
	DeviceAuthorizationURL string            `json:"deviceAuthorizationUrl"`
	TokenURL               string            `json:"tokenUrl"`
	OAuth2MetadataURL      string            `json:"oauth2MetadataUrl"`
}

// ScopeIDs returns the scope ids sorted.
func (d *Delegation) ScopeIDs() []string {
	ids := make([]string, 0, len(d.Scopes))
	for id := range d.Scopes {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Card is a fetched and checked Agent Card.
type Card struct {
	URL          string          // the card URL asked for
	FinalURL     string          // where it was served after redirects
	Raw          json.RawMessage // the card as received
	Card         *a2a.AgentCard
	InterfaceURL string      // of the HTTP+JSON 1.0 interface (§2.1)
	PAScheme     string      // name of the PA-JWT security scheme
	Delegation   *Delegation // nil when the Brand offers no delegation (§5.1)
	Problems     []string    // findings that do not prevent identity-only use
	// Signature is what Fetch found of the card's signatures (A2A §8.4);
	// nil for a card only parsed (Parse), never nil after Fetch.
	Signature *Signature
}

// Name is the card's name, or the card URL's host.
func (c *Card) Name() string {
	if c.Card != nil && strings.TrimSpace(c.Card.Name) != "" {
		return c.Card.Name
	}
	if u, err := url.Parse(c.URL); err == nil {
		return u.Host
	}
	return c.URL
}

// Fetch GETs the card at cardURL with client (an httpx client), checks it
// with Parse and verifies its signatures (Verify, A2A §8.4). A card with
// signatures none of which verifies is refused. Errors wrap ErrNotFound
// (404), ErrInvalidCard, or describe the transport failure (timeouts,
// redirects, size).
func Fetch(ctx context.Context, client *http.Client, cardURL string) (*Card, error) {
	card, _, err := fetch(ctx, client, cardURL)
	return card, err
}

// fetch is Fetch, also returning how long the response may be reused.
func fetch(ctx context.Context, client *http.Client, cardURL string) (*Card, time.Duration, error) {
	card, h, _, err := fetchIf(ctx, client, cardURL, "", "")
	if err != nil {
		return nil, 0, err
	}
	return card, freshness(h), nil
}

// fetchIf is fetch made conditional by the validators of a kept copy
// (If-None-Match, If-Modified-Since; RFC 9110 §13.1): notModified reports a
// 304 answer, and then card is nil (the caller checks its kept copy, see
// Cache). h is the response's header.
func fetchIf(ctx context.Context, client *http.Client, cardURL, etag, lastModified string) (card *Card, h http.Header, notModified bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cardURL, nil)
	if err != nil {
		return nil, nil, false, fmt.Errorf("%w: %v", ErrBadArgument, err)
	}
	req.Header.Set("Accept", "application/json")
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	if lastModified != "" {
		req.Header.Set("If-Modified-Since", lastModified)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, false, fmt.Errorf("could not fetch the Brand's Agent Card (%s): %w", hostOf(cardURL), httpx.Describe(err))
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotModified && (etag != "" || lastModified != ""):
		return nil, resp.Header, true, nil
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		return nil, nil, false, &StatusError{URL: resp.Request.URL.String(), StatusCode: resp.StatusCode}
	case resp.StatusCode != http.StatusOK:
		return nil, nil, false, &StatusError{URL: resp.Request.URL.String(), StatusCode: resp.StatusCode}
	}
	final := resp.Request.URL.String()
	ctype := resp.Header.Get("Content-Type")
	data, err := httpx.ReadBody(resp.Body, MaxCardSize)
	if err != nil {
		return nil, nil, false, &InvalidCardError{URL: cardURL, FinalURL: final, Reason: err.Error(), HTTPStatus: resp.StatusCode, ContentType: ctype}
	}
	card, err = checkCard(ctx, client, cardURL, final, data)
	if err != nil {
		var ice *InvalidCardError
		if errors.As(err, &ice) {
			ice.HTTPStatus, ice.ContentType = resp.StatusCode, ctype
			ice.HTML = ice.HTML || (ice.Raw == nil && isHTMLType(ctype))
		}
		return nil, nil, false, err
	}
	return card, resp.Header, false, nil
}

// checkCard applies Parse and the signature check (Verify, A2A §8.4) to
// the body of the card at cardURL (reached at final), as fetch does.
func checkCard(ctx context.Context, client *http.Client, cardURL, final string, data []byte) (*Card, error) {
	card, err := Parse(data)
	if err != nil {
		e := &InvalidCardError{URL: cardURL, FinalURL: final, Reason: err.Error(), HTML: looksLikeHTML(data)}
		if len(data) > 0 && data[0] == '{' && json.Valid(data) {
			e.Raw = json.RawMessage(data)
		}
		return nil, e
	}
	card.URL, card.FinalURL = cardURL, final
	sig, err := Verify(ctx, client, cardURL, data)
	if err != nil {
		return nil, &InvalidCardError{URL: cardURL, FinalURL: final, Raw: json.RawMessage(data), Reason: err.Error(), Signature: sig}
	}
	card.Signature = sig
	return card, nil
}

// Parse decodes a card and applies the §2.1 checks: an HTTP+JSON 1.0
// interface chosen by binding and version (never by position) with an
// https (or loopback http) URL, and the PA-JWT httpAuthSecurityScheme
// (Bearer, JWT) listed alone in one securityRequirements entry. A malformed
// §5.1 delegation scheme is reported in Problems, not as an error: identity
// alone still works.
func Parse(data []byte) (*Card, error) {
	var card a2a.AgentCard
	norm, err := normaliseCard(data)
	if err == nil {
		err = json.Unmarshal(norm, &card)
	}
	if err != nil {
		return nil, fmt.Errorf("not an A2A Agent Card: %v", err)
	}
	c := &Card{Raw: json.RawMessage(data), Card: &card}
	var problems []string
	for _, iface := range card.SupportedInterfaces {
		// Binding names are compared case-insensitively ("http+json" is
		// HTTP+JSON; issue 9).
		if iface == nil || !strings.EqualFold(string(iface.ProtocolBinding), string(a2a.TransportProtocolHTTPJSON)) || iface.ProtocolVersion != "1.0" {
			continue
		}
		u, err := url.Parse(iface.URL)
		if err != nil || u.Host == "" {
			problems = append(problems, fmt.Sprintf("HTTP+JSON 1.0 interface URL %q is not absolute", iface.URL))
			continue
		}
		if err := httpx.CheckURL(u); err != nil {
			problems = append(problems, "HTTP+JSON 1.0 interface: "+err.Error())
			continue
		}
		// Endpoints are built by appending to the interface URL
		// (…/message:send); a query or fragment would end up in the middle
		// of the path or be dropped. Refused, not repaired.
		if strings.ContainsAny(iface.URL, "?#") {
			problems = append(problems, fmt.Sprintf("HTTP+JSON 1.0 interface URL %q has a query (?…) or fragment (#…); an interface URL is a plain address to which pact appends the method", u.Redacted()))
			continue
		}
		// The same path rule send applies (profile.CheckEndpoint): a "."
		// or ".." segment, also written %2e, is the server's to resolve and
		// could leave the Provider's registered path; refused at card time
		// so that nothing is pinned that send would refuse.
		if dotSegment(u) {
			problems = append(problems, fmt.Sprintf("HTTP+JSON 1.0 interface URL %q has a \".\" or \"..\" path segment", u.Redacted()))
			continue
		}
		c.InterfaceURL = strings.TrimRight(iface.URL, "/")
		break
	}
	if c.InterfaceURL == "" {
		return nil, fmt.Errorf("no usable supportedInterfaces entry with protocolBinding \"HTTP+JSON\" and protocolVersion \"1.0\"%s", joinProblems(problems))
	}
	for _, req := range card.SecurityRequirements {
		if len(req) != 1 {
			continue
		}
		for name := range req {
			if isPAJWT(card.SecuritySchemes[name]) {
				c.PAScheme = string(name)
			}
		}
	}
	if c.PAScheme == "" {
		return nil, errors.New("no personal-agent JWT scheme: the card must declare an httpAuthSecurityScheme with scheme \"Bearer\" and bearerFormat \"JWT\", listed alone in one securityRequirements entry")
	}
	c.Delegation, problems = delegation(&card, c.PAScheme, problems)
	c.Problems = problems
	return c, nil
}

func isPAJWT(s a2a.SecurityScheme) bool {
	h, ok := s.(a2a.HTTPAuthSecurityScheme)
	if !ok {
		if hp, okp := s.(*a2a.HTTPAuthSecurityScheme); okp && hp != nil {
			h, ok = *hp, true
		}
	}
	return ok && strings.EqualFold(h.Scheme, "Bearer") && strings.EqualFold(h.BearerFormat, "JWT")
}

// delegation finds the §5.1 scheme: an oauth2SecurityScheme with a deviceCode
// flow, named together with the PA-JWT scheme in one requirement entry.
func delegation(card *a2a.AgentCard, paScheme string, problems []string) (*Delegation, []string) {
	for _, req := range card.SecurityRequirements {
		if len(req) != 2 {
			continue
		}
		if _, ok := req[a2a.SecuritySchemeName(paScheme)]; !ok {
			continue
		}
		for name := range req {
			if string(name) == paScheme {
				continue
			}
			o, ok := card.SecuritySchemes[name].(a2a.OAuth2SecurityScheme)
			if !ok {
				if op, okp := card.SecuritySchemes[name].(*a2a.OAuth2SecurityScheme); okp && op != nil {
					o, ok = *op, true
				}
			}
			if !ok {
				continue
			}
			var dc *a2a.DeviceCodeOAuthFlow
			switch f := o.Flows.(type) {
			case a2a.DeviceCodeOAuthFlow:
				dc = &f
			case *a2a.DeviceCodeOAuthFlow:
				dc = f
			}
			if dc == nil {
				problems = append(problems, fmt.Sprintf("delegation scheme %q has no deviceCode flow", name))
				continue
			}
			d := &Delegation{Scheme: string(name), Scopes: dc.Scopes, DeviceAuthorizationURL: dc.DeviceAuthorizationURL,
				TokenURL: dc.TokenURL, OAuth2MetadataURL: o.Oauth2MetadataURL}
			var bad []string
			for label, raw := range map[string]string{"deviceAuthorizationUrl": d.DeviceAuthorizationURL, "tokenUrl": d.TokenURL, "oauth2MetadataUrl": d.OAuth2MetadataURL} {
				u, err := url.Parse(raw)
				if raw == "" || err != nil || u.Host == "" {
					bad = append(bad, label+" is missing or not absolute")
				} else if err := httpx.CheckURL(u); err != nil {
					bad = append(bad, label+": "+err.Error())
				} else if dotSegment(u) {
					bad = append(bad, label+` has a "." or ".." path segment`)
				}
			}
			if len(d.Scopes) == 0 {
				bad = append(bad, "no scopes")
			}
			for id := range d.Scopes {
				if !ScopeToken(id) {
					bad = append(bad, fmt.Sprintf("scope %q holds characters a scope cannot have (spaces, quotes, backslashes or controls)", id))
				}
			}
			if len(bad) > 0 {
				sort.Strings(bad)
				problems = append(problems, fmt.Sprintf("delegation scheme %q unusable: %s", name, strings.Join(bad, "; ")))
				continue
			}
			if d.Scopes == nil {
				d.Scopes = map[string]string{}
			}
			return d, problems
		}
	}
	return nil, problems
}

func joinProblems(p []string) string {
	if len(p) == 0 {
		return ""
	}
	return ": " + strings.Join(p, "; ")
}

// hostOf is rawURL's host, or rawURL when it has none.
func hostOf(rawURL string) string {
	if u, err := url.Parse(rawURL); err == nil && u.Host != "" {
		return u.Host
	}
	return rawURL
}

// looksLikeHTML reports whether a body that should be JSON is an HTML
// document: it starts, after blanks and a byte-order mark, with "<!doctype
// html", "<html", "<head", "<body" or an HTML comment.
func looksLikeHTML(data []byte) bool {
	t := bytes.TrimLeft(bytes.TrimPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("\xef\xbb\xbf")), " \t\r\n")
	if len(t) > 64 {
		t = t[:64]
	}
	t = bytes.ToLower(t)
	for _, p := range []string{"<!doctype html", "<html", "<head", "<body", "<!--"} {
		if bytes.HasPrefix(t, []byte(p)) {
			return true
		}
	}
	return false
}

// isHTMLType reports whether a Content-Type is text/html or XHTML.
func isHTMLType(ctype string) bool {
	mt, _, err := mime.ParseMediaType(ctype)
	return err == nil && (mt == "text/html" || mt == "application/xhtml+xml")
}

// StatusError is a card URL that answered with an error status. A 404 or
// 410 matches ErrNotFound (exit 5).
type StatusError struct {
	URL        string
	StatusCode int
}

// Error says what happened in plain words; Detail has the status.
func (e *StatusError) Error() string {
	switch {
	case e.notFound():
		return fmt.Sprintf("%v at %s: check the brand's domain or card URL", ErrNotFound, e.URL)
	case e.StatusCode >= 500:
		return fmt.Sprintf("could not fetch the Brand's Agent Card at %s: the server failed; try again later", e.URL)
	}
	return fmt.Sprintf("could not fetch the Brand's Agent Card at %s: the server refused; check the brand's domain or card URL", e.URL)
}

// Detail is the status, e.g. "GET https://… : HTTP 503".
func (e *StatusError) Detail() string { return fmt.Sprintf("GET %s: HTTP %d", e.URL, e.StatusCode) }

// ResponseStatus is the HTTP status the card URL answered.
func (e *StatusError) ResponseStatus() int { return e.StatusCode }

func (e *StatusError) notFound() bool {
	return e.StatusCode == http.StatusNotFound || e.StatusCode == http.StatusGone
}

// Is makes a 404 or 410 match ErrNotFound.
func (e *StatusError) Is(target error) bool { return target == ErrNotFound && e.notFound() }

// ScopeToken reports whether id is a scope the OAuth grammar allows (RFC
// 6749 §3.3: scope-token = 1*NQCHAR, NQCHAR = %x21 / %x23-5B / %x5D-7E):
// no space, quote, backslash, control or non-ASCII character. A card
// whose delegation scopes break it offers no usable delegation; it also
// keeps a scope id from faking a line of the consent list.
func ScopeToken(id string) bool {
	if id == "" {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if c < 0x21 || c == '"' || c == '\\' || c > 0x7e {
			return false
		}
	}
	return true
}

// dotSegment reports whether u's path has a "." or ".." segment (u.Path is
// decoded: %2e%2e is ".."), the rule profile.CheckEndpoint applies before
// any credential is sent.
func dotSegment(u *url.URL) bool {
	for _, seg := range strings.Split(u.Path, "/") {
		if seg == "." || seg == ".." {
			return true
		}
	}
	return false
}
