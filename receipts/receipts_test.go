package receipts

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/pact-cli/pact/delegation"
	"github.com/pact-cli/pact/jwks"
	"github.com/pact-cli/pact/store"
)

const (
	paIssuer = "https://pa.example.com"
	iface    = "https://provider.example.com/a2a/b1"
)

type testKey struct{ jwk jose.JSONWebKey }

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
	return testKey{jose.JSONWebKey{Key: priv, KeyID: kid, Algorithm: string(alg), Use: "sig"}}
}

func (k testKey) signBytes(t testing.TB, data []byte) string {
	t.Helper()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.SignatureAlgorithm(k.jwk.Algorithm), Key: k.jwk}, nil)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := s.Sign(data)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := obj.CompactSerialize()
	return out
}

func claims(mod func(map[string]any)) map[string]any {
	c := map[string]any{
		"grantId":    "a2agrant_1",
		"user":       "jane-4471",
		"pa":         paIssuer,
		"brand":      iface,
		"scopesUsed": []any{"orders:read", "orders:cancel"},
		"actions":    []any{map[string]any{"tool": "lookup_orders"}, map[string]any{"tool": "cancel_order", "argsHash": "abc"}},
		"ts":         "2026-09-30T12:00:00Z",
	}
	if mod != nil {
		mod(c)
	}
	return c
}

// receipt signs c with k and shows c next to it, as a Provider does.
func receipt(t testing.TB, k testKey, c map[string]any) Receipt {
	data, _ := json.Marshal(c)
	return Receipt{JWS: k.signBytes(t, data), Claims: data}
}

type jwksServer struct {
	srv     *httptest.Server
	mu      sync.Mutex
	keys    []jose.JSONWebKey
	fetches atomic.Int32
}

