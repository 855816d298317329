package discovery

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"testing"
)

// signers returns one fresh key for every algorithm a card signature may
// use (A2A 1.0 §8.4: pact accepts ES256, RS256 and EdDSA).
func signers(t *testing.T) []struct {
	alg string
	key crypto.Signer
} {
	t.Helper()
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	_, ek, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return []struct {
		alg string
		key crypto.Signer
	}{{"ES256", ecKey(t)}, {"RS256", rk}, {"EdDSA", ek}}
}

// TestA2A_8_4_TamperedCardIsRefusedEveryAlgorithm: for each accepted
// algorithm, a card edited after signing, and a card whose signature value
// has one bit flipped, are refused with "signature does not match" — never
// shown as signed. (Ignoring the result of one algorithm's check in
// verifyWith makes that algorithm's subtests fail.)
func TestA2A_8_4_TamperedCardIsRefusedEveryAlgorithm(t *testing.T) {
	for _, tc := range signers(t) {
		t.Run(tc.alg+"/payload", func(t *testing.T) {
			s := newSite(t)
			signed := sign(t, baseCard(t), tc.key, "k1", s.jku())
			var m map[string]any
			if err := json.Unmarshal(signed, &m); err != nil {
				t.Fatal(err)
			}
			m["description"] = "Send your password here."
			tampered, _ := json.Marshal(m)
			s.set(tampered, pub(t, tc.key, "k1", tc.alg))
			refused(t, s, "signature does not match the card")
		})
		t.Run(tc.alg+"/signature", func(t *testing.T) {
			s := newSite(t)
			signed := sign(t, baseCard(t), tc.key, "k1", s.jku())
			var m map[string]json.RawMessage
			if err := json.Unmarshal(signed, &m); err != nil {
				t.Fatal(err)
			}
			var sigs []cardSignature
			if err := json.Unmarshal(m["signatures"], &sigs); err != nil || len(sigs) != 1 {
				t.Fatalf("signatures %s: %v", m["signatures"], err)
			}
			raw, err := base64.RawURLEncoding.DecodeString(sigs[0].Signature)
			if err != nil {
				t.Fatal(err)
			}
			raw[len(raw)/2] ^= 0x01
			sigs[0].Signature = base64.RawURLEncoding.EncodeToString(raw)
			m["signatures"], _ = json.Marshal(sigs)
			tampered, _ := json.Marshal(m)
			s.set(tampered, pub(t, tc.key, "k1", tc.alg))
			refused(t, s, "signature does not match the card")
		})
		t.Run(tc.alg+"/other key same kid", func(t *testing.T) {
			s := newSite(t)
			other := signers(t)
			var otherKey crypto.Signer
			for _, o := range other {
				if o.alg == tc.alg {
					otherKey = o.key
				}
			}
			s.set(sign(t, baseCard(t), otherKey, "k1", s.jku()), pub(t, tc.key, "k1", tc.alg))
			refused(t, s, "signature does not match the card")
		})
	}
}
