package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"

	"github.com/pact-cli/pact/receipts"
	"github.com/pact-cli/pact/store"
)

// seedArchive archives, in the profile's database, n receipts signed by a
// fresh ES256 key (verified), plus one whose pa is not this profile's
// (kept as rejected). It returns the rejected receipt's id.
func seedArchive(t *testing.T, e *env, n int) (rejectedID string) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(e.home, "data", "profiles", "default", store.DBFileName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	priv, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	jwk := jose.JSONWebKey{Key: priv, KeyID: "k1", Algorithm: "ES256", Use: "sig"}
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jwk}, nil)
	if err != nil {
		t.Fatal(err)
	}
	pub := jwk.Public()
	a := receipts.NewArchive(db.ForUser(store.LocalUser), nil)
	exp := receipts.Expect{PA: "https://pa.example", Brand: "https://p.example/a2a/B", GrantID: "g1", User: "jane",
		Scopes: []string{"orders:read"}, JWKSURI: "https://p.example/jwks.json", Card: "https://brand.example/.well-known/agent-card.json"}
	for i := 0; i <= n; i++ {
		pa := exp.PA
		if i == n {
			pa = "https://someone-else.example"
		}
		claims, _ := json.Marshal(map[string]any{"grantId": "g1", "user": "jane", "pa": pa, "brand": exp.Brand,
			"scopesUsed": []string{"orders:read"}, "actions": []any{map[string]string{"tool": "list_orders"}},
			"ts": fmt.Sprintf("2026-11-%02dT10:00:00Z", i+1)})
		obj, err := sig.Sign(claims)
		if err != nil {
			t.Fatal(err)
		}
		jws, _ := obj.CompactSerialize()
		res, _ := receipts.VerifyOffline(receipts.Receipt{JWS: jws, Claims: claims}, &pub, exp)
		if _, err := a.Put(res); err != nil {
			t.Fatal(err)
		}
		if i == n {
			rejectedID = res.ID
		}
	}
	return rejectedID
}

type listItem struct {
	ID       string   `json:"id"`
	Verified bool     `json:"verified"`
	Problems []string `json:"problems"`
	TS       string   `json:"ts"`
}

// `pact receipts list` filters from the archive, a damaged row is listed
// with its problem (exit 1, the listing complete), and `pact receipts
// verify --all` checks the receipts kept as rejected too (exit 6).
func TestReceiptsArchive_ListFiltersDamageAndVerifyAll(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "https://pa.example")
	rejected := seedArchive(t, e, 5)
	list := func(args ...string) ([]listItem, result) {
		r := e.run(append([]string{"receipts", "list", "--json"}, args...)...)
		var items []listItem
		if err := json.Unmarshal([]byte(r.stdout), &items); err != nil {
			t.Fatalf("receipts list %v: %v\n%s\n%s", args, err, r.stdout, r.stderr)
		}
		return items, r
	}
	items, r := list()
	if r.code != 0 || len(items) != 6 {
		t.Fatalf("list: exit %d, %d items", r.code, len(items))
	}
	if it := items[5]; it.ID != rejected || it.Verified || len(it.Problems) == 0 {
		t.Fatalf("the rejected receipt is listed as %+v", it)
	}
	if items, _ := list("--since", "2026-11-02", "--until", "2026-11-03"); len(items) != 2 {
		t.Errorf("--since/--until: %d items", len(items))
	}
	if items, _ := list("--limit", "2"); len(items) != 2 || items[1].ID != rejected {
		t.Errorf("--limit 2: %+v", items)
	}
	if items, _ := list("--brand", "https://brand.example"); len(items) != 6 {
		t.Errorf("--brand by domain: %d items", len(items))
	}
	if items, _ := list("--scope", "orders:cancel"); len(items) != 0 {
		t.Errorf("--scope orders:cancel: %d items", len(items))
	}
	if r := e.run("receipts", "list", "--since", "yesterday"); r.code != 2 {
		t.Errorf("a bad --since: exit %d", r.code)
	}

	// verify --all covers the rejected receipt: exit 6, and it is named.
	r = e.run("receipts", "verify", "--all", "--offline", "--json")
	var v struct {
		Verified, Failed int
		Results          []struct {
			ID       string
			Verified bool
		}
	}
	json.Unmarshal([]byte(r.stdout), &v)
	if r.code != 6 || v.Verified != 5 || v.Failed != 1 {
		t.Fatalf("verify --all --offline: exit %d, %d verified, %d failed\n%s", r.code, v.Verified, v.Failed, r.stderr)
	}

	// A damaged row is listed, with its problem, and the listing goes on.
	db, err := store.Open(context.Background(), filepath.Join(e.home, "data", "profiles", "default", store.DBFileName))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Exec(context.Background(), `UPDATE receipts SET actions = '{not json' WHERE id = ?`, items[2].ID); err != nil {
		t.Fatal(err)
	}
	db.Close()
	items, r = list()
	if r.code != 1 || len(items) != 6 || !strings.Contains(r.stderr, "damaged") {
		t.Fatalf("with a damaged row: exit %d, %d items\n%s", r.code, len(items), r.stderr)
	}
	if it := items[2]; it.Verified || !strings.Contains(strings.Join(it.Problems, ";"), "damaged archive row") {
		t.Fatalf("the damaged row is listed as %+v", it)
	}
	if r := e.run("receipts", "list"); r.code != 1 || !strings.Contains(r.stdout, "NO") {
		t.Fatalf("the table with a damaged row: exit %d\n%s", r.code, r.stdout)
	}
}
