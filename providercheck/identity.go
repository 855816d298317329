package providercheck

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	"github.com/pact-cli/pact/signer"
)

// badToken is one personal-agent JWT a Provider must refuse (§3.2).
type badToken struct {
	id, title, sends string
	make             func(f *forge) (string, error)
}

// forge makes PA JWTs for the run's registration: the claims a good token
// has (claims), changed as each check needs, signed with the profile's key
// (signer.SignJWS) or, for algorithms that key cannot make, a throw-away
// key that is published nowhere.
type forge struct {
	s        *signer.Signer
	aud, sub string
	now      time.Time
}

func (f *forge) claims() map[string]any {
	n := f.now.Unix()
	return map[string]any{"iss": f.s.Issuer(), "sub": f.sub, "aud": f.aud, "iat": n, "exp": n + 120, "jti": randomID("")}
}

func (f *forge) header() map[string]any {
	return map[string]any{"alg": f.s.Alg(), "kid": f.s.KID(), "typ": "JWT"}
}

// signed signs claims with the profile's key as its own alg.
func (f *forge) signed(claims map[string]any) (string, error) {
	return f.sign(f.header(), claims)
}

func (f *forge) sign(h, claims map[string]any) (string, error) {
	p, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	return f.s.SignJWS(h, p, f.s.Alg())
}

var b64 = base64.RawURLEncoding

// compact joins a header, claims and raw signature bytes.
func compact(h, claims map[string]any, sig func(input []byte) ([]byte, error)) (string, error) {
	hb, _ := json.Marshal(h)
	cb, _ := json.Marshal(claims)
	input := b64.EncodeToString(hb) + "." + b64.EncodeToString(cb)
	s, err := sig([]byte(input))
	if err != nil {
		return "", err
	}
	return input + "." + b64.EncodeToString(s), nil
}

// with returns claims with k set to v (v nil: k removed).
func with(c map[string]any, kv ...any) map[string]any {
	for i := 0; i+1 < len(kv); i += 2 {
		k := kv[i].(string)
		if kv[i+1] == nil {
			delete(c, k)
		} else {
			c[k] = kv[i+1]
		}
	}
	return c
}

func badTokens() []badToken {
	return []badToken{
		{"identity.no-token", "a request without a PA JWT is refused", "no Authorization header",
			func(f *forge) (string, error) { return "", nil }},
		{"identity.alg-none", `alg "none" is refused`, `alg "none", no signature`,
			func(f *forge) (string, error) {
				h := f.header()
				h["alg"] = "none"
				return compact(h, f.claims(), func([]byte) ([]byte, error) { return nil, nil })
			}},
		{"identity.alg-hs256", "HS256 is refused", "alg HS256, HMAC keyed with the profile's public JWK",
			func(f *forge) (string, error) {
				h := f.header()
				h["alg"] = "HS256"
				jwk, _ := json.Marshal(map[string]string{"kid": f.s.KID()})
				return compact(h, f.claims(), func(in []byte) ([]byte, error) {
					m := hmac.New(sha256.New, jwk)
					m.Write(in)
					return m.Sum(nil), nil
				})
			}},
		{"identity.alg-es384", "ES384 is refused", "alg ES384, signed with a throw-away P-384 key",
			func(f *forge) (string, error) {
				k, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
				if err != nil {
					return "", err
				}
				h := f.header()
				h["alg"] = "ES384"
				return compact(h, f.claims(), func(in []byte) ([]byte, error) {
					d := sha512.Sum384(in)
					r, s, err := ecdsa.Sign(rand.Reader, k, d[:])
					if err != nil {
						return nil, err
					}
					out := make([]byte, 96)
					r.FillBytes(out[:48])
					s.FillBytes(out[48:])
					return out, nil
				})
			}},
		{"identity.alg-ps256", "PS256 is refused", "alg PS256 (the profile's key when it is RSA, else a throw-away RSA key)",
			func(f *forge) (string, error) {
				h := f.header()
				h["alg"] = "PS256"
				if f.s.Alg() == "RS256" {
					p, _ := json.Marshal(f.claims())
					return f.s.SignJWS(h, p, "PS256")
				}
				k, err := rsa.GenerateKey(rand.Reader, 2048)
				if err != nil {
					return "", err
				}
				return compact(h, f.claims(), func(in []byte) ([]byte, error) {
					d := sha256.Sum256(in)
					return rsa.SignPSS(rand.Reader, k, crypto.SHA256, d[:], &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash})
				})
			}},
		{"identity.lifetime", "exp more than 300 s after iat is refused", "exp = iat + 400 s",
			func(f *forge) (string, error) {
				n := f.now.Unix()
				return f.signed(with(f.claims(), "iat", n, "exp", n+400))
			}},
		{"identity.iat-future", "iat more than 30 s ahead is refused", "iat = now + 120 s, exp = iat + 120 s",
			func(f *forge) (string, error) {
				n := f.now.Unix() + 120
				return f.signed(with(f.claims(), "iat", n, "exp", n+120))
			}},
		{"identity.expired", "an expired token is refused", "iat = now − 400 s, exp = now − 280 s",
			func(f *forge) (string, error) {
				n := f.now.Unix()
				return f.signed(with(f.claims(), "iat", n-400, "exp", n-280))
			}},
		{"identity.iat-missing", "a token without iat is refused", "no iat",
			func(f *forge) (string, error) { return f.signed(with(f.claims(), "iat", nil)) }},
		{"identity.exp-missing", "a token without exp is refused", "no exp",
			func(f *forge) (string, error) { return f.signed(with(f.claims(), "exp", nil)) }},
		{"identity.aud-wrong", "an aud other than the assigned audience is refused", `aud "pact-provider-check-wrong-audience"`,
			func(f *forge) (string, error) {
				return f.signed(with(f.claims(), "aud", "pact-provider-check-wrong-audience"))
			}},
		{"identity.aud-array", "aud as an array is refused (one string)", "aud = [the assigned audience]",
			func(f *forge) (string, error) { return f.signed(with(f.claims(), "aud", []string{f.aud})) }},
		{"identity.iss-wrong", "an iss other than the registered issuer is refused", "iss = the issuer + \"/pact-provider-check-not-registered\"",
			func(f *forge) (string, error) {
				return f.signed(with(f.claims(), "iss", f.s.Issuer()+"/pact-provider-check-not-registered"))
			}},
		{"identity.kid-unknown", "a token signed by a key that is not in the JWKS is refused", "kid unknown, signed with a throw-away key of the same algorithm",
			func(f *forge) (string, error) { return f.throwaway("pact-provider-check-unknown-kid") }},
		{"identity.signature", "a token whose signature is not by the key its kid names is refused", "the profile's kid, signed with a throw-away key",
			func(f *forge) (string, error) { return f.throwaway(f.s.KID()) }},
		{"identity.sub-missing", "a token without sub is refused", "no sub",
			func(f *forge) (string, error) { return f.signed(with(f.claims(), "sub", nil)) }},
	}
}

