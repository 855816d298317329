package e2e

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"

	"github.com/pact-cli/pact/store"
)

// forgeReceipt adds to the database file db a receipt of the Brand whose
// receipt it already holds, for a refund the Brand never made: signed by
// stranger, its key kept beside it as the key that verified it, its
// jwks_uri on the stranger's server, marked verified. It returns its id.
func forgeReceipt(t *testing.T, db string, stranger *ecdsa.PrivateKey, jwksURI string) string {
	t.Helper()
	c, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var claimsJSON, expectJSON string
	if err := c.QueryRow(`SELECT claims, expect FROM receipts WHERE verified = 1 LIMIT 1`).Scan(&claimsJSON, &expectJSON); err != nil {
		t.Fatal(err)
	}
	var claims, expect map[string]any
	json.Unmarshal([]byte(claimsJSON), &claims)
	json.Unmarshal([]byte(expectJSON), &expect)
	claims["actions"] = []any{map[string]any{"tool": "issue_refund", "amount": "900 EUR"}}
	expect["jwksUri"] = jwksURI
	jwk := jose.JSONWebKey{Key: &stranger.PublicKey, KeyID: "as-1", Algorithm: "ES256", Use: "sig"}
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: stranger, KeyID: "as-1"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(claims)
	obj, err := sig.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	jws, _ := obj.CompactSerialize()
	sum := sha256.Sum256([]byte(jws))
	id := hex.EncodeToString(sum[:])
	tp, _ := jwk.Thumbprint(crypto.SHA256)
	jwkJSON, _ := json.Marshal(jwk)
	expJSON, _ := json.Marshal(expect)
	actions, _ := json.Marshal(claims["actions"])
	if _, err := c.Exec(`INSERT INTO receipts (user_id, id, jws, claims, jwk, jwk_thumbprint, expect, verified, problems, verified_at, brand, grant_id, user, scopes_used, actions, ts, ts_ns, card_url, brand_name)
		SELECT user_id, ?, ?, ?, ?, ?, ?, 1, '[]', verified_at, brand, grant_id, user, scopes_used, ?, ts, ts_ns, card_url, brand_name FROM receipts LIMIT 1`,
		id, jws, string(payload), string(jwkJSON), base64.RawURLEncoding.EncodeToString(tp), string(expJSON), string(actions)); err != nil {
		t.Fatal(err)
	}
	return id
}

// Issue 31 item 6, review: the grant's jwks_uri is checked again by a
// restore, but an archived receipt keeps its own (what it was checked
// against). A backup given a receipt signed by a stranger, its key and
// jwks_uri on the stranger's server, marked verified, was listed verified
// after `pact restore`, and `pact receipts verify` (online and offline)
// said "✓": the file's verdict, not pact's. The restore keeps it as
// rejected and says so; a receipt so forged in the live database fails
// verification.
func TestIssue31_6_ReceiptWithAForeignJWKSURIIsNotVerified(t *testing.T) {
	t.Parallel()
	p := newTrustProvider(t)
	e := loggedIn(t, p)
	stranger, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	keys := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &stranger.PublicKey, KeyID: "as-1", Algorithm: "ES256", Use: "sig"}}})
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	}))
	defer keys.Close()

	backup := filepath.Join(t.TempDir(), "backup.db")
	e.must("backup", backup)
	id := forgeReceipt(t, backup, stranger, keys.URL+"/jwks.json")
	restored := e.must("restore", backup)
	if !strings.Contains(restored.stderr, "the verdict on receipt "+id[:12]) || !strings.Contains(restored.stderr, "kept as rejected") {
		t.Errorf("pact restore does not say it kept the forged receipt as rejected:\n%s", restored.stderr)
	}
	wantRejected := func(when string) {
		t.Helper()
		r := e.must("receipts", "list", "--json")
		var list []struct {
			ID       string `json:"id"`
			Verified bool   `json:"verified"`
		}
		json.Unmarshal([]byte(r.stdout), &list)
		for _, it := range list {
			if it.ID == id && it.Verified {
				t.Errorf("%s: the receipt signed by a stranger is listed verified", when)
			}
		}
		for _, args := range [][]string{{"receipts", "verify", id[:12]}, {"receipts", "verify", id[:12], "--offline"}} {
			if r := e.run(args...); r.code != 6 || !strings.Contains(r.stdout+r.stderr, "jwks_uri") {
				t.Errorf("%s: pact %s: exit %d, want 6 naming its jwks_uri\n%s%s", when, strings.Join(args, " "), r.code, r.stdout, r.stderr)
			}
		}
	}
	wantRejected("after the restore")

	// The same forgery in the live database.
	p2 := newTrustProvider(t)
	e = loggedIn(t, p2)
	id = forgeReceipt(t, filepath.Join(e.home, "data", "profiles", "default", store.DBFileName), stranger, keys.URL+"/jwks.json")
	for _, args := range [][]string{{"receipts", "verify", id[:12]}, {"receipts", "verify", id[:12], "--offline"}} {
		if r := e.run(args...); r.code != 6 || !strings.Contains(r.stdout+r.stderr, "jwks_uri") {
			t.Errorf("in the live database: pact %s: exit %d, want 6 naming its jwks_uri\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
	}
}