func newJWKSServer(t testing.TB, keys ...testKey) *jwksServer {
	s := &jwksServer{}
	for _, k := range keys {
		s.keys = append(s.keys, k.jwk.Public())
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

func (s *jwksServer) add(k testKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys = append(s.keys, k.jwk.Public())
}

func (s *jwksServer) cache() *jwks.Cache {
	c := jwks.NewCache(s.srv.Client())
	c.MinRefetch = time.Nanosecond
	return c
}

func expectFor(js *jwksServer) Expect {
	return ExpectFromGrant(&delegation.Grant{
		Brand: "https://brand.example/.well-known/agent-card.json", InterfaceURL: iface,
		GrantID: "a2agrant_1", Subject: "jane-4471", Scopes: []string{"orders:read", "orders:cancel"},
		JWKSURI: js.srv.URL + "/jwks.json",
	}, paIssuer)
}

func TestSection5_6_ValidReceiptVerifies(t *testing.T) {
	for _, alg := range []jose.SignatureAlgorithm{jose.ES256, jose.RS256} {
		k := newKey(t, alg, "k-"+string(alg))
		js := newJWKSServer(t, k)
		res, err := Verify(context.Background(), js.cache(), receipt(t, k, claims(nil)), expectFor(js))
		if err != nil || !res.Verified() {
			t.Fatalf("%s: %v", alg, err)
		}
		if res.Claims.GrantID != "a2agrant_1" || len(res.Claims.Actions) != 2 || res.Key.KeyID != "k-"+string(alg) {
			t.Errorf("%s: result = %+v", alg, res)
		}
	}
}

func TestSection5_6_ClaimsComparedAsJSONValues(t *testing.T) {
	k := newKey(t, jose.ES256, "k1")
	js := newJWKSServer(t, k)
	rc := receipt(t, k, claims(nil))
	// Same value, different member order and spacing.
	var m map[string]any
	json.Unmarshal(rc.Claims, &m)
	rc.Claims, _ = json.MarshalIndent(m, "", "   ")
	if _, err := Verify(context.Background(), js.cache(), rc, expectFor(js)); err != nil {
		t.Fatal(err)
	}
}

func TestSection5_6_TamperedReceiptsRejected(t *testing.T) {
	k := newKey(t, jose.ES256, "k1")
	js := newJWKSServer(t, k)
	signedWith := func(mod func(map[string]any)) Receipt { return receipt(t, k, claims(mod)) }
	cases := []struct {
		name string
		rc   func() Receipt
		want string
	}{
		{"ClaimsEdited", func() Receipt {
			rc := signedWith(nil)
			rc.Claims = mustJSON(claims(func(c map[string]any) { c["scopesUsed"] = []any{"orders:read"} }))
			return rc
		}, "claims shown differ from the signed payload"},
		{"PayloadEdited", func() Receipt {
			rc := signedWith(nil)
			parts := strings.Split(rc.JWS, ".")
			parts[1] = base64.RawURLEncoding.EncodeToString(mustJSON(claims(func(c map[string]any) { c["user"] = "mallory" })))
			rc.JWS = strings.Join(parts, ".")
			return rc
		}, "signature does not verify"},
		{"WrongPA", func() Receipt { return signedWith(func(c map[string]any) { c["pa"] = "https://other-pa.example" }) }, "pa mismatch"},
		{"WrongBrand", func() Receipt {
			return signedWith(func(c map[string]any) { c["brand"] = "https://provider.example.com/a2a/b2" })
		}, "brand mismatch"},
		{"WrongGrant", func() Receipt { return signedWith(func(c map[string]any) { c["grantId"] = "a2agrant_other" }) }, "grantId mismatch"},
		{"WrongUser", func() Receipt { return signedWith(func(c map[string]any) { c["user"] = "john-1" }) }, "user mismatch"},
		{"ScopeNotGranted", func() Receipt {
			return signedWith(func(c map[string]any) { c["scopesUsed"] = []any{"orders:read", "refunds:issue"} })
		}, `scope "refunds:issue" used but not granted`},
		{"BadTimestamp", func() Receipt { return signedWith(func(c map[string]any) { c["ts"] = "yesterday" }) }, "not an RFC 3339 time"},
		{"AlgNone", func() Receipt {
			h := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","kid":"k1"}`))
			p := base64.RawURLEncoding.EncodeToString(mustJSON(claims(nil)))
			return Receipt{JWS: h + "." + p + ".", Claims: mustJSON(claims(nil))}
		}, `alg "none" not allowed`},
		{"HS256", func() Receipt { return receipt(t, newKey(t, jose.HS256, "k1"), claims(nil)) }, `alg "HS256" not allowed`},
		{"UnknownKid", func() Receipt { return receipt(t, newKey(t, jose.ES256, "k-unknown"), claims(nil)) }, `unknown kid "k-unknown"`},
		{"OtherKeySameKid", func() Receipt { return receipt(t, newKey(t, jose.ES256, "k1"), claims(nil)) }, "signature does not verify"},
		{"RSAKeyForES256Kid", func() Receipt {
			rk := newKey(t, jose.RS256, "k1")
			return receipt(t, rk, claims(nil))
		}, "for ES256, JWS says RS256"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Verify(context.Background(), js.cache(), tc.rc(), expectFor(js))
			var ve *delegation.VerifyError
			if !errors.As(err, &ve) || res.Verified() {
				t.Fatalf("want a *VerifyError, got %v", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%q lacks %q", err, tc.want)
			}
		})
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func TestSection5_6_EveryFailedCheckReported(t *testing.T) {
	k := newKey(t, jose.ES256, "k1")
	js := newJWKSServer(t, k)
	rc := receipt(t, k, claims(func(c map[string]any) {
		c["pa"] = "https://x.example"
		c["brand"] = "https://y.example"
		c["grantId"] = "g2"
		c["scopesUsed"] = []any{"admin"}
	}))
	_, err := Verify(context.Background(), js.cache(), rc, expectFor(js))
	var ve *delegation.VerifyError
	if !errors.As(err, &ve) || len(ve.Problems) != 4 {
		t.Fatalf("want 4 problems, got %v", err)
	}
}

func TestSection5_6_KeyRotationRefetchesOnce(t *testing.T) {
	k1, k2 := newKey(t, jose.ES256, "k1"), newKey(t, jose.ES256, "k2")
	js := newJWKSServer(t, k1)
	cache := js.cache()
	if _, err := Verify(context.Background(), cache, receipt(t, k1, claims(nil)), expectFor(js)); err != nil {
		t.Fatal(err)
	}
	js.add(k2)
	if _, err := Verify(context.Background(), cache, receipt(t, k2, claims(nil)), expectFor(js)); err != nil {
		t.Fatalf("rotated key: %v", err)
	}
	if n := js.fetches.Load(); n != 2 {
		t.Errorf("%d JWKS fetches, want 2", n)
	}
}

func TestSection5_6_KeyFetchFailureIsNotAVerdict(t *testing.T) {
	k := newKey(t, jose.ES256, "k1")
	js := newJWKSServer(t, k)
	exp := expectFor(js)
	js.srv.Close()
	res, err := Verify(context.Background(), js.cache(), receipt(t, k, claims(nil)), exp)
	var ve *delegation.VerifyError
	if err == nil || errors.As(err, &ve) || res.Verified() || len(res.Problems) != 1 {
		t.Fatalf("err = %v, res = %+v", err, res)
	}
}

func TestFromMetadata(t *testing.T) {
	var md map[string]any
	json.Unmarshal([]byte(`{"pact.receipt":{"jws":"a.b.c","claims":{"user":"u"}},"other":1}`), &md)
	rc, ok, err := FromMetadata(md)
	if !ok || err != nil || rc.JWS != "a.b.c" || string(rc.Claims) != `{"user":"u"}` {
		t.Fatalf("%v %v %+v", ok, err, rc)
	}
	if _, ok, _ := FromMetadata(map[string]any{}); ok {
		t.Error("no receipt expected")
	}
	if _, ok, err := FromMetadata(map[string]any{"pact.receipt": "x"}); !ok || err == nil {
		t.Error("malformed receipt must be an error")
	}
}

// archiveDB is the database under each archive newArchive made.
var archiveDB sync.Map // *Archive → *store.DB

func newArchive(t testing.TB) *Archive {
	db := testDB(t)
	a := &Archive{DB: db.ForUser(store.LocalUser)}
	archiveDB.Store(a, db)
	return a
}

// dbOf is the database under an archive newArchive made.
func dbOf(a *Archive) *store.DB {
	v, _ := archiveDB.Load(a)
	return v.(*store.DB)
}

// damage runs an UPDATE on the archive's rows, as a hand edit of the
// database would.
func damage(t testing.TB, a *Archive, query string, args ...any) {
	t.Helper()
	if err := dbOf(a).Exec(context.Background(), query, args...); err != nil {
		t.Fatal(err)
	}
}

func TestSection5_6_ArchiveKeepsVerifiedAndRejectedApart(t *testing.T) {
	k := newKey(t, jose.ES256, "k1")
	js := newJWKSServer(t, k)
	a := newArchive(t)
	good, _ := Verify(context.Background(), js.cache(), receipt(t, k, claims(nil)), expectFor(js))
	bad, _ := Verify(context.Background(), js.cache(), receipt(t, k, claims(func(c map[string]any) { c["pa"] = "https://x" })), expectFor(js))
	for _, r := range []*Result{good, bad} {
		if _, err := a.Put(r); err != nil {
			t.Fatal(err)
		}
	}
	fi, err := os.Stat(dbOf(a).Path())
	if err != nil || !isPrivate(fi) {
		t.Fatalf("archive database: %v %v", fi, err)
	}
	// A rejection does not replace a verification.
	if _, err := a.Put(&Result{ID: good.ID, Receipt: good.Receipt, Expect: good.Expect, Problems: []string{"later failure"}}); err != nil {
		t.Fatal(err)
	}
	if e, _ := a.Get(good.ID); !e.Verified {
		t.Error("a rejection replaced a verified receipt")
	}
	items, err := a.List("")
	if err != nil || len(items) != 2 {
		t.Fatalf("%v %v", items, err)
	}
	verified := map[string]bool{}
	for _, it := range items {
		verified[it.ID] = it.Verified
	}
	if !verified[good.ID] || verified[bad.ID] {
		t.Errorf("verified flags = %v", verified)
	}
	e, err := a.Get(ShortID(bad.ID))
	if err != nil || e.Verified || !strings.Contains(strings.Join(e.Problems, ";"), "pa mismatch") {
		t.Errorf("rejected entry = %+v, %v", e, err)
	}
	// A rejected row edited to claim it is verified is still not verified
	// (it has no archived key).
	damage(t, a, `UPDATE receipts SET verified = 1 WHERE id = ?`, bad.ID)
	if e, _ := a.Get(bad.ID); e.Verified {
		t.Error("a rejected row edited to verified is reported as verified")
	}
}

func TestListItemShapeAndBrandFilter(t *testing.T) {
	k := newKey(t, jose.ES256, "k1")
	js := newJWKSServer(t, k)
	a := newArchive(t)
	res, _ := Verify(context.Background(), js.cache(), receipt(t, k, claims(nil)), expectFor(js))
	a.Put(res)
	items, _ := a.List(iface)
	if len(items) != 1 {
		t.Fatalf("by interface URL: %d", len(items))
	}
	if items, _ := a.List("https://brand.example/.well-known/agent-card.json"); len(items) != 1 {
		t.Errorf("by card URL: %d", len(items))
	}
	if items, _ := a.List("https://other.example"); len(items) != 0 {
		t.Errorf("other brand: %d", len(items))
	}
	var m map[string]any
	json.Unmarshal(mustJSON(items[0]), &m)
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if fmt.Sprint(keys) != "[actions brand grantId id notes problems replayed restored scopesUsed ts user verified]" {
		t.Errorf("keys = %v", keys)
	}
}

func TestSection5_6_VerifyOfflineWithoutNetwork(t *testing.T) {
	k := newKey(t, jose.RS256, "k1")
	js := newJWKSServer(t, k)
	a := newArchive(t)
	for i := 0; i < 3; i++ {
		res, err := Verify(context.Background(), js.cache(), receipt(t, k, claims(func(c map[string]any) { c["ts"] = fmt.Sprintf("2026-09-30T12:00:0%dZ", i) })), expectFor(js))
		if err != nil {
			t.Fatal(err)
		}
		a.Put(res)
	}
	js.srv.Close()
	checks, err := a.VerifyAll(context.Background(), false)
	if err != nil || len(checks) != 3 {
		t.Fatal(checks, err)
	}
	for _, c := range checks {
		if !c.Verified {
			t.Errorf("%s: %v", c.ID, c.Problems)
		}
	}
	// Online with jwks_uri unreachable: not verified, but not failed either
	// (an outage is not a forgery), and the archived key is not trusted
	// in its place.
	a.Keys = jwks.NewCache(http.DefaultClient)
	checks, _ = a.VerifyAll(context.Background(), true)
	for _, c := range checks {
		if c.Verified || !c.Unchecked || !strings.Contains(strings.Join(c.Problems, " "), "--offline") {
			t.Errorf("%s: verified=%v unchecked=%v %v", c.ID, c.Verified, c.Unchecked, c.Problems)
		}
	}
}

// TestSection5_6_EditedArchiveFileNotShownAsVerified edits the claims copy
// of an archived receipt: list and show must not present it as verified,
// nor show the edited claims as if signed.
func TestSection5_6_EditedArchiveFileNotShownAsVerified(t *testing.T) {
	k := newKey(t, jose.ES256, "k1")
	js := newJWKSServer(t, k)
	a := newArchive(t)
	res, _ := Verify(context.Background(), js.cache(), receipt(t, k, claims(nil)), expectFor(js))
	a.Put(res)
	var e map[string]any
	json.Unmarshal(res.Receipt.Claims, &e)
	if e == nil {
		p, _ := jwsPayload(res.Receipt.JWS)
		json.Unmarshal(p, &e)
	}
	e["actions"] = []any{map[string]any{"tool": "refund_everything"}}
	damage(t, a, `UPDATE receipts SET claims = ? WHERE id = ?`, string(mustJSON(e)), res.ID)
	got, _ := a.Get(res.ID)
	if strings.Contains(string(got.Claims), "refund_everything") {
		t.Fatal("show presents the edited claims as signed")
	}
	if got.Verified {
		t.Fatal("show presents an edited receipt as verified")
	}
	checks, _ := a.VerifyAll(context.Background(), false)
	if checks[0].Verified {
		t.Fatal("verify accepted an edited receipt")
	}
}

func TestSection5_6_ArchivedKeySwapDetected(t *testing.T) {
	k := newKey(t, jose.ES256, "k1")
	js := newJWKSServer(t, k)
	a := newArchive(t)
	res, _ := Verify(context.Background(), js.cache(), receipt(t, k, claims(nil)), expectFor(js))
	a.Put(res)
	other := newKey(t, jose.ES256, "k1")
	damage(t, a, `UPDATE receipts SET jwk = ? WHERE id = ?`, string(mustJSON(other.jwk.Public())), res.ID)
	checks := a.VerifyIDs(context.Background(), []string{ShortID(res.ID)}, false)
	if len(checks) != 1 || checks[0].Verified || !strings.Contains(fmt.Sprint(checks[0].Problems), "signature does not verify") {
		t.Errorf("checks = %+v", checks)
	}
}

func TestArchiveSurvivesInterruptedWritesAndConcurrentWriters(t *testing.T) {
	k := newKey(t, jose.ES256, "k1")
	js := newJWKSServer(t, k)
	a := newArchive(t)
	cache := js.cache()
	var results []*Result
	for i := 0; i < 20; i++ {
		res, err := Verify(context.Background(), cache, receipt(t, k, claims(func(c map[string]any) { c["ts"] = fmt.Sprintf("2026-09-30T12:00:%02dZ", i) })), expectFor(js))
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, res)
	}
	// Two writers (as two pact processes would) put overlapping sets.
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, err := store.Open(context.Background(), dbOf(a).Path())
			if err != nil {
				t.Error(err)
				return
			}
			defer db.Close()
			other := &Archive{DB: db.ForUser(store.LocalUser)}
			for _, r := range results {
				if _, err := other.Put(r); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	items, err := a.List("")
	if err != nil || len(items) != 20 {
		t.Fatalf("%d items, %v", len(items), err)
	}
	checks, _ := a.VerifyAll(context.Background(), false)
	for _, c := range checks {
		if !c.Verified {
			t.Errorf("%s: %v", c.ID, c.Problems)
		}
	}
	if len(checks) != 20 {
		t.Errorf("%d checks", len(checks))
	}
}

func TestGetByPrefix(t *testing.T) {
	a := newArchive(t)
	if _, err := a.Get("abcd"); !errors.Is(err, ErrNotFound) {
		t.Errorf("err = %v", err)
	}
	if _, err := a.Get("ab"); err == nil {
		t.Error("too-short prefix accepted")
	}
}

// TestArchiveBatch_TransactionsOfN: a batch archives what it was given,
// verified and rejected, as Put does, n to a transaction, the rest on Flush.
func TestArchiveBatch_TransactionsOfN(t *testing.T) {
	k := newKey(t, jose.ES256, "k1")
	js := newJWKSServer(t, k)
	a := newArchive(t)
	b := a.NewBatch(2)
	for i := 0; i < 5; i++ {
		pa := paIssuer
		if i == 4 {
			pa = "https://someone-else.example"
		}
		res, _ := Verify(context.Background(), js.cache(), receipt(t, k, claims(func(c map[string]any) {
			c["ts"] = fmt.Sprintf("2026-09-30T12:00:%02dZ", i)
			c["pa"] = pa
		})), expectFor(js))
		if err := b.Add(res); err != nil {
			t.Fatal(err)
		}
		if items, _ := a.List(""); len(items) != (i+1)/2*2 {
			t.Fatalf("after %d adds %d archived, want %d", i+1, len(items), (i+1)/2*2)
		}
	}
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	items, _ := a.List("")
	if len(items) != 5 || !items[0].Verified || items[4].Verified {
		t.Fatalf("after Flush: %+v", items)
	}
}

// A receipt kept as rejected is known bad: with the Brand down, verify
// --all counts it as failed, not as "not checked" (exit 6, not 1).
func TestSection5_6_RejectedReceiptFailsWhenTheBrandIsDown(t *testing.T) {
	k := newKey(t, jose.ES256, "k1")
	js := newJWKSServer(t, k)
	a := newArchive(t)
	res, _ := Verify(context.Background(), js.cache(), receipt(t, k, claims(func(c map[string]any) { c["pa"] = "https://someone.else" })), expectFor(js))
	if _, err := a.Put(res); err != nil {
		t.Fatal(err)
	}
	js.srv.Close()
	a.Keys = jwks.NewCache(http.DefaultClient)
	checks, err := a.VerifyAll(context.Background(), true)
	if err != nil || len(checks) != 1 {
		t.Fatal(checks, err)
	}
	if c := checks[0]; c.Verified || c.Unchecked || !strings.Contains(strings.Join(c.Problems, " "), "kept as rejected") {
		t.Fatalf("verified=%v unchecked=%v %v", c.Verified, c.Unchecked, c.Problems)
	}
}
