package demoprovider

import (
	"crypto"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"

	"github.com/go-jose/go-jose/v4"

	"github.com/pact-cli/pact/discovery"
)

// brandKey is a Brand's card-signing key (Ed25519). It is derived from the
// brandId, so a restarted demo keeps its Brands' keys and pact's pins stay
// valid; the rogue key is another one, for Config.RogueCard. These are demo
// keys, public by construction: never use the scheme for real keys.
func brandKey(b *brandDef, rogue bool) (ed25519.PrivateKey, string) {
	label := "pact demo brand card key v1 " + b.id
	if rogue {
		label = "pact demo ROGUE card key v1 " + b.id
	}
	seed := sha256.Sum256([]byte(label))
	k := ed25519.NewKeyFromSeed(seed[:])
	jwk := jose.JSONWebKey{Key: k.Public()}
	tp, _ := jwk.Thumbprint(crypto.SHA256)
	return k, base64.RawURLEncoding.EncodeToString(tp)[:16]
}

// siteJWKS serves the Brand's public card-signing keys at its site's
// /.well-known/jwks.json (with the rogue key too when the rogue card is on).
func (s *Server) siteJWKS(w http.ResponseWriter, b *brandDef) {
	var set jose.JSONWebKeySet
	for _, rogue := range []bool{false, true} {
		if rogue && !s.cfg.RogueCard {
			continue
		}
		k, kid := brandKey(b, rogue)
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: k.Public(), KeyID: kid, Algorithm: "EdDSA", Use: "sig"})
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	json.NewEncoder(w).Encode(set)
}

// serveSiteCard serves the Brand's own copy of its card at its site,
// signed with the Brand's key (A2A §8.4; jku on the site's origin). With
// Config.RogueCard the first request gets the real card and every later one
// a card signed by another key, so pact's pin warning can be seen.
func (s *Server) serveSiteCard(w http.ResponseWriter, r *http.Request, b *brandDef) {
	raw, err := s.cardJSON(b)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	rogue := false
	if s.cfg.RogueCard {
		s.mu.Lock()
		if s.siteCardHits == nil {
			s.siteCardHits = map[string]int{}
		}
		s.siteCardHits[b.id]++
		rogue = s.siteCardHits[b.id] > 1
		s.mu.Unlock()
	}
	k, kid := brandKey(b, rogue)
	signed, err := discovery.SignCard(raw, k, kid, s.sites[b.id]+"/.well-known/jwks.json")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if s.cfg.RogueCard {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.Write(signed)
		return
	}
	// Like the Provider's copy: cacheable, with validators (conformance.go).
	w.Header().Set("Cache-Control", "public, max-age=300")
	s.serveCacheable(w, r, signed, "application/json")
}
