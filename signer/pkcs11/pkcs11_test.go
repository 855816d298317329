//go:build pkcs11

package pkcs11

import (
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	p11 "github.com/miekg/pkcs11"

	"github.com/pact-cli/pact/internal/testkeys"
	"github.com/pact-cli/pact/signer"
	"github.com/pact-cli/pact/signer/keyuri"
)

func tokenURI(h *testkeys.SoftHSM, object string) keyuri.URI {
	return keyuri.URI{Kind: keyuri.PKCS11, Token: h.Token, Object: object, ModulePath: h.Module}
}

func held(t *testing.T, k *Key) *signer.Signer {
	t.Helper()
	kid, _ := signer.Thumbprint(k.Public())
	s, err := signer.NewHeld("https://pa.example.com", k, jose.JSONWebKey{Key: k.Public(), KeyID: kid}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A key pact generates on the token signs PA JWTs (ES256 and RS256) that
// verify with the public half read from the token; opened again by its
// URI, it is the same key.
func TestSection3_2_TokenKeySignsVerifiableTokens(t *testing.T) {
	h := testkeys.NewSoftHSM(t, "pact-test")
	for _, alg := range []string{"ES256", "RS256"} {
		u := tokenURI(h, "pa-"+alg)
		k, created, err := Generate(u, h.PIN, alg)
		if err != nil || !created {
			t.Fatalf("%s: Generate = %v, created %v", alg, err, created)
		}
		if len(k.URI().ID) != 16 {
			t.Fatalf("%s: the generated key has no id: %+v", alg, k.URI())
		}
		tok, err := held(t, k).Mint("aud", "sub")
		if err != nil {
			t.Fatalf("%s: %v", alg, err)
		}
		p, err := jwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.ES256, jose.RS256})
		if err != nil {
			t.Fatal(err)
		}
		var c signer.Claims
		if err := p.Claims(k.Public(), &c); err != nil {
			t.Fatalf("%s: %v", alg, err)
		}
		pub := k.Public()
		k.Close()
		again, created, err := Generate(u, h.PIN, alg)
		if err != nil || created {
			t.Fatalf("%s: Generate on an existing key = %v, created %v (want it used)", alg, err, created)
		}
		if kid1, _ := signer.Thumbprint(pub); func() string { k2, _ := signer.Thumbprint(again.Public()); return k2 }() != kid1 {
			t.Fatalf("%s: opened another key", alg)
		}
		again.Close()
	}
}

// Each failure is one sentence naming the cause, matching
// signer.ErrKeyUnavailable, and never holding the PIN.
func TestTokenFailuresAreClearAndNeverShowThePIN(t *testing.T) {
	h := testkeys.NewSoftHSM(t, "pact-test")
	u := tokenURI(h, "pa-key")
	k, _, err := Generate(u, h.PIN, "ES256")
	if err != nil {
		t.Fatal(err)
	}
	k.Close()
	wrong := "9999-wrong-pin"
	cases := []struct {
		name string
		u    keyuri.URI
		pin  string
		kind string
		says string
	}{
		{"wrong PIN", u, wrong, KindPIN, "the PIN is wrong"},
		{"absent token", tokenURI(&testkeys.SoftHSM{Token: "not-plugged-in", Module: h.Module}, "pa-key"), h.PIN, KindAbsent, "no such token is present"},
		{"no such key", tokenURI(h, "nothing-here"), h.PIN, KindNotFound, "no key pair"},
		{"bad module", keyuri.URI{Kind: keyuri.PKCS11, Token: h.Token, Object: "pa-key", ModulePath: "/nonexistent/libnothing.so"}, h.PIN, KindModule, "module /nonexistent/libnothing.so (the key URI's module-path) cannot be loaded"},
	}
	for _, c := range cases {
		_, err := Open(c.u, c.pin)
		var e *Error
		if !errors.As(err, &e) || e.Kind != c.kind || !errors.Is(err, signer.ErrKeyUnavailable) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: err = %v (%#v), want kind %s saying %q", c.name, err, e, c.kind, c.says)
		}
		if err != nil && (strings.Contains(err.Error(), wrong) || strings.Contains(err.Error(), h.PIN)) {
			t.Errorf("%s: the error holds the PIN: %v", c.name, err)
		}
	}
	t.Setenv(ModuleEnv, "")
	if _, err := Module(keyuri.URI{Kind: keyuri.PKCS11, Token: "x", Object: "y"}); err == nil || !strings.Contains(err.Error(), ModuleEnv) {
		t.Errorf("no module: %v", err)
	}
}

