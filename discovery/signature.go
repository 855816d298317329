package discovery

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"unicode"

	"github.com/go-jose/go-jose/v4"
	"github.com/gowebpki/jcs"

	"github.com/pact-cli/pact/httpx"
)

// Signature is what pact found of an Agent Card's JWS signatures
// (A2A 1.0 §8.4). It is `pact.signature` in `pact card --json`.
//
// Verified is true when at least one signature verified; KID and KeyURL
// then name the key that did (the first one). Problems lists, in plain
// words, every signature that did not verify; a card with signatures none of
// which verifies is refused (Fetch returns an *InvalidCardError).
// An unsigned card has Verified false and no problems.
type Signature struct {
	Verified bool     `json:"verified"`
	KID      string   `json:"kid"`
	KeyURL   string   `json:"keyUrl"`
	Problems []string `json:"problems"`

	// Signer is the host of the Brand origin whose key verified the card
	// ("signed by Signer ✓"); "" when unsigned.
	Signer string `json:"-"`
	// Thumbprints are the RFC 7638 SHA-256 thumbprints (base64url) of
	// every key that verified a signature, in the card's order.
	Thumbprints []string `json:"-"`
	// Signed is true when the card carries any signature.
	Signed bool `json:"-"`
	// Alg is the alg of the first signature that verified.
	Alg string `json:"-"`
}

// Thumbprint is the RFC 7638 thumbprint of the first key that verified the
// card, "" when none did.
func (s *Signature) Thumbprint() string {
	if s == nil || len(s.Thumbprints) == 0 {
		return ""
	}
	return s.Thumbprints[0]
}

// KeyAlg is the algorithm of the verifying signature ("" when none).
func (s *Signature) KeyAlg() string {
	if s == nil {
		return ""
	}
	return s.Alg
}

// Label is the human summary: "signed by DOMAIN ✓" or "unsigned".
func (s *Signature) Label() string {
	if s != nil && s.Verified {
		return "signed by " + s.Signer + " ✓"
	}
	return "unsigned"
}

// MaxKeySetSize is the largest JWKS read from a card signature's jku (256 KiB).
const MaxKeySetSize = 256 << 10

// maxSignatures bounds the work one card can ask for (each may fetch keys).
const maxSignatures = 8

// cardSignature is one entry of the card's "signatures" (A2A 1.0 §8.4.2):
// a JWS in the flattened JSON form with a detached payload.
type cardSignature struct {
	Protected string         `json:"protected"`
	Signature string         `json:"signature"`
	Header    map[string]any `json:"header,omitempty"`
}

// protectedHeader is the part of the JWS protected header pact reads.
// Member names are case-sensitive (RFC 7515 §4): parseProtectedHeader
// reads them exactly, never through Go's case-insensitive field matching.
type protectedHeader struct {
	Alg  string
	KID  string
	JKU  string
	Typ  *string
	Crit []string
}

// parseProtectedHeader reads a JWS protected header exactly: a JSON object
// whose member names are matched case-sensitively, with no member twice
// (RFC 7515 §4, RFC 7159 §4), in which "alg", "kid" and "jku" are strings
// ("typ" a string and "crit" a list of strings when present). A header with
// "ALG" but no "alg" has no algorithm.
func parseProtectedHeader(data []byte) (protectedHeader, error) {
	var h protectedHeader
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return h, errors.New("the protected header is not a JSON object")
	}
	members := map[string]json.RawMessage{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return h, fmt.Errorf("the protected header is not a JSON object: %v", err)
		}
		name, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return h, fmt.Errorf("the protected header is not a JSON object: %v", err)
		}
		if _, dup := members[name]; dup {
			return h, fmt.Errorf("the protected header has member %q twice", printable(name))
		}
		members[name] = v
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return h, errors.New("the protected header is not a JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return h, errors.New("the protected header has data after its JSON object")
	}
	str := func(name string, dst *string) error {
		v, ok := members[name]
		if !ok {
			return nil
		}
		if err := json.Unmarshal(v, dst); err != nil || string(v) == "null" {
			return fmt.Errorf("the protected header's %q is not a string", name)
		}
		return nil
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"alg", &h.Alg}, {"kid", &h.KID}, {"jku", &h.JKU}} {
		if err := str(f.name, f.dst); err != nil {
			return h, err
		}
	}
	if _, ok := members["typ"]; ok {
		h.Typ = new(string)
		if err := str("typ", h.Typ); err != nil {
			return h, err
		}
	}
	if v, ok := members["crit"]; ok {
		if err := json.Unmarshal(v, &h.Crit); err != nil || h.Crit == nil {
			return h, errors.New("the protected header's \"crit\" is not a list of names")
		}
		if len(h.Crit) == 0 {
			h.Crit = []string{""} // RFC 7515 §4.1.11: an empty list is not allowed
		}
	}
	return h, nil
}

