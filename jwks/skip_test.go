package jwks

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
)

// Issue 9 (one odd key poisons a key set), RFC 7517 §5: keys are parsed one
// by one; an AKP (post-quantum) key, a malformed key and a key without kid
// are skipped; the usable key is still found by its kid; only a kid with no
// usable key fails. The fetch asks for application/jwk-set+json.
func TestRFC7517_Section5_UnusableKeysAreSkipped(t *testing.T) {
	gk := newKey(t, "good")
	good := gk.Public()
	goodJSON, _ := json.Marshal(good)
	doc := `{"keys":[
		{"kty":"AKP","alg":"ML-DSA-44","kid":"pq","pub":"AAAA"},
		{"kty":"EC","crv":"P-256","x":"AA","y":"AA","kid":"broken"},
		{"kty":"OKP","crv":"X448","x":"AA","kid":"x448"},
		` + string(goodJSON) + `]}`
	var accept string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		accept = r.Header.Get("Accept")
		w.Write([]byte(doc))
	}))
	defer srv.Close()
	c := NewCache(srv.Client())
	k, err := c.Key(context.Background(), srv.URL+"/jwks.json", "good")
	if err != nil || k.KeyID != "good" {
		t.Fatalf("Key(good) = %v, %v; the odd keys poisoned the set", k, err)
	}
	if accept != "application/jwk-set+json, application/json" {
		t.Errorf("Accept = %q", accept)
	}
	if _, err := c.Key(context.Background(), srv.URL+"/jwks.json", "pq"); !errors.Is(err, ErrUnknownKID) {
		t.Errorf("Key(pq) = %v, want ErrUnknownKID (no usable key with that kid)", err)
	}
	set, err := Parse([]byte(doc))
	if err != nil || len(set.Keys) != 1 {
		t.Fatalf("Parse kept %v keys, err %v", set, err)
	}
	if _, err := Parse([]byte(`{"keys":[{"kty":"AKP","kid":"pq"}]}`)); err != nil {
		t.Errorf("a set of only unusable keys is not an error by itself: %v", err)
	}
	if _, err := Parse([]byte(`{"nokeys":[]}`)); err == nil {
		t.Error("a document without keys was accepted")
	}
}
