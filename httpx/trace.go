package httpx

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/pact-cli/pact/iostreams"
)

// traceBodyLimit is how much of each body the trace shows.
const traceBodyLimit = 2048

// tracedHeaders are the headers the trace shows; all others are omitted.
var tracedHeaders = []string{
	"Authorization", "X-A2A-User-Delegation", "A2A-Version", "Content-Type",
	"Location", "Retry-After", "WWW-Authenticate", "Cache-Control",
}

// secretFields are JSON members and form fields whose values are never shown.
// Private JWK members (d, p, q, dp, dq, qi) are included.
var secretFields = map[string]bool{
	"access_token": true, "refresh_token": true, "id_token": true, "device_code": true,
	"assertion": true, "password": true, "client_secret": true, "code": true, "token": true,
	"d": true, "p": true, "q": true, "dp": true, "dq": true, "qi": true, "k": true,
}

// jwkPrivate are the private JWK members of secretFields: secret in JSON,
// not as URL parameters.
var jwkPrivate = map[string]bool{"d": true, "p": true, "q": true, "dp": true, "dq": true, "qi": true, "k": true}

// Compiled on first use (--debug), not at package init: every pact process
// pays for package init (issue 21).
var (
	// A compact JWS/JWT anywhere in a string.
	jwtPattern = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`eyJ[A-Za-z0-9_-]{4,}(\.[A-Za-z0-9_-]*){0,2}`)
	})
	// "name": "value" pairs in JSON text, for secret member names; a value
	// cut off by truncation (no closing quote) matches too.
	jsonPairPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`"([A-Za-z_]+)"\s*:\s*"[^"]*("|$)`) })
	// name=value of a URL's query or fragment anywhere in text (a Location
	// header, a link in a body, an error naming a URL), for secret names:
	// after ?, #, & or & escaped as &amp; in HTML; the value runs to the
	// next separator, quote, space or angle bracket.
	queryPairPattern = sync.OnceValue(func() *regexp.Regexp {
		names := make([]string, 0, len(secretFields))
		for n := range secretFields {
			if !jwkPrivate[n] { // "q=", "p=", "k=" in URLs are searches and pages
				names = append(names, regexp.QuoteMeta(n))
			}
		}
		sort.Strings(names)
		return regexp.MustCompile(`([?#&;](?:amp;)?)(` + strings.Join(names, "|") + `)=[^&#;\s"'<>\\]*`)
	})
)

