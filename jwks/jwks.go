// Package jwks handles JSON Web Key Sets (RFC 7517): the public set a
// personal agent publishes at its jwks_uri (PACT §3.1), the HTTP handler that
// serves it together with OIDC discovery metadata, and the fetching cache
// that verifiers use (Providers for PA JWTs, pact for delegation tokens and
// receipts, PACT §5.4, §5.6).
package jwks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/pact-cli/pact/httpx"
)

// MaxSize is the largest JWKS document fetched (256 KiB).
const MaxSize = 256 << 10

// Public returns a set holding only the public halves of keys, in order.
// Keys without a public half (symmetric keys) are skipped.
func Public(keys ...jose.JSONWebKey) jose.JSONWebKeySet {
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{}}
	for _, k := range keys {
		if _, sym := k.Key.([]byte); sym {
			continue
		}
		pub := k.Public()
		if pub.Key == nil {
			continue
		}
		set.Keys = append(set.Keys, pub)
	}
	return set
}

// Parse decodes a JWKS document key by key (RFC 7517 §5: "keys" is an
// array of JWKs). A key that cannot be used is skipped, not fatal: one of a
// type go-jose does not know (e.g. "kty": "AKP", a post-quantum key), with
// malformed parameters, or without a kid (PACT verifiers select keys by
// kid). The result holds only the usable keys, in order, and may be empty:
// a verifier then fails only on the kid it needs (ErrUnknownKID).
//
// Errors: the document is not a JSON object with a "keys" array, or a key
// holds private or symmetric key material (the server is publishing a
// secret: the whole set is refused).
func Parse(data []byte) (*jose.JSONWebKeySet, error) {
	var doc struct {
		Keys *[]json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("not a JWKS document: %w", err)
	}
	if doc.Keys == nil {
		return nil, errors.New(`not a JWKS document: no "keys" array`)
	}
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{}}
	for i, raw := range *doc.Keys {
		var k jose.JSONWebKey
		if err := k.UnmarshalJSON(raw); err != nil {
			continue // unknown kty or bad parameters: skip this key only
		}
		if !k.IsPublic() {
			return nil, fmt.Errorf("JWKS key %d (kid %q) holds private or symmetric key material", i, k.KeyID)
		}
		if k.KeyID == "" {
			continue
		}
		set.Keys = append(set.Keys, k)
	}
	return &set, nil
}

// Discovery is the subset of OpenID Provider metadata a personal agent
// publishes so that an open Provider can find its jwks_uri from its issuer
// (PACT §3.1).
type Discovery struct {
	Issuer  string `json:"issuer"`
	JWKSURI string `json:"jwks_uri"`
}

// DiscoveryURL is where OIDC discovery metadata lives for issuer:
// {issuer}/.well-known/openid-configuration.
func DiscoveryURL(issuer string) string {
	return strings.TrimRight(issuer, "/") + "/.well-known/openid-configuration"
}

// CacheMaxAge is the Cache-Control lifetime of the served JWKS and
// discovery metadata: a Provider may keep using a key set this long, so a
// retired key can still verify tokens for up to CacheMaxAge after it is
// removed (`pact key retire` says so).
const CacheMaxAge = 300 * time.Second

// CacheControl is the Cache-Control value of the served documents
// (max-age = CacheMaxAge in seconds).
const CacheControl = "public, max-age=300"

