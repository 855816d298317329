package receipts

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// FuzzVerifyOffline checks §5.6 receipt verification as properties. Each
// input is a payload (signed with the trusted ES256 key when sign is true),
// a JWS used as given when sign is false, and the claims shown next to it.
// Whatever the input, VerifyOffline never panics, always returns a Result,
// and a receipt it calls verified has: a signature that plain go-jose
// verifies with the trusted key under ES256; pa, brand, grantId and user
// equal to the expectation; scopesUsed within the granted scopes; an
// RFC 3339 ts; and shown claims that are the signed payload as JSON values.
func FuzzVerifyOffline(f *testing.F) {
	k := newKey(f, jose.ES256, "k1")
	pub := k.jwk.Public()
	hs := newKey(f, jose.HS256, "k1")
	exp := Expect{PA: paIssuer, Brand: iface, GrantID: "a2agrant_1", User: "jane-4471", Scopes: []string{"orders:read", "orders:cancel"}}
	good, _ := json.Marshal(claims(nil))
	f.Add(good, true, "", good)
	f.Add(good, true, "", []byte(nil))
	f.Add(good, true, "", []byte(`null`))
	f.Add(good, true, "", []byte(` {"pa":"x"} `))
	f.Add([]byte(`{"pa":"https://pa.example.com","brand":"`+iface+`","grantId":"a2agrant_1","user":"jane-4471","scopesUsed":["admin"],"ts":"yesterday"}`), true, "", []byte(nil))
	f.Add([]byte(`[]`), true, "", []byte(nil))
	f.Add(good, false, k.signBytes(f, good), good)
	f.Add(good, false, hs.signBytes(f, good), good)
	f.Add(good, false, "eyJhbGciOiJub25lIn0.e30.", good)
	f.Add(good, false, "a.b.c", []byte(`{}`))
	f.Add(good, false, "", []byte(nil))
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: k.jwk}, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, payload []byte, sign bool, jws string, shown []byte) {
		if sign {
			obj, err := signer.Sign(payload)
			if err != nil {
				t.Fatal(err)
			}
			jws, _ = obj.CompactSerialize()
		}
		rc := Receipt{JWS: jws, Claims: json.RawMessage(shown)}
		res, err := VerifyOffline(rc, &pub, exp)
		if res == nil {
			t.Fatalf("no Result (err %v)", err)
		}
		if res.ID != rc.ID() {
			t.Fatalf("Result.ID %q, want %q", res.ID, rc.ID())
		}
		if !res.Verified() {
			if err == nil {
				t.Fatalf("not verified but no error")
			}
			return
		}
		if err != nil {
			t.Fatalf("verified with error %v", err)
		}
		obj, perr := jose.ParseSignedCompact(jws, []jose.SignatureAlgorithm{jose.ES256})
		if perr != nil {
			t.Fatalf("verified a JWS go-jose does not parse as ES256: %v", perr)
		}
		signed, verr := obj.Verify(pub)
		if verr != nil {
			t.Fatalf("verified a JWS whose signature go-jose rejects: %v", verr)
		}
		c := res.Claims
		if c == nil || c.PA != exp.PA || c.Brand != exp.Brand || c.GrantID != exp.GrantID || c.User != exp.User {
			t.Fatalf("verified claims do not match the expectation: %+v", c)
		}
		for _, s := range c.ScopesUsed {
			if s != "orders:read" && s != "orders:cancel" {
				t.Fatalf("verified a receipt using scope %q not granted", s)
			}
		}
		if _, err := time.Parse(time.RFC3339, c.TS); err != nil {
			t.Fatalf("verified ts %q", c.TS)
		}
		var a, b any
		if json.Unmarshal(shown, &b) == nil && b != nil {
			if json.Unmarshal(signed, &a) != nil || !reflect.DeepEqual(a, b) {
				t.Fatalf("verified although shown claims %s differ from the signed payload %s", shown, signed)
			}
		}
	})
}
