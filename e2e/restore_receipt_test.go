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
// jwks_uri jwksURI (the stranger's server; "" keeps the Brand's own),
// marked verified. It returns its id.
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
	if jwksURI != "" {
		expect["jwksUri"] = jwksURI
	}
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

// Issue 31 item 6, review: a backup's verdicts are not pact's. A backup
// given a receipt signed by a stranger's key, kept beside it as the key
// that verified it, under the Brand's own jwks_uri (which passes the
// restore's check), marked verified and carried by the stored reply, was
// believed after `pact restore` by receipts list and show, the turn's
// receiptVerified and receipts verify --offline. Now every restored
// receipt is "restored, not re-checked" everywhere, --offline leaves it
// so, and the restore says what checks it: an online receipts verify,
// which rejects the stranger's receipt and verifies the Brand's. A User
// restoring their own backup gets every verdict back with that one
// command.
func TestIssue31_6_RestoredReceiptIsNotBelievedUntilCheckedOnline(t *testing.T) {
	t.Parallel()
	p := newTrustProvider(t)
	e := loggedIn(t, p)
	stranger, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	own := filepath.Join(t.TempDir(), "own.db")
	e.must("backup", own)
	backup := filepath.Join(t.TempDir(), "backup.db")
	e.must("backup", backup)
	forged := forgeReceipt(t, backup, stranger, "")
	tamperDB(t, backup, `UPDATE turns SET receipt_id = '`+forged+`', receipt_verified = 1 WHERE role = 'agent'`)

	r := e.must("restore", backup)
	if !strings.Contains(r.stderr, `2 receipts are marked "restored, not re-checked"`) || !strings.Contains(r.stderr, "\n  pact receipts verify\n") {
		t.Errorf("pact restore does not say what it set aside and what checks it:\n%s", r.stderr)
	}
	type item struct {
		ID       string   `json:"id"`
		Verified bool     `json:"verified"`
		Restored bool     `json:"restored"`
		Problems []string `json:"problems"`
	}
	list := func() map[string]item {
		t.Helper()
		var items []item
		if err := json.Unmarshal([]byte(e.must("receipts", "list", "--json").stdout), &items); err != nil {
			t.Fatal(err)
		}
		out := map[string]item{}
		for _, it := range items {
			out[it.ID] = it
		}
		return out
	}
	turn := func() (verified *bool, restored bool) {
		t.Helper()
		var convs []struct {
			ContextID string `json:"contextId"`
		}
		json.Unmarshal([]byte(e.must("conversations", "--json").stdout), &convs)
		if len(convs) != 1 {
			t.Fatalf("conversations: %+v", convs)
		}
		var rec struct {
			Turns []struct {
				Role            string `json:"role"`
				ReceiptVerified *bool  `json:"receiptVerified"`
				ReceiptRestored bool   `json:"receiptRestored"`
			} `json:"turns"`
		}
		json.Unmarshal([]byte(e.must("conversations", "show", convs[0].ContextID, "--json").stdout), &rec)
		for _, tu := range rec.Turns {
			if tu.Role == "agent" {
				return tu.ReceiptVerified, tu.ReceiptRestored
			}
		}
		t.Fatal("no reply on record")
		return nil, false
	}
	notBelieved := func(when string) {
		t.Helper()
		items := list()
		if len(items) != 2 {
			t.Fatalf("%s: %d receipts listed, want 2", when, len(items))
		}
		for id, it := range items {
			if it.Verified || !it.Restored {
				t.Errorf("%s: receipts list: %s verified %v restored %v", when, id[:12], it.Verified, it.Restored)
			}
		}
		var shown item
		json.Unmarshal([]byte(e.must("receipts", "show", forged[:12], "--json").stdout), &shown)
		if shown.Verified || !shown.Restored {
			t.Errorf("%s: receipts show: %+v", when, shown)
		}
		if v, restored := turn(); v == nil || *v || !restored {
			t.Errorf("%s: the reply's receipt reads verified %v, restored %v", when, v != nil && *v, restored)
		}
	}
	notBelieved("after the restore")
	if table := e.must("receipts", "list"); !strings.Contains(table.stdout, "NOT RE-CHECKED") || !strings.Contains(table.stderr, "pact receipts verify") {
		t.Errorf("receipts list does not say so:\n%s%s", table.stdout, table.stderr)
	}

	off := e.run("receipts", "verify", "--offline", "--json")
	var tally struct {
		Verified, Failed, Unchecked int
		Results                     []struct {
			ID       string `json:"id"`
			Verified bool   `json:"verified"`
			Restored bool   `json:"restored"`
		}
	}
	json.Unmarshal([]byte(off.stdout), &tally)
	if off.code != 1 || tally.Verified != 0 || tally.Unchecked != 2 {
		t.Errorf("receipts verify --offline: exit %d, %+v; want exit 1, both unchecked\n%s", off.code, tally, off.stderr)
	}
	for _, c := range tally.Results {
		if c.Verified || !c.Restored {
			t.Errorf("receipts verify --offline: %+v", c)
		}
	}
	notBelieved("after receipts verify --offline")

	if on := e.run("receipts", "verify"); on.code != 6 || !strings.Contains(on.stderr, "1 verified, 1 failed") {
		t.Errorf("receipts verify: exit %d, want 6, the Brand's receipt verified and the stranger's failed\n%s%s", on.code, on.stdout, on.stderr)
	}
	for id, it := range list() {
		if want := id != forged; it.Verified != want || it.Restored {
			t.Errorf("after receipts verify: %s verified %v restored %v, want verified %v", id[:12], it.Verified, it.Restored, want)
		}
	}
	if v, restored := turn(); v == nil || *v || restored {
		t.Errorf("after receipts verify: the reply's (stranger's) receipt reads verified %v, restored %v", v != nil && *v, restored)
	}

	// The User restoring their own backup: one command gives every verdict back.
	var res struct {
		NotRechecked int    `json:"notRechecked"`
		Recheck      string `json:"recheck"`
	}
	json.Unmarshal([]byte(e.must("restore", own, "--json").stdout), &res)
	if res.NotRechecked != 1 || res.Recheck != "pact receipts verify" {
		t.Errorf("pact restore --json: %+v", res)
	}
	e.must("receipts", "verify")
	for id, it := range list() {
		if !it.Verified || it.Restored {
			t.Errorf("the User's own receipt after receipts verify: %s verified %v restored %v", id[:12], it.Verified, it.Restored)
		}
	}
	if v, restored := turn(); v == nil || !*v || restored {
		t.Errorf("the User's own reply after receipts verify: verified %v, restored %v", v != nil && *v, restored)
	}
}
