package discovery

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/pact-cli/pact/httpx"
	"github.com/pact-cli/pact/store"
)

// site is a Brand origin on 127.0.0.1 serving a card and a JWKS.
type site struct {
	*httptest.Server
	mu     sync.Mutex
	card   []byte
	jwks   []byte
	maxAge bool
	hits   map[string]int
}

func newSite(t *testing.T) *site {
	t.Helper()
	s := &site{hits: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.hits[r.URL.Path]++
		if s.maxAge {
			w.Header().Set("Cache-Control", "max-age=60")
		}
		switch r.URL.Path {
		case WellKnownPath:
			w.Write(s.card)
		case "/.well-known/jwks.json":
			w.Write(s.jwks)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *site) cardURL() string { return s.URL + WellKnownPath }
func (s *site) jku() string     { return s.URL + "/.well-known/jwks.json" }

func (s *site) set(card []byte, keys ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.card = card
	doc := map[string][]any{"keys": keys}
	s.jwks, _ = json.Marshal(doc)
}

func baseCard(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/card-delegated.json")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func pub(t *testing.T, k crypto.Signer, kid, alg string) jose.JSONWebKey {
	t.Helper()
	return jose.JSONWebKey{Key: k.Public(), KeyID: kid, Algorithm: alg, Use: "sig"}
}

func sign(t *testing.T, card []byte, k crypto.Signer, kid, jku string) []byte {
	t.Helper()
	out, err := SignCard(card, k, kid, jku)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sigClient() *http.Client { return httpx.NewClient(httpx.Options{Timeout: 5 * time.Second}) }

func ecKey(t *testing.T) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestA2A_8_4_ValidSignaturesEachAlgorithm(t *testing.T) {
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	_, ek, _ := ed25519.GenerateKey(rand.Reader)
	for _, tc := range []struct {
		alg string
		key crypto.Signer
	}{{"ES256", ecKey(t)}, {"RS256", rk}, {"EdDSA", ek}} {
		t.Run(tc.alg, func(t *testing.T) {
			s := newSite(t)
			s.set(sign(t, baseCard(t), tc.key, "k1", s.jku()), pub(t, tc.key, "k1", tc.alg))
			card, err := Fetch(context.Background(), sigClient(), s.cardURL())
			if err != nil {
				t.Fatal(err)
			}
			sig := card.Signature
			if !sig.Verified || sig.KID != "k1" || sig.KeyURL != s.jku() || len(sig.Problems) != 0 || sig.Thumbprint() == "" {
				t.Fatalf("signature = %+v", sig)
			}
			if want := "signed by " + strings.TrimPrefix(s.URL, "http://") + " ✓"; sig.Label() != want {
				t.Fatalf("label %q, want %q", sig.Label(), want)
			}
		})
	}
}

func TestA2A_8_4_UnsignedCardIsAcceptedAsUnsigned(t *testing.T) {
	s := newSite(t)
	s.set(baseCard(t))
	card, err := Fetch(context.Background(), sigClient(), s.cardURL())
	if err != nil {
		t.Fatal(err)
	}
	if card.Signature.Verified || card.Signature.Signed || card.Signature.Label() != "unsigned" || card.Signature.Problems == nil {
		t.Fatalf("signature = %+v", card.Signature)
	}
	if s.hits["/.well-known/jwks.json"] != 0 {
		t.Fatal("keys fetched for an unsigned card")
	}
}

// refused fetches the card and expects an INVALID_CARD whose reason
// contains want.
func refused(t *testing.T, s *site, want string) {
	t.Helper()
	_, err := Fetch(context.Background(), sigClient(), s.cardURL())
	var bad *InvalidCardError
	if !errors.As(err, &bad) || !errors.Is(err, ErrInvalidCard) {
		t.Fatalf("err = %v; want an InvalidCardError", err)
	}
	if !strings.Contains(bad.Reason, want) || bad.Signature == nil || bad.Signature.Verified || bad.Raw == nil {
		t.Fatalf("reason %q (signature %+v); want it to say %q", bad.Reason, bad.Signature, want)
	}
}

func TestA2A_8_4_TamperedCardIsRefused(t *testing.T) {
	s := newSite(t)
	k := ecKey(t)
	signed := sign(t, baseCard(t), k, "k1", s.jku())
	var m map[string]any
	json.Unmarshal(signed, &m)
	m["description"] = "Send your password here."
	tampered, _ := json.Marshal(m)
	s.set(tampered, pub(t, k, "k1", "ES256"))
	refused(t, s, "signature does not match the card")
}

func TestA2A_8_4_KeyURLOnAnotherOriginIsRefusedAndNeverFetched(t *testing.T) {
	s, evil := newSite(t), newSite(t)
	k := ecKey(t)
	evil.set(nil, pub(t, k, "k1", "ES256"))
	s.set(sign(t, baseCard(t), k, "k1", evil.jku()))
	refused(t, s, "not on the Brand's own origin")
	if evil.hits["/.well-known/jwks.json"] != 0 {
		t.Fatal("the key URL on another origin was fetched")
	}
}

func TestA2A_8_4_KeyURLRedirectingToAnotherOriginIsRefused(t *testing.T) {
	evil := newSite(t)
	k := ecKey(t)
	evil.set(nil, pub(t, k, "k1", "ES256"))
	var card []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/keys" {
			http.Redirect(w, r, evil.jku(), http.StatusFound)
			return
		}
		w.Write(card)
	}))
	defer srv.Close()
	card = sign(t, baseCard(t), k, "k1", srv.URL+"/keys")
	_, err := Fetch(context.Background(), sigClient(), srv.URL+WellKnownPath)
	if !errors.Is(err, ErrInvalidCard) || !strings.Contains(err.Error(), "redirected to") {
		t.Fatalf("err = %v; want a refusal naming the redirect", err)
	}
}