// Redact removes secrets from s: compact JWTs, and the values of JSON members,
// form fields and URL query or fragment parameters (wherever a URL shows)
// named in secretFields. It is used for every trace line and
// is safe on any text.
func Redact(s string) string {
	s = jwtPattern().ReplaceAllString(s, "[redacted JWT]")
	if strings.Contains(s, "=") {
		s = queryPairPattern().ReplaceAllString(s, "${1}${2}=[redacted]")
	}
	s = jsonPairPattern().ReplaceAllStringFunc(s, func(m string) string {
		name := jsonPairPattern().FindStringSubmatch(m)[1]
		if secretFields[name] {
			return fmt.Sprintf("%q: \"[redacted]\"", name)
		}
		return m
	})
	// A bare form ("code=…&state=…"), whose first pair no separator precedes:
	// never a URL, whose pairs the pattern above has seen (read as a form, it
	// came out with its pairs sorted around its scheme and path).
	if k, _, ok := strings.Cut(s, "="); ok && !strings.ContainsAny(s, "{}\n") && !strings.ContainsAny(k, "/?#: ") {
		if v, err := url.ParseQuery(s); err == nil && len(v) > 0 {
			changed := false
			for k := range v {
				if secretFields[k] {
					v[k] = []string{"[redacted]"}
					changed = true
				}
			}
			if changed {
				keys := make([]string, 0, len(v))
				for k := range v {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				parts := make([]string, 0, len(keys))
				for _, k := range keys {
					parts = append(parts, k+"="+strings.Join(v[k], ","))
				}
				s = strings.Join(parts, "&")
			}
		}
	}
	return s
}

// RedactURL renders u for a trace with its secrets removed: the value of
// every query parameter named in secretFields ("?code=…", "access_token=…"),
// any userinfo password, and JWTs anywhere (Redact). Redact alone cannot do
// it: it reads a whole line as a form only when the line is a bare query.
func RedactURL(u *url.URL) string {
	c := *u
	if c.User != nil {
		if _, has := c.User.Password(); has {
			c.User = url.UserPassword(c.User.Username(), "[redacted]")
		}
	}
	if c.RawQuery != "" {
		parts := strings.Split(c.RawQuery, "&")
		for i, p := range parts {
			k, _, hasValue := strings.Cut(p, "=")
			name, err := url.QueryUnescape(k)
			if err != nil {
				name = k
			}
			if hasValue && secretFields[name] {
				parts[i] = k + "=[redacted]"
			}
		}
		c.RawQuery = strings.Join(parts, "&")
	}
	c.Fragment, c.RawFragment = "", "" // never sent; may hold a token (implicit flows)
	return Redact(strings.ReplaceAll(c.String(), "%5Bredacted%5D", "[redacted]"))
}

func redactHeader(name, value string) string {
	switch http.CanonicalHeaderKey(name) {
	case "Authorization", "X-A2a-User-Delegation":
		scheme, _, _ := strings.Cut(value, " ")
		return scheme + " [redacted]"
	}
	return Redact(value)
}

type tracer struct {
	mu   sync.Mutex
	w    io.Writer
	next http.RoundTripper
}

func (t *tracer) RoundTrip(r *http.Request) (*http.Response, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "> %s %s\n", r.Method, RedactURL(r.URL))
	writeHeaders(&b, "> ", r.Header)
	if r.Body != nil && r.GetBody != nil {
		if body, err := r.GetBody(); err == nil {
			data, _ := io.ReadAll(io.LimitReader(body, traceBodyLimit+1))
			body.Close()
			writeBody(&b, "> ", data)
		}
	}
	start := time.Now()
	resp, err := t.next.RoundTrip(r)
	elapsed := time.Since(start).Round(time.Millisecond)
	if err != nil {
		fmt.Fprintf(&b, "< error after %s: %s\n", elapsed, Redact(err.Error()))
		t.emit(b.String())
		return nil, err
	}
	fmt.Fprintf(&b, "< %s (%s)\n", resp.Status, elapsed)
	writeHeaders(&b, "< ", resp.Header)
	if resp.Body != nil && isEventStream(resp.Header) {
		// Reading ahead would hold back an event stream (A2A
		// message:stream) until 2 KiB of it arrived: it is not traced.
		fmt.Fprintf(&b, "< (an event stream: its events are not traced)\n")
	} else if resp.Body != nil {
		head, _ := io.ReadAll(io.LimitReader(resp.Body, traceBodyLimit+1))
		writeBody(&b, "< ", head)
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
	}
	t.emit(b.String())
	return resp, nil
}

// isEventStream reports a text/event-stream response (Server-Sent Events).
func isEventStream(h http.Header) bool {
	mt, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	return mt == "text/event-stream"
}

// emit writes one exchange to the trace. Bodies and headers are remote text
// headed for a terminal (stderr), so they pass through iostreams.Sanitize.
func (t *tracer) emit(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	io.WriteString(t.w, iostreams.Sanitize(s))
}

func writeHeaders(b *strings.Builder, prefix string, h http.Header) {
	for _, name := range tracedHeaders {
		for _, v := range h.Values(name) {
			fmt.Fprintf(b, "%s%s: %s\n", prefix, name, redactHeader(name, v))
		}
	}
}

func writeBody(b *strings.Builder, prefix string, data []byte) {
	if len(data) == 0 {
		return
	}
	more := ""
	if len(data) > traceBodyLimit {
		data, more = data[:traceBodyLimit], " …(truncated)"
	}
	text := strings.ToValidUTF8(string(data), "\uFFFD")
	for _, line := range strings.Split(strings.TrimRight(Redact(text), "\n"), "\n") {
		fmt.Fprintf(b, "%s%s\n", prefix, line)
	}
	if more != "" {
		fmt.Fprintf(b, "%s%s\n", prefix, more)
	}
}
