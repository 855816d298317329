package signer

import (
	"testing"

	jose "github.com/go-jose/go-jose/v4"
)

// SignJWS signs what it is given with the profile's key, as the alg asked
// (the header is not checked): a verifier that allows the alg and has the
// key accepts it; an alg the key cannot make is an error.
func TestSignJWS(t *testing.T) {
	for _, c := range []struct{ keyAlg, alg string }{{"ES256", "ES256"}, {"RS256", "RS256"}, {"RS256", "PS256"}} {
		k, err := Generate(c.keyAlg, 0)
		if err != nil {
			t.Fatal(err)
		}
		s, err := New("https://pa.example", k, nil)
		if err != nil {
			t.Fatal(err)
		}
		tok, err := s.SignJWS(map[string]any{"alg": c.alg, "kid": "whatever"}, []byte(`{"sub":"x"}`), c.alg)
		if err != nil {
			t.Fatalf("%s/%s: %v", c.keyAlg, c.alg, err)
		}
		jws, err := jose.ParseSignedCompact(tok, []jose.SignatureAlgorithm{jose.SignatureAlgorithm(c.alg)})
		if err != nil {
			t.Fatalf("%s/%s: %v", c.keyAlg, c.alg, err)
		}
		if p, err := jws.Verify(k.Public()); err != nil || string(p) != `{"sub":"x"}` {
			t.Errorf("%s/%s: %v %s", c.keyAlg, c.alg, err, p)
		}
	}
	k, _ := Generate("ES256", 0)
	s, _ := New("https://pa.example", k, nil)
	if _, err := s.SignJWS(map[string]any{"alg": "PS256"}, []byte(`{}`), "PS256"); err == nil {
		t.Error("an ES256 key signed PS256")
	}
}