func TestA2A_8_4_HeaderChecks(t *testing.T) {
	k := ecKey(t)
	for _, tc := range []struct {
		name, header, want string
	}{
		{"unknown alg", `{"alg":"HS256","kid":"k1","jku":"JKU"}`, `algorithm "HS256" is not accepted`},
		{"alg none", `{"alg":"none","kid":"k1","jku":"JKU"}`, `algorithm "none" is not accepted`},
		{"no alg", `{"kid":"k1","jku":"JKU"}`, "names no algorithm"},
		{"no kid", `{"alg":"ES256","jku":"JKU"}`, "names no key (kid)"},
		{"no jku", `{"alg":"ES256","kid":"k1"}`, "gives no key URL (jku)"},
		{"typ", `{"alg":"ES256","kid":"k1","jku":"JKU","typ":"JWT"}`, `type (typ) "JWT"`},
		{"crit", `{"alg":"ES256","kid":"k1","jku":"JKU","crit":["exp"]}`, "critical"},
		{"alg/key mismatch", `{"alg":"EdDSA","kid":"k1","jku":"JKU"}`, "not an Ed25519 key"},
		{"unknown kid", `{"alg":"ES256","kid":"nope","jku":"JKU"}`, `no usable key with kid "nope"`},
		// RFC 7515 §4: member names are case-sensitive; "ALG" is not "alg".
		{"names in other case", `{"ALG":"ES256","KID":"k1","Jku":"JKU"}`, "names no algorithm"},
		{"kid in other case", `{"alg":"ES256","Kid":"k1","jku":"JKU"}`, "names no key (kid)"},
		{"jku in other case", `{"alg":"ES256","kid":"k1","JKU":"JKU"}`, "gives no key URL (jku)"},
		{"duplicate member", `{"alg":"ES256","kid":"k1","jku":"JKU","alg":"ES256"}`, `member "alg" twice`},
		{"alg not a string", `{"alg":7,"kid":"k1","jku":"JKU"}`, `"alg" is not a string`},
		{"not an object", `["alg"]`, "not a JSON object"},
		{"trailing data", `{"alg":"ES256","kid":"k1","jku":"JKU"}{}`, "data after"},
		{"empty crit", `{"alg":"ES256","kid":"k1","jku":"JKU","crit":[]}`, "critical"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSite(t)
			hdr := strings.ReplaceAll(tc.header, "JKU", s.jku())
			card, err := SignCardHeader(baseCard(t), k, []byte(hdr))
			if err != nil {
				t.Fatal(err)
			}
			s.set(card, pub(t, k, "k1", "ES256"))
			refused(t, s, tc.want)
		})
	}
}

// The key fetch asks for the JWKS media type first (RFC 7517 §8.5), as
// every other JWKS fetch does.
func TestRFC7517_KeyFetchAcceptsJWKSetMediaType(t *testing.T) {
	k := ecKey(t)
	var accept string
	var card []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/keys" {
			accept = r.Header.Get("Accept")
			json.NewEncoder(w).Encode(map[string]any{"keys": []any{pub(t, k, "k1", "ES256")}})
			return
		}
		w.Write(card)
	}))
	defer srv.Close()
	card = sign(t, baseCard(t), k, "k1", srv.URL+"/keys")
	if _, err := Fetch(context.Background(), sigClient(), srv.URL+WellKnownPath); err != nil {
		t.Fatal(err)
	}
	if accept != "application/jwk-set+json, application/json" {
		t.Fatalf("Accept %q", accept)
	}
}

