package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/pact-cli/pact/conversation"
)

// Issue 31 item 14: a bundle is a file anyone can write. Its lines, each
// signed with a key of the writer's own and naming another brand, sent
// `pact receipts import` to two addresses per distinct brand (60 lines:
// 120 requests to addresses the file chose). The lookups stop at
// conversation.MaxLookups Brands, and pact says so; the other lines are
// kept as not verified, never as verified.
func TestIssue31_14_ImportLooksUpABoundedNumberOfBrands(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.NotFound(w, r)
	}))
	defer target.Close()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: key, KeyID: "k"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	jwk, _ := json.Marshal(jose.JSONWebKey{Key: &key.PublicKey, KeyID: "k", Algorithm: "ES256", Use: "sig"})
	const brands = 40
	var lines []string
	for i := range brands {
		claims, _ := json.Marshal(map[string]any{"pa": "https://pa.example", "brand": fmt.Sprintf("%s/a2a/b%d", target.URL, i),
			"grantId": "g", "user": "u", "scopesUsed": []string{}, "actions": []any{}, "ts": time.Now().UTC().Format(time.RFC3339)})
		obj, err := signer.Sign(claims)
		if err != nil {
			t.Fatal(err)
		}
		jws, _ := obj.CompactSerialize()
		line, _ := json.Marshal(map[string]any{"jws": jws, "jwk": json.RawMessage(jwk)})
		lines = append(lines, string(line))
	}
	bundle := filepath.Join(t.TempDir(), "bundle.jsonl")
	os.WriteFile(bundle, []byte(strings.Join(lines, "\n")+"\n"), 0o600)
	e := newEnv(t, "http://127.0.0.1:1")
	r := e.run("receipts", "import", bundle)
	if r.code != 6 {
		t.Fatalf("import: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if n := hits.Load(); n > 3*conversation.MaxLookups {
		t.Fatalf("%d requests to the addresses the bundle named, for %d Brands (at most %d Brands are looked up)", n, brands, conversation.MaxLookups)
	}
	want := fmt.Sprintf("the bundle names receipts of more than %d Brands: pact looked up the keys of %d only", conversation.MaxLookups, conversation.MaxLookups)
	if !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, fmt.Sprintf("%d receipts of the other Brands were kept as not verified", brands-conversation.MaxLookups)) {
		t.Fatalf("import does not say it stopped looking up Brands:\n%s", r.stderr)
	}
	if strings.Contains(e.must("receipts", "list", "--json").stdout, `"verified": true`) {
		t.Fatal("a receipt whose key was never checked is listed verified")
	}
}