// Tamper: the private key under the key's label and id is replaced by
// another key's, the public object left as it was. The token still shows
// the published public key, but signs with the other one: the signer
// verifies every signature with the published key and refuses
// (ErrKeyMismatch), so nothing signed by the other key is sent.
func TestSection3_2_TokenSignatureByAnotherKeyIsRefused(t *testing.T) {
	h := testkeys.NewSoftHSM(t, "pact-test")
	u := tokenURI(h, "pa-key")
	k, _, err := Generate(u, h.PIN, "ES256")
	if err != nil {
		t.Fatal(err)
	}
	id := k.URI().ID
	published := k.Public()
	s := held(t, k)
	if _, err := s.Mint("aud", "sub"); err != nil {
		t.Fatal(err)
	}
	k.Close()

	destroyPrivate(t, h, id)
	other, _ := signer.Generate("ES256", 0)
	der, _ := x509.MarshalPKCS8PrivateKey(other)
	pemFile := filepath.Join(t.TempDir(), "other.pem")
	os.WriteFile(pemFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
	h.Util(t, "--import", pemFile, "--token", h.Token, "--label", "pa-key", "--id", hex.EncodeToString(id), "--pin", h.PIN, "--no-public-key", "--force")

	u.ID = id
	k2, err := Open(u, h.PIN)
	if err != nil {
		t.Fatal(err)
	}
	defer k2.Close()
	if !k2.Public().(*ecdsa.PublicKey).Equal(published) {
		t.Fatal("the test meant to leave the published public object in place")
	}
	kid, _ := signer.Thumbprint(published)
	s2, err := signer.NewHeld("https://pa.example.com", k2, jose.JSONWebKey{Key: published, KeyID: kid}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := s2.Mint("aud", "sub")
	if !errors.Is(err, signer.ErrKeyMismatch) || tok != "" {
		t.Fatalf("signed by another key on the token: %q, %v; want ErrKeyMismatch", tok, err)
	}
}

// destroyPrivate removes the private key object with this id from the
// token, leaving its public object.
func destroyPrivate(t *testing.T, h *testkeys.SoftHSM, id []byte) {
	t.Helper()
	ctx := p11.New(h.Module)
	if err := ctx.Initialize(); err != nil {
		t.Fatal(err)
	}
	defer ctx.Destroy()
	defer ctx.Finalize()
	slots, err := ctx.GetSlotList(true)
	if err != nil {
		t.Fatal(err)
	}
	for _, slot := range slots {
		info, err := ctx.GetTokenInfo(slot)
		if err != nil || info.Label != h.Token {
			continue
		}
		sess, err := ctx.OpenSession(slot, p11.CKF_SERIAL_SESSION|p11.CKF_RW_SESSION)
		if err != nil {
			t.Fatal(err)
		}
		defer ctx.CloseSession(sess)
		if err := ctx.Login(sess, p11.CKU_USER, h.PIN); err != nil {
			t.Fatal(err)
		}
		tmpl := []*p11.Attribute{p11.NewAttribute(p11.CKA_CLASS, p11.CKO_PRIVATE_KEY), p11.NewAttribute(p11.CKA_ID, id)}
		if err := ctx.FindObjectsInit(sess, tmpl); err != nil {
			t.Fatal(err)
		}
		objs, _, err := ctx.FindObjects(sess, 10)
		ctx.FindObjectsFinal(sess)
		if err != nil || len(objs) != 1 {
			t.Fatalf("private objects with the id: %d, %v", len(objs), err)
		}
		if err := ctx.DestroyObject(sess, objs[0]); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatal("token not found")
}
