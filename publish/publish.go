// Package publish puts a personal agent's identity on the internet and
// checks it is there: the static site `pact jwks export` writes (OIDC
// discovery metadata and the JWKS, PACT §3.1) and the live view of both, as
// a Provider fetches them, that `pact key activate`, `pact key list` and
// `pact doctor` compare with the profile.
package publish

import (
	"bytes"
	"context"
	"crypto"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-jose/go-jose/v4"

	"github.com/pact-cli/pact/httpx"
	"github.com/pact-cli/pact/jwks"
	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/store"
)

// File is one file of the exported site.
type File struct {
	// Path is the file on disk (under the export folder).
	Path string `json:"path"`
	// Rel is Path relative to the export folder, with slashes.
	Rel string `json:"rel"`
	// URL is where it must answer once uploaded ("" for .nojekyll).
	URL string `json:"url"`
	// ContentType is the Content-Type it must be served with.
	ContentType string `json:"contentType"`
	// Changed is false when the file already held this content and was
	// left alone.
	Changed bool `json:"changed"`
}

// Site renders the two documents of the static site: the public JWKS (every
// key of the profile not retired: active, staged and previously active, with
// public members only) and the OpenID discovery metadata {"issuer",
// "jwks_uri"} (PACT §3.1). Both end with a newline.
func Site(c *profile.Config) (jwksDoc, discoveryDoc []byte, err error) {
	set := jwks.Public(c.JWKS().Keys...)
	if jwksDoc, err = json.MarshalIndent(set, "", "  "); err != nil {
		return nil, nil, err
	}
	if discoveryDoc, err = json.MarshalIndent(jwks.Discovery{Issuer: c.Issuer, JWKSURI: c.JWKSURI}, "", "  "); err != nil {
		return nil, nil, err
	}
	if leaks := PrivateMembers(jwksDoc); len(leaks) > 0 {
		return nil, nil, fmt.Errorf("refusing to export: the key set holds private members %v", leaks)
	}
	return append(jwksDoc, '\n'), append(discoveryDoc, '\n'), nil
}

// Export writes the static site for c into dir (created if needed):
//
//	dir/.well-known/openid-configuration   must answer at {issuer}/.well-known/openid-configuration
//	dir/.well-known/jwks.json              must answer at the jwks_uri
//	dir/.nojekyll                          empty; makes GitHub Pages publish the dot-folder
//
// Files are written atomically and only when their content changed, so
// running it again is harmless. Other files in dir are left alone.
func Export(dir string, c *profile.Config) ([]File, error) {
	jwksDoc, discoDoc, err := Site(c)
	if err != nil {
		return nil, err
	}
	files := []struct {
		rel, url, ctype string
		data            []byte
	}{
		{".well-known/openid-configuration", jwks.DiscoveryURL(c.Issuer), "application/json", discoDoc},
		{".well-known/jwks.json", c.JWKSURI, "application/json", jwksDoc},
		{".nojekyll", "", "", []byte{}},
	}
	var out []File
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		changed := false
		if old, err := os.ReadFile(p); err != nil || !bytes.Equal(old, f.data) {
			if err := store.WriteFile(p, f.data, 0o644); err != nil {
				return nil, fmt.Errorf("writing %s: %w", p, err)
			}
			changed = true
		}
		out = append(out, File{Path: p, Rel: f.rel, URL: f.url, ContentType: f.ctype, Changed: changed})
	}
	return out, nil
}

// privateMembers are the JWK members that hold private or symmetric key
// material (RFC 7518 §6.2.2, §6.3.2, §6.4.1).
var privateMembers = []string{"d", "p", "q", "dp", "dq", "qi", "oth", "k"}

// PrivateMembers lists "kid: member" for every private member in a JWKS
// document (nil when there is none or the document is not a key set).
func PrivateMembers(doc []byte) []string {
	var set struct {
		Keys []map[string]json.RawMessage `json:"keys"`
	}
	if json.Unmarshal(doc, &set) != nil {
		return nil
	}
	var out []string
	for i, k := range set.Keys {
		kid := fmt.Sprintf("key %d", i)
		if raw, ok := k["kid"]; ok {
			var s string
			if json.Unmarshal(raw, &s) == nil && s != "" {
				kid = s
			}
		}
		for _, m := range privateMembers {
			if _, ok := k[m]; ok {
				out = append(out, kid+": "+m)
			}
		}
	}
	return out
}

// Live is what a Provider finds on the internet for a profile.
type Live struct {
	// DiscoveryURL is {issuer}/.well-known/openid-configuration.
	DiscoveryURL string
	// Discovery is the metadata found there (nil when DiscoveryErr).
	Discovery            *jwks.Discovery
	DiscoveryErr         error
	DiscoveryContentType string
	// JWKSURI is the jwks_uri fetched: the profile's.
	JWKSURI         string
	Keys            *jose.JSONWebKeySet // nil when JWKSErr
	JWKSErr         error
	JWKSContentType string
	// Private lists private members found in the live JWKS ("kid: d").
	Private []string
}

