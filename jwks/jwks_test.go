package jwks

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/pact-cli/pact/httpx"
)

func newKey(t testing.TB, kid string) jose.JSONWebKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return jose.JSONWebKey{Key: k, KeyID: kid, Algorithm: "ES256", Use: "sig"}
}

func TestPublic_HasNoPrivateMembers(t *testing.T) {
	set := Public(newKey(t, "a"), newKey(t, "b"))
	data, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	var raw struct{ Keys []map[string]any }
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	if len(raw.Keys) != 2 {
		t.Fatalf("want 2 keys, got %d", len(raw.Keys))
	}
	for _, k := range raw.Keys {
		if _, ok := k["d"]; ok {
			t.Fatalf("private member d published: %v", k)
		}
		if k["kid"] == "" || k["crv"] != "P-256" {
			t.Fatalf("public key incomplete: %v", k)
		}
	}
}

func TestParse_RefusesPrivateKeys(t *testing.T) {
	data, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{newKey(t, "x")}})
	if _, err := Parse(data); err == nil || !strings.Contains(err.Error(), "private") {
		t.Fatalf("want refusal of a private key, got %v", err)
	}
	if _, err := Parse([]byte(`{"keys":[`)); err == nil {
		t.Fatal("want an error on bad JSON")
	}
}

func TestHandler_ServesJWKSAndDiscovery(t *testing.T) {
	key := newKey(t, "k1")
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		Handler(srv.URL, srv.URL+"/.well-known/jwks.json", func() (jose.JSONWebKeySet, error) {
			return jose.JSONWebKeySet{Keys: []jose.JSONWebKey{key}}, nil
		}).ServeHTTP(w, r)
	}))
	defer srv.Close()
	c := httpx.NewClient(httpx.Options{})
	resp, err := c.Get(DiscoveryURL(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	var d Discovery
	json.NewDecoder(resp.Body).Decode(&d)
	resp.Body.Close()
	if d.Issuer != srv.URL || d.JWKSURI != srv.URL+"/.well-known/jwks.json" {
		t.Fatalf("discovery = %+v", d)
	}
	if cc := resp.Header.Get("Cache-Control"); !strings.Contains(cc, "max-age") {
		t.Errorf("no cache header: %q", cc)
	}
	set, err := Fetch(context.Background(), c, d.JWKSURI)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Keys) != 1 || set.Keys[0].KeyID != "k1" || !set.Keys[0].IsPublic() {
		t.Fatalf("served set = %+v", set)
	}
	resp, _ = c.Post(d.JWKSURI, "text/plain", nil)
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST got %d", resp.StatusCode)
	}
}

func TestCache_RefetchesOnceOnUnknownKID(t *testing.T) {
	var fetches atomic.Int32
	current := []jose.JSONWebKey{newKey(t, "old")}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		json.NewEncoder(w).Encode(Public(current...))
	}))
	defer srv.Close()
	now := time.Unix(1_800_000_000, 0)
	c := NewCache(httpx.NewClient(httpx.Options{}))
	c.Now = func() time.Time { return now }
	ctx := context.Background()
	if _, err := c.Key(ctx, srv.URL, "old"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Key(ctx, srv.URL, "old"); err != nil || fetches.Load() != 1 {
		t.Fatalf("second lookup should hit the cache: fetches=%d err=%v", fetches.Load(), err)
	}
	// Rotation: a new key appears; the lookup refetches once (after MinRefetch).
	current = append(current, newKey(t, "new"))
	now = now.Add(1100 * time.Millisecond)
	if _, err := c.Key(ctx, srv.URL, "new"); err != nil || fetches.Load() != 2 {
		t.Fatalf("rotation: fetches=%d err=%v", fetches.Load(), err)
	}
	// A bogus kid right after does not refetch again (rate limit).
	if _, err := c.Key(ctx, srv.URL, "bogus"); !errors.Is(err, ErrUnknownKID) {
		t.Fatalf("want ErrUnknownKID, got %v", err)
	}
	if fetches.Load() != 2 {
		t.Fatalf("bogus kid caused a refetch: %d", fetches.Load())
	}
}

func TestFetch_RefusesHugeAndNonLoopbackHTTP(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"keys":[` + strings.Repeat(" ", MaxSize) + `]}`))
	}))
	defer srv.Close()
	c := httpx.NewClient(httpx.Options{})
	var tl *httpx.ErrBodyTooLarge
	if _, err := Fetch(context.Background(), c, srv.URL); !errors.As(err, &tl) {
		t.Fatalf("want ErrBodyTooLarge, got %v", err)
	}
	if _, err := Fetch(context.Background(), c, "http://pa.example.com/jwks.json"); !errors.Is(err, httpx.ErrInsecureURL) {
		t.Fatalf("want ErrInsecureURL, got %v", err)
	}
}

func TestCacheControlIsCacheMaxAge(t *testing.T) {
	if want := fmt.Sprintf("public, max-age=%d", int(CacheMaxAge/time.Second)); CacheControl != want {
		t.Fatalf("CacheControl %q, want %q", CacheControl, want)
	}
}