// Handler serves the personal agent's public keys:
//
//	GET /.well-known/jwks.json               the set returned by keys
//	GET /.well-known/openid-configuration    {"issuer", "jwks_uri"}
//
// Both are also served under the issuer's and jwks_uri's own paths when
// those have one. Responses carry Cache-Control: max-age=300, so Providers
// pick up a rotation within five minutes.
func Handler(issuer, jwksURI string, keys func() (jose.JSONWebKeySet, error)) http.Handler {
	jwksPaths := map[string]bool{"/.well-known/jwks.json": true}
	if u, err := url.Parse(jwksURI); err == nil && u.Path != "" {
		jwksPaths[u.Path] = true
	}
	discoPaths := map[string]bool{"/.well-known/openid-configuration": true}
	if u, err := url.Parse(DiscoveryURL(issuer)); err == nil {
		discoPaths[u.Path] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := path.Clean("/" + r.URL.Path)
		var body any
		switch {
		case jwksPaths[p]:
			set, err := keys()
			if err != nil {
				http.Error(w, "keys unavailable", http.StatusServiceUnavailable)
				return
			}
			body = Public(set.Keys...)
		case discoPaths[p]:
			body = Discovery{Issuer: issuer, JWKSURI: jwksURI}
		default:
			http.NotFound(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", CacheControl)
		json.NewEncoder(w).Encode(body)
	})
}

// ErrUnknownKID is returned by Cache.Key when the set, even fetched again,
// has no key with that kid.
var ErrUnknownKID = errors.New("no key with that kid in the JWKS")

// Cache fetches JWKS documents over HTTP and keeps them for TTL. A lookup of
// an unknown kid fetches the set again once (key rotation), at most once per
// MinRefetch per URI, so a stream of bad kids cannot make it hammer a server.
// It is safe for concurrent use.
type Cache struct {
	client     *http.Client
	TTL        time.Duration // how long a fetched set is used; default 5 min
	MinRefetch time.Duration // least time between two fetches of one URI; default 1 s
	Now        func() time.Time

	mu   sync.Mutex
	sets map[string]*entry
}

type entry struct {
	set     *jose.JSONWebKeySet
	fetched time.Time
}

// NewCache returns a Cache that fetches with client (use an httpx client so
// that size, time and redirect limits apply).
func NewCache(client *http.Client) *Cache {
	return &Cache{client: client, sets: map[string]*entry{}}
}

func (c *Cache) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Put seeds the cache with a set for uri, as if fetched now (tests, offline use).
func (c *Cache) Put(uri string, set *jose.JSONWebKeySet) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sets[uri] = &entry{set: set, fetched: c.now()}
}

// Key returns the public key with this kid from the JWKS at jwksURI.
// Errors: fetch failures (HTTP status, size, timeouts, bad JSON), and
// ErrUnknownKID.
func (c *Cache) Key(ctx context.Context, jwksURI, kid string) (*jose.JSONWebKey, error) {
	set, fresh, err := c.get(ctx, jwksURI, false)
	if err != nil {
		return nil, err
	}
	if k := find(set, kid); k != nil {
		return k, nil
	}
	if !fresh {
		set, _, err = c.get(ctx, jwksURI, true)
		if err != nil {
			return nil, err
		}
		if k := find(set, kid); k != nil {
			return k, nil
		}
	}
	return nil, fmt.Errorf("%w: kid %q at %s", ErrUnknownKID, kid, jwksURI)
}

// Set returns the JWKS at jwksURI, from the cache when it is young enough.
func (c *Cache) Set(ctx context.Context, jwksURI string) (*jose.JSONWebKeySet, error) {
	set, _, err := c.get(ctx, jwksURI, false)
	return set, err
}

// get returns the set and whether it was fetched by this call.
func (c *Cache) get(ctx context.Context, uri string, refetch bool) (*jose.JSONWebKeySet, bool, error) {
	ttl, minRefetch := c.TTL, c.MinRefetch
	if ttl == 0 {
		ttl = 5 * time.Minute
	}
	if minRefetch == 0 {
		minRefetch = time.Second
	}
	c.mu.Lock()
	e := c.sets[uri]
	c.mu.Unlock()
	now := c.now()
	if e != nil {
		age := now.Sub(e.fetched)
		if (!refetch && age < ttl) || (refetch && age < minRefetch) {
			return e.set, false, nil
		}
	}
	set, err := Fetch(ctx, c.client, uri)
	if err != nil {
		return nil, false, err
	}
	c.mu.Lock()
	c.sets[uri] = &entry{set: set, fetched: now}
	c.mu.Unlock()
	return set, true, nil
}

// Fetch GETs and parses the JWKS at uri (at most MaxSize bytes; https, or
// http on loopback, per httpx.CheckURL).
func Fetch(ctx context.Context, client *http.Client, uri string) (*jose.JSONWebKeySet, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return nil, fmt.Errorf("jwks_uri %q: %w", uri, err)
	}
	if err := httpx.CheckURL(u); err != nil {
		return nil, fmt.Errorf("jwks_uri: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, uri, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", httpx.AcceptJWKS)
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching JWKS: %w", httpx.Describe(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetching JWKS %s: HTTP %d", uri, resp.StatusCode)
	}
	data, err := httpx.ReadBody(resp.Body, MaxSize)
	if err != nil {
		return nil, fmt.Errorf("fetching JWKS %s: %w", uri, err)
	}
	set, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("JWKS at %s: %w", uri, err)
	}
	return set, nil
}

func find(set *jose.JSONWebKeySet, kid string) *jose.JSONWebKey {
	for i := range set.Keys {
		if set.Keys[i].KeyID == kid {
			return &set.Keys[i]
		}
	}
	return nil
}