// MaxDocument caps each document fetched (the JWKS cap).
const MaxDocument = jwks.MaxSize

// FetchJWKS fetches only the live JWKS at c.JWKSURI (for `key activate`
// and `key list`), with client (an httpx client, so https is required off
// loopback). The request is never served from a cache.
func FetchJWKS(ctx context.Context, client *http.Client, c *profile.Config) *Live {
	l := &Live{JWKSURI: c.JWKSURI}
	body, ctype, err := get(ctx, client, c.JWKSURI)
	l.JWKSContentType = ctype
	if err != nil {
		l.JWKSErr = err
		return l
	}
	l.Private = PrivateMembers(body)
	if len(l.Private) > 0 {
		l.JWKSErr = fmt.Errorf("the JWKS at %s holds private key members (%s): remove them from the published file at once and make new keys", c.JWKSURI, strings.Join(l.Private, ", "))
		return l
	}
	set, err := jwks.Parse(body)
	if err != nil {
		l.JWKSErr = fmt.Errorf("the JWKS at %s: %w", c.JWKSURI, err)
		return l
	}
	l.Keys = set
	return l
}

// Fetch fetches both documents as an open Provider would (PACT §3.1): the
// discovery metadata at {issuer}/.well-known/openid-configuration, then the
// JWKS at the profile's jwks_uri.
func Fetch(ctx context.Context, client *http.Client, c *profile.Config) *Live {
	l := FetchJWKS(ctx, client, c)
	l.DiscoveryURL = jwks.DiscoveryURL(c.Issuer)
	body, ctype, err := get(ctx, client, l.DiscoveryURL)
	l.DiscoveryContentType = ctype
	if err != nil {
		l.DiscoveryErr = err
		return l
	}
	var d jwks.Discovery
	if err := json.Unmarshal(body, &d); err != nil {
		l.DiscoveryErr = fmt.Errorf("%s is not JSON metadata: %v", l.DiscoveryURL, err)
		return l
	}
	l.Discovery = &d
	switch {
	case d.Issuer != c.Issuer:
		l.DiscoveryErr = fmt.Errorf("%s says issuer %q, not %q: Providers compare it exactly", l.DiscoveryURL, d.Issuer, c.Issuer)
	case d.JWKSURI != c.JWKSURI:
		l.DiscoveryErr = fmt.Errorf("%s points to jwks_uri %q, not this profile's %q", l.DiscoveryURL, d.JWKSURI, c.JWKSURI)
	}
	return l
}

// ErrNotLive means a key is not (or not the same) in the live JWKS; Has's
// errors match it.
var ErrNotLive = errors.New("key not published at the jwks_uri")

type notLiveError struct{ msg string }

func (e *notLiveError) Error() string        { return e.msg }
func (e *notLiveError) Is(target error) bool { return target == ErrNotLive }

// Has reports whether the live JWKS carries k with the same public key
// (same RFC 7638 thumbprint); the error says what is wrong (ErrNotLive, or
// the fetch failure).
func (l *Live) Has(k profile.KeyInfo) error {
	if l.JWKSErr != nil {
		return l.JWKSErr
	}
	pub := k.Public.Public()
	want, err := pub.Thumbprint(crypto.SHA256)
	if err != nil {
		return err
	}
	for _, lk := range l.Keys.Keys {
		if lk.KeyID != k.KID {
			continue
		}
		got, err := lk.Thumbprint(crypto.SHA256)
		if err != nil || !bytes.Equal(got, want) {
			return &notLiveError{fmt.Sprintf("%s serves a different public key under kid %s", l.JWKSURI, k.KID)}
		}
		return nil
	}
	return &notLiveError{fmt.Sprintf("%s does not serve kid %s yet", l.JWKSURI, k.KID)}
}

// IsJSON reports whether a Content-Type is application/json or +json.
func IsJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

func get(ctx context.Context, client *http.Client, raw string) ([]byte, string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, "", fmt.Errorf("%q: %w", raw, err)
	}
	if err := httpx.CheckURL(u); err != nil {
		return nil, "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Cache-Control", "no-cache")
	resp, err := client.Do(req)
	if err != nil {
		return nil, "", fmt.Errorf("%s is unreachable: %w", raw, httpx.Describe(err))
	}
	defer resp.Body.Close()
	ctype := resp.Header.Get("Content-Type")
	if resp.StatusCode != http.StatusOK {
		return nil, ctype, fmt.Errorf("%s answered HTTP %d", raw, resp.StatusCode)
	}
	body, err := httpx.ReadBody(resp.Body, MaxDocument)
	if err != nil {
		return nil, ctype, fmt.Errorf("%s: %w", raw, err)
	}
	return body, ctype, nil
}