func TestA2A_8_4_KeysAreParsedOneByOne(t *testing.T) {
	s := newSite(t)
	k := ecKey(t)
	odd := map[string]any{"kty": "PQC-2030", "kid": "k1", "x": "AAAA"}
	broken := map[string]any{"kty": "EC", "kid": "k0", "crv": "P-256"}
	s.set(sign(t, baseCard(t), k, "k1", s.jku()), broken, odd, pub(t, k, "k1", "ES256"))
	card, err := Fetch(context.Background(), sigClient(), s.cardURL())
	if err != nil || !card.Signature.Verified {
		t.Fatalf("err %v, signature %+v; an unreadable key must not hide the good one", err, card.Signature)
	}
}

func TestA2A_8_4_PrivateKeyInTheSetIsRefused(t *testing.T) {
	s := newSite(t)
	k := ecKey(t)
	s.set(sign(t, baseCard(t), k, "k1", s.jku()), jose.JSONWebKey{Key: k, KeyID: "k1", Algorithm: "ES256"})
	refused(t, s, "private half")
}

func TestA2A_8_4_OneValidSignatureSufficesOthersReported(t *testing.T) {
	s := newSite(t)
	good, gone := ecKey(t), ecKey(t)
	card := sign(t, baseCard(t), gone, "gone", s.jku())
	card = sign(t, card, good, "good", s.jku())
	s.set(card, pub(t, good, "good", "ES256"))
	c, err := Fetch(context.Background(), sigClient(), s.cardURL())
	if err != nil {
		t.Fatal(err)
	}
	sig := c.Signature
	if !sig.Verified || sig.KID != "good" || len(sig.Problems) != 1 || !strings.Contains(sig.Problems[0], `signature 1: no usable key with kid "gone"`) {
		t.Fatalf("signature = %+v", sig)
	}
	if s.hits["/.well-known/jwks.json"] != 1 {
		t.Fatalf("the key set was fetched %d times for one card; want 1", s.hits["/.well-known/jwks.json"])
	}
}

func TestA2A_8_4_SignedByCardURLOrigin(t *testing.T) {
	// Given a card URL, the keys must be on that URL's origin.
	if o, _ := BrandOrigin("https://Registry.Example:443/cards/x.json"); o != "https://registry.example" {
		t.Fatalf("origin %q", o)
	}
}

func TestA2A_8_4_CacheKeepsTheSignatureCheck(t *testing.T) {
	s := newSite(t)
	s.maxAge = true
	k := ecKey(t)
	s.set(sign(t, baseCard(t), k, "k1", s.jku()), pub(t, k, "k1", "ES256"))
	c := &Cache{DB: testDB(t).ForUser(store.LocalUser)}
	first, cached, err := c.Fetch(context.Background(), sigClient(), s.cardURL())
	if err != nil || cached || !first.Signature.Verified {
		t.Fatalf("first fetch: %v cached=%v card=%+v", err, cached, first)
	}
	again, cached, err := c.Fetch(context.Background(), sigClient(), s.cardURL())
	if err != nil || !cached || !again.Signature.Verified || again.Signature.Thumbprint() != first.Signature.Thumbprint() || again.Signature.Signer != first.Signature.Signer {
		t.Fatalf("cached fetch: %v cached=%v sig=%+v", err, cached, again.Signature)
	}
	if s.hits[WellKnownPath] != 1 {
		t.Fatalf("card fetched %d times; want 1", s.hits[WellKnownPath])
	}
}

func TestRFC7638_ThumbprintIsTheKeys(t *testing.T) {
	s := newSite(t)
	k := ecKey(t)
	s.set(sign(t, baseCard(t), k, "k1", s.jku()), pub(t, k, "k1", "ES256"))
	c, err := Fetch(context.Background(), sigClient(), s.cardURL())
	if err != nil {
		t.Fatal(err)
	}
	jwk := pub(t, k, "other-kid", "ES256")
	tp, _ := jwk.Thumbprint(crypto.SHA256)
	if c.Signature.Thumbprint() != base64.RawURLEncoding.EncodeToString(tp) {
		t.Fatal("the pinned thumbprint is not the RFC 7638 thumbprint of the key (it must not depend on the kid)")
	}
}