// SigningInput returns the canonical bytes an Agent Card signature covers
// (A2A 1.0 §8.4.1): the RFC 8785 (JCS) form of the card JSON object with
// its "signatures" member removed.
func SigningInput(card []byte) ([]byte, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(card, &obj); err != nil {
		return nil, fmt.Errorf("the card is not a JSON object: %v", err)
	}
	delete(obj, "signatures")
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	out, err := jcs.Transform(raw)
	if err != nil {
		return nil, fmt.Errorf("canonicalising the card (RFC 8785): %v", err)
	}
	return out, nil
}

// BrandOrigin is the origin a card's signing keys must come from: the
// origin of the card URL asked for (the domain the User named, or the card
// URL given), never the host a redirect led to.
func BrandOrigin(cardURL string) (string, error) {
	u, err := url.Parse(cardURL)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("card URL %q has no origin", cardURL)
	}
	return originOf(u), nil
}

// originOf is scheme://host[:port], lower-cased, default ports dropped.
func originOf(u *url.URL) string {
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	scheme := strings.ToLower(u.Scheme)
	if (scheme == "https" && port == "443") || (scheme == "http" && port == "80") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host
}

// Verify checks the signatures of the card served for cardURL (raw is the
// card as received) per A2A 1.0 §8.4, with keys fetched by client (an httpx
// client). Every signature must have a protected header with alg ES256,
// RS256 or EdDSA, a kid, and a jku on the Brand's origin (BrandOrigin);
// typ, when present, must be "JOSE". The key with that kid is taken from
// the JWKS at jku and must match alg.
//
// The result lists each failing signature in Problems. err is non-nil only
// when the card is signed and no signature verified; its text says which
// check failed.
func Verify(ctx context.Context, client *http.Client, cardURL string, raw []byte) (*Signature, error) {
	res := &Signature{Problems: []string{}}
	var env struct {
		Signatures json.RawMessage `json:"signatures"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return res, fmt.Errorf("the card is not a JSON object: %v", err)
	}
	if len(env.Signatures) == 0 || string(env.Signatures) == "null" {
		return res, nil
	}
	var sigs []json.RawMessage
	if err := json.Unmarshal(env.Signatures, &sigs); err != nil {
		res.Signed = true
		res.Problems = append(res.Problems, "\"signatures\" is not a list")
		return res, errors.New("signature check failed: \"signatures\" is not a list")
	}
	if len(sigs) == 0 {
		return res, nil
	}
	res.Signed = true
	if len(sigs) > maxSignatures {
		res.Problems = append(res.Problems, fmt.Sprintf("the card carries %d signatures; at most %d are checked", len(sigs), maxSignatures))
		sigs = sigs[:maxSignatures]
	}
	origin, err := BrandOrigin(cardURL)
	if err != nil {
		return res, err
	}
	payload, err := SigningInput(raw)
	if err != nil {
		res.Problems = append(res.Problems, err.Error())
		return res, fmt.Errorf("signature check failed: %v", err)
	}
	keys := map[string][]json.RawMessage{} // jku → keys, fetched once per card
	for i, sraw := range sigs {
		kid, jku, tp, alg, err := verifyOne(ctx, client, origin, payload, sraw, keys)
		if err != nil {
			res.Problems = append(res.Problems, fmt.Sprintf("signature %d: %v", i+1, err))
			continue
		}
		if !res.Verified {
			res.Verified, res.KID, res.KeyURL, res.Alg = true, printable(kid), jku, alg
			res.Signer = strings.TrimPrefix(strings.TrimPrefix(origin, "https://"), "http://")
		}
		res.Thumbprints = append(res.Thumbprints, tp)
	}
	if !res.Verified {
		return res, fmt.Errorf("signature check failed: %s", strings.Join(res.Problems, "; "))
	}
	return res, nil
}

// verifyOne checks one signature and returns the kid, key URL and RFC 7638
// thumbprint of the key that verified it.
func verifyOne(ctx context.Context, client *http.Client, origin string, payload, sraw []byte, cache map[string][]json.RawMessage) (kid, jku, thumb, alg string, err error) {
	kid, jku, thumb, err = verifySig(ctx, client, origin, payload, sraw, cache, &alg)
	return kid, jku, thumb, alg, err
}

// printable replaces runes that are not printable (terminal controls) with
// U+FFFD: a kid is text from the other side.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if !unicode.IsPrint(r) {
			return '\uFFFD'
		}
		return r
	}, s)
}

func verifySig(ctx context.Context, client *http.Client, origin string, payload, sraw []byte, cache map[string][]json.RawMessage, alg *string) (kid, jku, thumb string, err error) {
	var sig cardSignature
	if err := json.Unmarshal(sraw, &sig); err != nil {
		return "", "", "", fmt.Errorf("not a JWS object: %v", err)
	}
	hdrBytes, err := base64.RawURLEncoding.DecodeString(sig.Protected)
	if err != nil || sig.Protected == "" {
		return "", "", "", errors.New("the protected header is missing or not base64url")
	}
	h, err := parseProtectedHeader(hdrBytes)
	if err != nil {
		return "", "", "", err
	}
	*alg = h.Alg
	switch h.Alg {
	case "ES256", "RS256", "EdDSA":
	case "":
		return "", "", "", errors.New("the protected header names no algorithm (alg)")
	default:
		return "", "", "", fmt.Errorf("algorithm %q is not accepted (only ES256, RS256 and EdDSA)", h.Alg)
	}
	if h.Typ != nil && !strings.EqualFold(*h.Typ, "JOSE") {
		return "", "", "", fmt.Errorf("type (typ) %q is not \"JOSE\"", *h.Typ)
	}
	if len(h.Crit) > 0 {
		return "", "", "", fmt.Errorf("the protected header marks %q as critical, which pact does not understand", strings.Join(h.Crit, ", "))
	}
	if h.KID == "" {
		return "", "", "", errors.New("the protected header names no key (kid)")
	}
	if h.JKU == "" {
		return h.KID, "", "", errors.New("the protected header gives no key URL (jku)")
	}
	ju, err := url.Parse(h.JKU)
	if err != nil || ju.Host == "" || ju.User != nil {
		return h.KID, h.JKU, "", fmt.Errorf("the key URL %q is not a valid absolute URL", h.JKU)
	}
	if originOf(ju) != origin {
		return h.KID, h.JKU, "", fmt.Errorf("the key URL %s is not on the Brand's own origin %s", h.JKU, origin)
	}
	if err := httpx.CheckURL(ju); err != nil {
		return h.KID, h.JKU, "", fmt.Errorf("the key URL: %v", err)
	}
	sigBytes, err := base64.RawURLEncoding.DecodeString(sig.Signature)
	if err != nil || sig.Signature == "" {
		return h.KID, h.JKU, "", errors.New("the signature value is missing or not base64url")
	}
	set, ok := cache[h.JKU]
	if !ok {
		set, err = fetchKeys(ctx, client, h.JKU, origin)
		if err != nil {
			return h.KID, h.JKU, "", err
		}
		cache[h.JKU] = set
	}
	key, err := findKey(set, h.KID)
	if err != nil {
		return h.KID, h.JKU, "", fmt.Errorf("%v at %s", err, h.JKU)
	}
	input := sig.Protected + "." + base64.RawURLEncoding.EncodeToString(payload)
	if err := verifyWith(key, h.Alg, []byte(input), sigBytes); err != nil {
		return h.KID, h.JKU, "", err
	}
	tp, err := key.Thumbprint(crypto.SHA256)
	if err != nil {
		return h.KID, h.JKU, "", fmt.Errorf("computing the key's thumbprint: %v", err)
	}
	return h.KID, h.JKU, base64.RawURLEncoding.EncodeToString(tp), nil
}

// fetchKeys GETs the JWKS at jku and returns its keys unparsed. The answer
// must come from origin as well (a redirect elsewhere is refused).
func fetchKeys(ctx context.Context, client *http.Client, jku, origin string) ([]json.RawMessage, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, jku, nil)
	if err != nil {
		return nil, fmt.Errorf("the key URL: %v", err)
	}
	req.Header.Set("Accept", httpx.AcceptJWKS)
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching the signing keys: %w", httpx.Describe(err))
	}
	defer resp.Body.Close()
	if got := originOf(resp.Request.URL); got != origin {
		return nil, fmt.Errorf("the key URL %s redirected to %s, which is not the Brand's own origin", jku, got)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetching the signing keys at %s: HTTP %d", jku, resp.StatusCode)
	}
	data, err := httpx.ReadBody(resp.Body, MaxKeySetSize)
	if err != nil {
		return nil, fmt.Errorf("fetching the signing keys at %s: %v", jku, err)
	}
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("the signing keys at %s are not a JSON Web Key Set: %v", jku, err)
	}
	return doc.Keys, nil
}

// findKey parses the keys one by one and returns the public key with kid.
// Keys pact cannot read (an unknown kty, say) are skipped, so one odd key
// does not hide the others; a private key is refused.
func findKey(set []json.RawMessage, kid string) (*jose.JSONWebKey, error) {
	for _, raw := range set {
		var probe struct {
			KID string `json:"kid"`
		}
		if json.Unmarshal(raw, &probe) != nil || probe.KID != kid {
			continue
		}
		var k jose.JSONWebKey
		if err := k.UnmarshalJSON(raw); err != nil {
			continue
		}
		if !k.IsPublic() {
			return nil, fmt.Errorf("key %q is published with its private half", kid)
		}
		return &k, nil
	}
	return nil, fmt.Errorf("no usable key with kid %q", kid)
}

// verifyWith checks sig over input with key for alg (the key type must
// match the algorithm).
func verifyWith(key *jose.JSONWebKey, alg string, input, sig []byte) error {
	bad := errors.New("the signature does not match the card (the card was changed after signing, or signed with another key)")
	switch alg {
	case "ES256":
		pk, ok := key.Key.(*ecdsa.PublicKey)
		if !ok || pk.Curve != elliptic.P256() {
			return fmt.Errorf("key %q is not a P-256 key, as ES256 needs", key.KeyID)
		}
		if len(sig) != 64 {
			return bad
		}
		d := sha256.Sum256(input)
		r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
		if !ecdsa.Verify(pk, d[:], r, s) {
			return bad
		}
	case "RS256":
		pk, ok := key.Key.(*rsa.PublicKey)
		if !ok {
			return fmt.Errorf("key %q is not an RSA key, as RS256 needs", key.KeyID)
		}
		if pk.N.BitLen() < 2048 {
			return fmt.Errorf("key %q is an RSA key shorter than 2048 bits", key.KeyID)
		}
		d := sha256.Sum256(input)
		if rsa.VerifyPKCS1v15(pk, crypto.SHA256, d[:], sig) != nil {
			return bad
		}
	case "EdDSA":
		pk, ok := key.Key.(ed25519.PublicKey)
		if !ok {
			return fmt.Errorf("key %q is not an Ed25519 key, as EdDSA needs", key.KeyID)
		}
		if !ed25519.Verify(pk, input, sig) {
			return bad
		}
	}
	return nil
}

// SignCard adds a signature to the card JSON object raw (A2A 1.0 §8.4):
// a JWS with protected header {alg, kid, jku, typ: "JOSE"} over the RFC 8785
// form of the card without "signatures", with a detached payload. Existing
// signatures are kept. key is an *ecdsa.PrivateKey (ES256), *rsa.PrivateKey
// (RS256) or ed25519.PrivateKey (EdDSA). Used by the demo Provider and tests.
func SignCard(raw []byte, key crypto.Signer, kid, jku string) ([]byte, error) {
	var alg string
	switch key.(type) {
	case *ecdsa.PrivateKey:
		alg = "ES256"
	case *rsa.PrivateKey:
		alg = "RS256"
	case ed25519.PrivateKey:
		alg = "EdDSA"
	default:
		return nil, fmt.Errorf("unsupported key type %T", key)
	}
	hdr, _ := json.Marshal(map[string]string{"alg": alg, "kid": kid, "jku": jku, "typ": "JOSE"})
	return SignCardHeader(raw, key, hdr)
}

// SignCardHeader is SignCard with the protected header given verbatim
// (tests use it to forge headers).
func SignCardHeader(raw []byte, key crypto.Signer, header []byte) ([]byte, error) {
	payload, err := SigningInput(raw)
	if err != nil {
		return nil, err
	}
	prot := base64.RawURLEncoding.EncodeToString(header)
	input := []byte(prot + "." + base64.RawURLEncoding.EncodeToString(payload))
	var sig []byte
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		d := sha256.Sum256(input)
		r, s, err := ecdsa.Sign(rand.Reader, k, d[:])
		if err != nil {
			return nil, err
		}
		sig = make([]byte, 64)
		r.FillBytes(sig[:32])
		s.FillBytes(sig[32:])
	case *rsa.PrivateKey:
		d := sha256.Sum256(input)
		if sig, err = rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, d[:]); err != nil {
			return nil, err
		}
	case ed25519.PrivateKey:
		sig = ed25519.Sign(k, input)
	default:
		return nil, fmt.Errorf("unsupported key type %T", key)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	var sigs []json.RawMessage
	if s, ok := obj["signatures"]; ok {
		if err := json.Unmarshal(s, &sigs); err != nil {
			return nil, fmt.Errorf("existing signatures: %v", err)
		}
	}
	one, _ := json.Marshal(cardSignature{Protected: prot, Signature: base64.RawURLEncoding.EncodeToString(sig)})
	sigs = append(sigs, one)
	obj["signatures"], _ = json.Marshal(sigs)
	return json.Marshal(obj)
}
