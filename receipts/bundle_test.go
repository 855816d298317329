package receipts

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"
)

// bundleOf writes a bundle of n receipts signed by k, as export does.
func bundleOf(t testing.TB, k testKey, n int) ([]byte, []string) {
	t.Helper()
	pub, _ := json.Marshal(k.jwk.Public())
	var buf bytes.Buffer
	var ids []string
	for i := range n {
		rc := receipt(t, k, claims(func(c map[string]any) { c["n"] = i }))
		if err := WriteBundleRecord(&buf, BundleRecord{JWS: rc.JWS, JWK: pub, JWKSURI: "https://brand.example/jwks.json"}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, rc.ID())
	}
	return buf.Bytes(), ids
}

func verifyAll(t *testing.T, data []byte) ([]BundleCheck, []*Result) {
	t.Helper()
	var checks []BundleCheck
	var results []*Result
	err := VerifyBundle(bytes.NewReader(data), func(c BundleCheck, r *Result) error {
		checks = append(checks, c)
		results = append(results, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return checks, results
}

func TestSection5_6_BundleExportedFromTheArchiveVerifiesAndImports(t *testing.T) {
	k := newKey(t, jose.ES256, "k1")
	js := newJWKSServer(t, k)
	src := newArchive(t)
	var ids []string
	for i := range 3 {
		res, err := Verify(t.Context(), js.cache(), receipt(t, k, claims(func(c map[string]any) { c["n"] = i })), expectFor(js))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := src.Put(res); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.ID)
	}
	var buf bytes.Buffer
	for _, id := range ids {
		e, err := src.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := BundleRecordFromEntry(e)
		if err != nil {
			t.Fatal(err)
		}
		WriteBundleRecord(&buf, rec)
	}
	// One line, as the format says.
	first, _, _ := strings.Cut(buf.String(), "\n")
	var line map[string]any
	if err := json.Unmarshal([]byte(first), &line); err != nil || line["jws"] == nil || line["jwk"] == nil || line["jwks_uri"] != js.srv.URL+"/jwks.json" || line["verifiedAt"] == nil {
		t.Fatalf("line = %s (%v)", first, err)
	}
	if _, private := line["jwk"].(map[string]any)["d"]; private {
		t.Fatal("the bundle carries a private key")
	}
	checks, results := verifyAll(t, buf.Bytes())
	dst := newArchive(t)
	for i, c := range checks {
		if !c.Verified || c.ID != ids[i] || c.Line != i+1 || len(c.Problems) != 0 {
			t.Fatalf("check %d = %+v", i, c)
		}
		if _, err := dst.Put(results[i]); err != nil {
			t.Fatal(err)
		}
	}
	items, err := dst.List("")
	if err != nil || len(items) != 3 || !items[0].Verified {
		t.Fatalf("imported = %+v, %v", items, err)
	}
	// Imported receipts verify again offline with the key that came along.
	again, err := dst.VerifyAll(t.Context(), false)
	if err != nil || len(again) != 3 || !again[0].Verified {
		t.Fatalf("verify after import = %+v, %v", again, err)
	}
	// A rejected receipt is not exported.
	bad := receipt(t, k, claims(func(c map[string]any) { c["pa"] = "https://someone.else" }))
	res, _ := Verify(t.Context(), js.cache(), bad, expectFor(js))
	e, _ := src.Put(res)
	if _, err := BundleRecordFromEntry(e); err == nil {
		t.Fatal("a rejected receipt was exported")
	}
}

func TestSection5_6_BundleLinesThatMustFail(t *testing.T) {
	k := newKey(t, jose.ES256, "k1")
	other := newKey(t, jose.ES256, "k2")
	hmac := newKey(t, jose.HS256, "k1")
	pub, _ := json.Marshal(k.jwk.Public())
	otherPub, _ := json.Marshal(other.jwk.Public())
	otherSameKid := other.jwk.Public()
	otherSameKid.KeyID = "k1"
	otherSameKidJSON, _ := json.Marshal(otherSameKid)
	private, _ := json.Marshal(k.jwk)
	good := receipt(t, k, claims(nil)).JWS
	parts := strings.Split(good, ".")
	tampered := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"pa":"x","brand":"y","grantId":"g","user":"u","ts":"2026-09-30T12:00:00Z"}`)) + "." + parts[2]
	noTS := receipt(t, k, claims(func(c map[string]any) { delete(c, "ts") })).JWS
	noUser := receipt(t, k, claims(func(c map[string]any) { delete(c, "user") })).JWS
	lines := []struct {
		name, line, want string
	}{
		{"good", fmt.Sprintf(`{"jws":%q,"jwk":%s}`, good, pub), ""},
		{"not JSON", `not json`, "not a JSON object"},
		{"no jwk", fmt.Sprintf(`{"jws":%q}`, good), "no jwk"},
		{"no jws", fmt.Sprintf(`{"jwk":%s}`, pub), "no jws"},
		{"another key", fmt.Sprintf(`{"jws":%q,"jwk":%s}`, good, otherPub), "kid"},
		{"another key, same kid", fmt.Sprintf(`{"jws":%q,"jwk":%s}`, good, otherSameKidJSON), "does not verify"},
		{"tampered payload", fmt.Sprintf(`{"jws":%q,"jwk":%s}`, tampered, pub), "does not verify"},
		{"private key", fmt.Sprintf(`{"jws":%q,"jwk":%s}`, good, private), "not a public key"},
		{"HMAC", fmt.Sprintf(`{"jws":%q,"jwk":{"kty":"oct","k":"MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY"}}`, receipt(t, hmac, claims(nil)).JWS), ""},
		{"no ts", fmt.Sprintf(`{"jws":%q,"jwk":%s}`, noTS, pub), "ts"},
		{"no user", fmt.Sprintf(`{"jws":%q,"jwk":%s}`, noUser, pub), "claims have no user"},
	}
	var data bytes.Buffer
	for _, l := range lines {
		data.WriteString(l.line + "\n\n") // blank lines are skipped, numbers kept
	}
	checks, results := verifyAll(t, data.Bytes())
	if len(checks) != len(lines) {
		t.Fatalf("%d checks for %d lines", len(checks), len(lines))
	}
	for i, l := range lines {
		c := checks[i]
		if c.Line != 2*i+1 {
			t.Errorf("%s: line %d, want %d", l.name, c.Line, 2*i+1)
		}
		if l.name == "good" {
			if !c.Verified || results[i] == nil {
				t.Errorf("good line: %+v", c)
			}
			continue
		}
		if c.Verified || results[i] != nil || len(c.Problems) == 0 {
			t.Errorf("%s: %+v verified", l.name, c)
		}
		if !strings.Contains(strings.Join(c.Problems, "; "), l.want) {
			t.Errorf("%s: problems %q, want %q", l.name, c.Problems, l.want)
		}
	}
}

func TestBundleCallbackErrorStopsTheImport(t *testing.T) {
	k := newKey(t, jose.ES256, "k1")
	data, _ := bundleOf(t, k, 50)
	stop := errors.New("disk full")
	n := 0
	err := VerifyBundle(bytes.NewReader(data), func(BundleCheck, *Result) error {
		n++
		if n == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 3 {
		t.Fatalf("err %v after %d lines", err, n)
	}
}

// The recipe of docs/json.md ("Receipt bundles"), with nothing but go-jose:
// it must accept what export writes.
func TestBundleRecipeWithAPlainJOSELibrary(t *testing.T) {
	k := newKey(t, jose.ES256, "k1")
	data, _ := bundleOf(t, k, 3)
	sc := bufio.NewScanner(bytes.NewReader(data))
	n := 0
	for sc.Scan() {
		// As written in docs/json.md: no tags (encoding/json matches
		// "jws" and "jwk" case-insensitively).
		var line struct {
			JWS string
			JWK jose.JSONWebKey
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		sig, err := jose.ParseSignedCompact(line.JWS, []jose.SignatureAlgorithm{jose.ES256, jose.RS256})
		if err != nil {
			t.Fatal(err)
		}
		claims, err := sig.Verify(&line.JWK)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(claims), `"brand"`) {
			t.Fatalf("payload %s", claims)
		}
		n++
	}
	if n != 3 {
		t.Fatalf("%d lines", n)
	}
}

func TestVerifiedEntryReadsByFullIDOnly(t *testing.T) {
	k := newKey(t, jose.ES256, "k1")
	js := newJWKSServer(t, k)
	a := newArchive(t)
	res, _ := Verify(t.Context(), js.cache(), receipt(t, k, claims(nil)), expectFor(js))
	a.Put(res)
	if e, err := a.VerifiedEntry(res.ID); err != nil || e.ID != res.ID || !e.Verified {
		t.Fatalf("VerifiedEntry = %+v, %v", e, err)
	}
	if _, err := a.VerifiedEntry(res.ID[:12]); !errors.Is(err, ErrBadID) {
		t.Fatalf("a prefix: %v", err)
	}
	if _, err := a.VerifiedEntry("../../etc/passwd"); !errors.Is(err, ErrBadID) {
		t.Fatalf("a path: %v", err)
	}
	if _, err := a.VerifiedEntry(strings.Repeat("0", 64)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown: %v", err)
	}
}

// A bundle line signed by any key verifies with that key; import must also
// find the key in the Brand's published set (issue: forged receipts were
// archived as verified).
func TestSection5_6_ImportChecksTheKeyIsPublishedByTheBrand(t *testing.T) {
	brandKey := newKey(t, jose.ES256, "k1")
	js := newJWKSServer(t, brandKey)
	lineOf := func(k testKey) *Result {
		pub, _ := json.Marshal(k.jwk.Public())
		rc := receipt(t, k, claims(nil))
		res, err := VerifyBundleRecord(BundleRecord{JWS: rc.JWS, JWK: pub, JWKSURI: "https://attacker.example/jwks.json"})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	uri := js.srv.URL + "/jwks.json"
	// The Brand's own key: accepted, and the jwks_uri kept is the Brand's.
	res := lineOf(brandKey)
	if p, err := CheckPublished(t.Context(), js.cache(), res, uri); err != nil || len(p) != 0 || res.Expect.JWKSURI != uri {
		t.Fatalf("brand key: %v, %v, %q", p, err, res.Expect.JWKSURI)
	}
	// A fresh key under another kid: refused.
	if p, err := CheckPublished(t.Context(), js.cache(), lineOf(newKey(t, jose.ES256, "forged")), uri); err != nil || len(p) == 0 {
		t.Fatalf("forged kid: %v, %v", p, err)
	}
	// A fresh key under the Brand's kid: refused (thumbprint differs).
	if p, err := CheckPublished(t.Context(), js.cache(), lineOf(newKey(t, jose.ES256, "k1")), uri); err != nil || len(p) == 0 {
		t.Fatalf("forged key under the Brand's kid: %v, %v", p, err)
	}
	// The Brand down: not checked, never verified.
	js.srv.Close()
	if _, err := CheckPublished(t.Context(), newJWKSServer(t).cache(), lineOf(brandKey), "http://127.0.0.1:1/jwks.json"); !errors.Is(err, ErrKeysUnavailable) {
		t.Fatalf("brand down: %v", err)
	}
}

// A bundle line's cardUrl and brandName are labels: archived with the
// receipt to name its Brand (list and show), verifying nothing.
func TestBundleLabelsNameTheBrandAndVerifyNothing(t *testing.T) {
	k := newKey(t, jose.ES256, "k1")
	pub, _ := json.Marshal(k.jwk.Public())
	rc := receipt(t, k, claims(nil))
	plain, err := VerifyBundleRecord(BundleRecord{JWS: rc.JWS, JWK: pub})
	if err != nil {
		t.Fatal(err)
	}
	res, err := VerifyBundleRecord(BundleRecord{JWS: rc.JWS, JWK: pub, CardURL: "https://example.com/.well-known/agent-card.json", BrandName: "Example Co. Support"})
	if err != nil || !res.Verified() || res.Verified() != plain.Verified() {
		t.Fatalf("labelled line: %v %v", res.Problems, err)
	}
	if res.Expect.Card != "https://example.com/.well-known/agent-card.json" || res.Expect.BrandName != "Example Co. Support" {
		t.Fatalf("expect = %+v", res.Expect)
	}
	if bad, _ := VerifyBundleRecord(BundleRecord{JWS: rc.JWS, JWK: pub, CardURL: "javascript:alert(1)"}); bad.Expect.Card != "" {
		t.Fatalf("a non-http cardUrl was kept: %q", bad.Expect.Card)
	}
	a := newArchive(t)
	if _, err := a.Put(res); err != nil {
		t.Fatal(err)
	}
	items, err := a.List("example.com")
	if err != nil || len(items) != 1 || items[0].CardURL != res.Expect.Card || items[0].BrandName != "Example Co. Support" {
		t.Fatalf("listed under the card's host: %+v %v", items, err)
	}
	e, err := a.Get(res.ID)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := BundleRecordFromEntry(e)
	if err != nil || rec.CardURL != res.Expect.Card || rec.BrandName != "Example Co. Support" {
		t.Fatalf("exported again: %+v %v", rec, err)
	}
}
