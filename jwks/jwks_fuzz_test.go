package jwks

import (
	"encoding/json"
	"testing"
)

// FuzzParse checks Parse's promise as properties: it never panics, every
// key of an accepted set is public (no private or symmetric material) and
// has a kid, and an accepted set survives a marshal/Parse round trip with
// the same kids in the same order.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"keys":[{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0","kid":"k1","alg":"ES256","use":"sig"}]}`,
		`{"keys":[{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0","d":"jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI","kid":"k1"}]}`,
		`{"keys":[{"kty":"oct","k":"AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow","kid":"h"}]}`,
		`{"keys":[{"kty":"RSA","n":"0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw","e":"AQAB","kid":"r1"}]}`,
		`{"keys":[{"kty":"EC","crv":"P-256","x":"AA","y":"AA","kid":"bad"}]}`,
		`{"keys":[]}`, `{"keys":null}`, `{}`, `[]`, `null`, `{"keys":[{}]}`, `{"keys":[{"kty":"EC"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		set, err := Parse(data)
		if err != nil {
			if set != nil {
				t.Fatalf("Parse returned a set with error %v", err)
			}
			return
		}
		for i, k := range set.Keys {
			if !k.IsPublic() || k.KeyID == "" {
				t.Fatalf("key %d accepted: public=%v kid=%q", i, k.IsPublic(), k.KeyID)
			}
		}
		out, err := json.Marshal(set)
		if err != nil {
			t.Fatalf("accepted set does not marshal: %v", err)
		}
		again, err := Parse(out)
		if err != nil {
			t.Fatalf("accepted set does not round-trip: %v\n%s", err, out)
		}
		if len(again.Keys) != len(set.Keys) {
			t.Fatalf("round trip changed the key count %d → %d", len(set.Keys), len(again.Keys))
		}
		for i := range set.Keys {
			if again.Keys[i].KeyID != set.Keys[i].KeyID {
				t.Fatalf("round trip changed kid %d: %q → %q", i, set.Keys[i].KeyID, again.Keys[i].KeyID)
			}
		}
	})
}
