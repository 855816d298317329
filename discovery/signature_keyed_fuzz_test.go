package discovery

import (
	"bytes"
	"context"
	"crypto"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"testing"

	"github.com/go-jose/go-jose/v4"
)

// fuzzCardURL and fuzzJKU are the Brand of the keyed fuzz target; nothing
// leaves the process (keyServer answers in memory).
const (
	fuzzCardURL = "https://b.example/.well-known/agent-card.json"
	fuzzJKU     = "https://b.example/.well-known/jwks.json"
)

// keyServer is an in-memory http.RoundTripper that serves the public halves
// of keys at fuzzJKU and 404 elsewhere.
type keyServer struct{ jwks []byte }

func (s keyServer) RoundTrip(r *http.Request) (*http.Response, error) {
	status, body := http.StatusNotFound, []byte("not found")
	if r.URL.String() == fuzzJKU {
		status, body = http.StatusOK, s.jwks
	}
	return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(bytes.NewReader(body)), Request: r}, nil
}

// fuzzSigningKeys reads testdata/fuzz-signing-keys.json: fixed test keys
// (ES256, RS256, EdDSA), so that the fuzzing engine's worker processes all
// verify with the same keys the seeds were signed with. They sign nothing
// but these tests.
func fuzzSigningKeys(f *testing.F) []jose.JSONWebKey {
	f.Helper()
	data, err := os.ReadFile("testdata/fuzz-signing-keys.json")
	if err != nil {
		f.Fatal(err)
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(data, &set); err != nil || len(set.Keys) != 3 {
		f.Fatalf("fuzz keys: %v (%d keys)", err, len(set.Keys))
	}
	return set.Keys
}

// FuzzA2A_8_4_VerifyWithKeys reaches the signature maths: the card's jku
// serves real ES256, RS256 and EdDSA keys, and the seeds are cards signed
// with each, as well as the same cards tampered (payload edited, signature
// bit flipped, header swapped). The property: Verify says "verified" only
// for a card whose signed content (RFC 8785 form without "signatures") is
// exactly one that the test keys signed — the fuzzer holds no private key,
// so anything else it makes that verifies is a forgery pact accepted.
func FuzzA2A_8_4_VerifyWithKeys(f *testing.F) {
	keys := fuzzSigningKeys(f)
	pubs := make([]any, len(keys))
	for i, k := range keys {
		pubs[i] = k.Public()
	}
	jwks, _ := json.Marshal(map[string]any{"keys": pubs})
	hc := &http.Client{Transport: keyServer{jwks: jwks}}

	base, err := os.ReadFile("testdata/card-delegated.json")
	if err != nil {
		f.Fatal(err)
	}
	signedInput, err := SigningInput(base)
	if err != nil {
		f.Fatal(err)
	}
	var all []byte = base
	for _, k := range keys {
		one, err := SignCard(base, k.Key.(crypto.Signer), k.KeyID, fuzzJKU)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(one)
		f.Add(bytes.Replace(one, []byte(`"name":`), []byte(`"name":"x","was":`), 1)) // payload edited
		f.Add(flipSignatureBit(one))
		if all, err = SignCard(all, k.Key.(crypto.Signer), k.KeyID, fuzzJKU); err != nil {
			f.Fatal(err)
		}
	}
	f.Add(all)
	f.Add(flipSignatureBit(all))

	f.Fuzz(func(t *testing.T, data []byte) {
		sig, err := Verify(context.Background(), hc, fuzzCardURL, data)
		if sig == nil {
			t.Fatal("nil result")
		}
		if err == nil && sig.Signed && !sig.Verified {
			t.Fatalf("a signed card that did not verify was accepted: %+v", sig)
		}
		if !sig.Verified {
			return
		}
		if err != nil || len(sig.Thumbprints) == 0 {
			t.Fatalf("verified without a key: %+v %v", sig, err)
		}
		got, ierr := SigningInput(data)
		if ierr != nil || !bytes.Equal(got, signedInput) {
			t.Fatalf("a card the test keys never signed verified (alg %s, kid %q):\n%s", sig.Alg, sig.KID, got)
		}
	})
}

// flipSignatureBit flips one bit in the middle of every signature value
// of the signed card raw.
func flipSignatureBit(raw []byte) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return raw
	}
	var sigs []cardSignature
	if json.Unmarshal(m["signatures"], &sigs) != nil {
		return raw
	}
	for i := range sigs {
		b, err := base64.RawURLEncoding.DecodeString(sigs[i].Signature)
		if err != nil || len(b) == 0 {
			continue
		}
		b[len(b)/2] ^= 0x10
		sigs[i].Signature = base64.RawURLEncoding.EncodeToString(b)
	}
	m["signatures"], _ = json.Marshal(sigs)
	out, _ := json.Marshal(m)
	return out
}