// throwaway signs good claims with a fresh key of the profile's algorithm
// under header kid.
func (f *forge) throwaway(kid string) (string, error) {
	var key crypto.Signer
	if f.s.Alg() == "RS256" {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return "", err
		}
		key = k
	} else {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return "", err
		}
		key = k
	}
	s, err := signer.New(f.s.Issuer(), key, func() time.Time { return f.now })
	if err != nil {
		return "", err
	}
	h := f.header()
	h["kid"] = kid
	p, _ := json.Marshal(f.claims())
	return s.SignJWS(h, p, f.s.Alg())
}

func identityChecks() []Check {
	var out []Check
	for _, bt := range badTokens() {
		bt := bt
		out = append(out, Check{ID: bt.id, Group: GroupIdentity, Clause: "§3.2, §3.4", Title: bt.title,
			Sends:  "POST {interface}/message:send with a PA JWT: " + bt.sends,
			Expect: `401, WWW-Authenticate: Bearer realm="a2a" without error="invalid_token", no A2A body`,
			run: func(ctx context.Context, r *runner) outcome {
				f := &forge{s: r.opts.Signer, aud: r.reg.Audience, sub: r.sub, now: r.now()}
				tok, err := bt.make(f)
				if err != nil {
					return skip("the token could not be made: %v", err)
				}
				sent := "POST message:send, PA JWT: " + bt.sends
				if err := r.bound.Check("interface", r.iface()+"/message:send"); err != nil {
					return skip("%v", err)
				}
				e := r.send(ctx, message("this request carries a personal-agent JWT that must be refused ("+bt.sends+")", "", randomID("m-"), nil), tok, nil)
				return judge(sent, e, want401(e))
			}})
	}
	out = append(out, Check{ID: "identity.good-token", Group: GroupIdentity, Clause: "§3.2",
		Title:  "a good PA JWT (the profile's key, this registration's audience) is accepted",
		Sends:  "(the first message:send of routes.message-send)",
		Expect: "200",
		run: func(ctx context.Context, r *runner) outcome {
			t := r.firstTurn(ctx)
			if t.ex.err == nil && t.ex.status == 401 {
				return fail(t.sent, t.ex.describe(), "the Provider refused a good token: check that the registration (issuer %s, jwks_uri) is known to it and that its clock is right", r.opts.Config.Issuer)
			}
			if t.ex.err != nil || t.ex.status != 200 {
				return fail(t.sent, t.ex.describe(), "want 200")
			}
			return pass(t.sent, fmt.Sprintf("%d", t.ex.status))
		}})
	return out
}
