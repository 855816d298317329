package delegation

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-jose/go-jose/v4"

	"github.com/pact-cli/pact/jwks"
	"github.com/pact-cli/pact/secrets"
)

type testKey struct {
	jwk jose.JSONWebKey // private
}

func newKey(t testing.TB, alg jose.SignatureAlgorithm, kid string) testKey {
	t.Helper()
	var priv any
	var err error
	switch alg {
	case jose.ES256:
		priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case jose.RS256:
		priv, err = rsa.GenerateKey(rand.Reader, 2048)
	case jose.HS256:
		priv = []byte("0123456789abcdef0123456789abcdef")
	}
	if err != nil {
		t.Fatal(err)
	}
	return testKey{jwk: jose.JSONWebKey{Key: priv, KeyID: kid, Algorithm: string(alg), Use: "sig"}}
}

func (k testKey) public() jose.JSONWebKey { return k.jwk.Public() }

// sign returns a compact JWS of payload (any JSON value) with extra headers.
func (k testKey) sign(t testing.TB, payload any, extra map[jose.HeaderKey]any) string {
	t.Helper()
	data, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	opts := &jose.SignerOptions{ExtraHeaders: extra}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.SignatureAlgorithm(k.jwk.Algorithm), Key: k.jwk}, opts)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := s.Sign(data)
	if err != nil {
		t.Fatal(err)
	}
	out, err := obj.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// unsigned builds an alg "none" JWS by hand.
func unsigned(t testing.TB, kid string, payload any) string {
	h, _ := json.Marshal(map[string]string{"alg": "none", "kid": kid})
	p, _ := json.Marshal(payload)
	return base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(p) + "."
}

// jwksServer serves a mutable JWKS on 127.0.0.1 and counts fetches.
type jwksServer struct {
	srv     *httptest.Server
	mu      sync.Mutex
	keys    []jose.JSONWebKey
	fetches atomic.Int32
}

func newJWKSServer(t testing.TB, keys ...testKey) *jwksServer {
	s := &jwksServer{}
	for _, k := range keys {
		s.keys = append(s.keys, k.public())
	}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.fetches.Add(1)
		s.mu.Lock()
		defer s.mu.Unlock()
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: s.keys})
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *jwksServer) uri() string { return s.srv.URL + "/jwks.json" }

func (s *jwksServer) cache() *jwks.Cache { return jwks.NewCache(s.srv.Client()) }

// memSecrets is an in-memory Secrets.
type memSecrets struct {
	mu sync.Mutex
	m  map[string]string
}

func newMemSecrets() *memSecrets { return &memSecrets{m: map[string]string{}} }

func (s *memSecrets) Get(k string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[k]
	if !ok {
		return "", secrets.ErrNotFound
	}
	return v, nil
}
func (s *memSecrets) Set(k, v string) error { s.mu.Lock(); defer s.mu.Unlock(); s.m[k] = v; return nil }
func (s *memSecrets) Delete(k string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, k)
	return nil
}

var _ KeySource = (*jwks.Cache)(nil)
var _ Secrets = secrets.Store(nil)
