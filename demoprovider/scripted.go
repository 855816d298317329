package demoprovider

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// ScriptedUser plays the User in a browser, over HTTP, for tests and
// `pact demo`: it opens a verification_uri_complete, signs in on the Brand's
// login form, follows the Brand's POSTed assertion back to the Provider and
// answers the consent page (§5.3). It only reads and submits the HTML forms
// a browser would show; it has no back door into the Provider.
type ScriptedUser struct {
	Username string
	Password string
	// Approve lists the scopes to leave checked on consent; nil approves
	// every requested scope (the page's defaults).
	Approve []string
	// Deny presses Deny instead of Approve.
	Deny bool
	// HTTPClient is the "browser". When it has a cookie Jar, that jar is
	// used, so a Provider session carries over between visits (login is
	// then skipped); otherwise each Visit starts with a fresh jar. nil = a
	// plain client with a 10 s timeout.
	HTTPClient *http.Client
}

// maxPage caps the HTML read per page.
const maxPage = 1 << 20

// Visit follows verificationURIComplete to the end of the consent flow. It
// returns nil once the Provider confirms the approval or denial, and an
// error naming the page otherwise (wrong password, expired code, a scope in
// Approve that the consent page does not offer, …).
func (u ScriptedUser) Visit(ctx context.Context, verificationURIComplete string) error {
	c := &http.Client{Timeout: 10 * time.Second}
	if u.HTTPClient != nil {
		cp := *u.HTTPClient
		c = &cp
	}
	if c.Jar == nil {
		jar, err := cookiejar.New(nil)
		if err != nil {
			return err
		}
		c.Jar = jar
	}
	p, err := fetchPage(ctx, c, http.MethodGet, verificationURIComplete, nil)
	if err != nil {
		return err
	}
	for range 8 {
		forms := parseForms(p.body)
		switch {
		case len(forms) == 0:
			return fmt.Errorf("scripted user: %s: no form on the page (status %d): %s", p.url, p.status, p.text())
		case forms[0].has("password"):
			f := forms[0]
			vals := f.values()
			vals.Set(f.nameOf("password"), u.Password)
			vals.Set(f.nameOf("text"), u.Username)
			if p, err = f.submit(ctx, c, p.url, vals); err != nil {
				return err
			}
			if p.status == http.StatusUnauthorized {
				return fmt.Errorf("scripted user: login refused: %s", p.text())
			}
		case forms[0].hasField("scope"):
			return u.consent(ctx, c, p, forms[0])
		default:
			f := forms[0]
			if p, err = f.submit(ctx, c, p.url, f.values()); err != nil {
				return err
			}
		}
	}
	return errors.New("scripted user: too many pages")
}

// consent fills the consent form and checks the Provider's answer.
func (u ScriptedUser) consent(ctx context.Context, c *http.Client, p *page, f *form) error {
	vals := f.values()
	offered := f.checkboxes("scope")
	if u.Approve != nil && !u.Deny {
		vals.Del("scope")
		for _, sc := range u.Approve {
			if !slices.Contains(offered, sc) {
				return fmt.Errorf("scripted user: consent page does not offer scope %q (offers %v)", sc, offered)
			}
			vals.Add("scope", sc)
		}
	}
	want, button := "Access approved", "approve"
	if u.Deny {
		want, button = "Access denied", "deny"
	}
	name, ok := f.button(button)
	if !ok {
		return fmt.Errorf("scripted user: consent page has no %s button", button)
	}
	vals.Set(name, button)
	res, err := f.submit(ctx, c, p.url, vals)
	if err != nil {
		return err
	}
	if res.status != http.StatusOK || !strings.Contains(res.body, "<h1>"+want+"</h1>") {
		return fmt.Errorf("scripted user: consent not recorded (status %d): %s", res.status, res.text())
	}
	return nil
}

type page struct {
	url    *url.URL
	status int
	body   string
}

// Compiled on first use, not at package init: every pact process pays for
// package init (issue 21).
var tagRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?s)<[^>]*>`) })

// text is the page's visible text, whitespace-collapsed, for errors.
func (p *page) text() string {
	t := html.UnescapeString(tagRe().ReplaceAllString(p.body, " "))
	t = strings.Join(strings.Fields(t), " ")
	if len(t) > 300 {
		t = t[:300] + "…"
	}
	return t
}

func fetchPage(ctx context.Context, c *http.Client, method, target string, form url.Values) (*page, error) {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return nil, err
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("Accept", "text/html")
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scripted user: %s %s: %w", method, target, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxPage))
	if err != nil {
		return nil, err
	}
	return &page{url: resp.Request.URL, status: resp.StatusCode, body: string(b)}, nil
}

// form is an HTML form as a browser sees it.
type form struct {
	method, action string
	fields         []map[string]string // attributes of <input> and <button> elements, in order
}

var (
	// Compiled on first use, not at package init: every pact process pays for
	// package init (issue 21).
	formRe  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?is)<form\b([^>]*)>(.*?)</form>`) })
	fieldRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?is)<(input|button)\b([^>]*)>`) })
	attrRe  = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?s)([a-zA-Z_:-]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+)))?`)
	})
)

func parseAttrs(s string) map[string]string {
	m := map[string]string{}
	for _, a := range attrRe().FindAllStringSubmatch(s, -1) {
		m[strings.ToLower(a[1])] = html.UnescapeString(a[2] + a[3] + a[4])
	}
	return m
}

func parseForms(body string) []*form {
	var out []*form
	for _, fm := range formRe().FindAllStringSubmatch(body, -1) {
		attrs := parseAttrs(fm[1])
		f := &form{method: strings.ToUpper(attrs["method"]), action: attrs["action"]}
		if f.method == "" {
			f.method = http.MethodGet
		}
		for _, fl := range fieldRe().FindAllStringSubmatch(fm[2], -1) {
			a := parseAttrs(fl[2])
			a["<tag>"] = strings.ToLower(fl[1])
			if a["type"] == "" {
				a["type"] = map[string]string{"input": "text", "button": "submit"}[a["<tag>"]]
			}
			f.fields = append(f.fields, a)
		}
		out = append(out, f)
	}
	return out
}

// has reports whether the form has an input of this type.
func (f *form) has(typ string) bool { return f.nameOf(typ) != "" }

// nameOf is the name of the first input of this type.
func (f *form) nameOf(typ string) string {
	for _, a := range f.fields {
		if a["<tag>"] == "input" && a["type"] == typ && a["name"] != "" {
			return a["name"]
		}
	}
	return ""
}

func (f *form) hasField(name string) bool {
	return slices.ContainsFunc(f.fields, func(a map[string]string) bool { return a["name"] == name })
}

// checkboxes lists the values of the checkboxes named name.
func (f *form) checkboxes(name string) []string {
	var out []string
	for _, a := range f.fields {
		if a["type"] == "checkbox" && a["name"] == name {
			out = append(out, a["value"])
		}
	}
	return out
}

// button finds the submit button with this value and returns its name.
func (f *form) button(value string) (string, bool) {
	for _, a := range f.fields {
		if a["<tag>"] == "button" && a["type"] == "submit" && a["value"] == value && a["name"] != "" {
			return a["name"], true
		}
	}
	return "", false
}

// values are the form's successful controls before any button is pressed:
// text, hidden and password inputs, and checked checkboxes.
func (f *form) values() url.Values {
	v := url.Values{}
	for _, a := range f.fields {
		if a["<tag>"] != "input" || a["name"] == "" {
			continue
		}
		switch a["type"] {
		case "checkbox", "radio":
			if _, checked := a["checked"]; checked {
				val := a["value"]
				if val == "" {
					val = "on"
				}
				v.Add(a["name"], val)
			}
		case "submit", "button", "image", "reset", "file":
		default:
			v.Add(a["name"], a["value"])
		}
	}
	return v
}

// submit sends the form as a browser would, relative to the page URL.
func (f *form) submit(ctx context.Context, c *http.Client, base *url.URL, vals url.Values) (*page, error) {
	ref, err := url.Parse(f.action)
	if err != nil {
		return nil, fmt.Errorf("scripted user: bad form action %q", f.action)
	}
	target := base.ResolveReference(ref)
	if f.method == http.MethodPost {
		return fetchPage(ctx, c, http.MethodPost, target.String(), vals)
	}
	target.RawQuery = vals.Encode()
	return fetchPage(ctx, c, http.MethodGet, target.String(), nil)
}

// DemoUsers are the usernames of the demo Brands' accounts (the same on
// every Brand), for `pact demo approve` and the login page.
func DemoUsers() []string { return []string{"jane", "omar"} }

// DemoPassword is the password of the demo account username ("jane",
// "omar"); false for any other name. The demo's passwords are public:
// they are printed by `pact demo serve` and on its login page.
func DemoPassword(username string) (string, bool) {
	for _, b := range newBrands()[:1] {
		for _, u := range b.users {
			if u.username == username {
				return u.password, true
			}
		}
	}
	return "", false
}
