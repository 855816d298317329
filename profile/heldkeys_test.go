package profile

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/pact-cli/pact/signer"
	"github.com/pact-cli/pact/signer/keyuri"
	"github.com/pact-cli/pact/signer/pkcs11"
)

// A key in the keyring whose private half was replaced by another key's is
// refused before it signs (signer.ErrKeyMismatch): its public part is not
// the one recorded and published under its kid.
func TestIssue27_KeyringKeyReplacedIsRefused(t *testing.T) {
	p := newProfile(t)
	r, err := p.Init("https://pa.example.com", "", "ES256", false)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := signer.Generate(signer.ES256, 0)
	enc, _ := signer.MarshalPrivate(other)
	if err := p.Secrets.Set(p.keySecret(r.Config.Keys[0].KID), enc); err != nil {
		t.Fatal(err)
	}
	_, err = p.Signer(r.Config)
	if !errors.Is(err, signer.ErrKeyMismatch) || !strings.Contains(err.Error(), r.Config.Keys[0].KID) {
		t.Fatalf("Signer = %v, want ErrKeyMismatch naming the key", err)
	}
	if err := p.CheckKey(context.Background(), r.Config, r.Config.Keys[0]); !errors.Is(err, signer.ErrKeyMismatch) {
		t.Fatalf("CheckKey = %v, want ErrKeyMismatch", err)
	}
}

// Existing profiles are unchanged: a key without a URI is the keyring's,
// and its profile.json does not gain one.
func TestIssue27_KeyringKeysKeepTheirConfig(t *testing.T) {
	p := newProfile(t)
	r, err := p.Init("https://pa.example.com", "", "", false)
	if err != nil {
		t.Fatal(err)
	}
	k := r.Config.Keys[0]
	if k.URI != "" || k.KeyURI().Kind != keyuri.Keyring || k.KeyURI().Held() {
		t.Fatalf("a keyring key recorded %+v", k)
	}
	if got := p.Storage(k); got != StorageFile {
		t.Fatalf("Storage = %q", got)
	}
	if err := p.CheckKey(context.Background(), r.Config, k); err != nil {
		t.Fatalf("CheckKey: %v", err)
	}
}

// A bad --key is a usage error naming the problem; a pkcs11: URI in a
// build without PKCS#11 says how to get one; nothing is written.
func TestIssue27_BadKeyURIIsRefusedBeforeAnythingIsWritten(t *testing.T) {
	p := newProfile(t)
	if _, err := p.InitKey("https://pa.example.com", "", "", "pkcs11:token=x", false); !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "--key:") {
		t.Fatalf("InitKey = %v, want a usage error about --key", err)
	}
	if p.Exists() {
		t.Fatal("a refused --key left a profile")
	}
	if pkcs11.Available {
		t.Skip("this build has PKCS#11")
	}
	_, err := p.InitKey("https://pa.example.com", "", "", "pkcs11:token=x;object=y", false)
	if !errors.Is(err, signer.ErrKeyUnavailable) || !strings.Contains(err.Error(), "-tags pkcs11") || !strings.Contains(err.Error(), "_pkcs11") {
		t.Fatalf("InitKey in a build without PKCS#11 = %v", err)
	}
	if p.Exists() {
		t.Fatal("a refused --key left a profile")
	}
}

// A command pact suggests with a key URI in it quotes the URI for the
// shell: a pkcs11: URI holds ";", which would end the command where the
// User pastes it (pact key rotate --key pkcs11:token=pact, then a shell
// error).
func TestIssue27_KeyURIInACommandHintIsQuoted(t *testing.T) {
	const uri = "pkcs11:token=pact;object=pa-key"
	const want = "pact key rotate --key '" + uri + "'"
	p := newProfile(t)
	if _, err := p.Init("https://pa.example.com", "", "", false); err != nil {
		t.Fatal(err)
	}
	_, err := p.InitKey("https://pa.example.com", "", "", uri, false)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("init --key on a profile with a key = %v, want the hint %s", err, want)
	}
	k := KeyInfo{KID: "kid1", URI: uri}
	if err := p.mismatch(k); !strings.Contains(err.Error(), want) {
		t.Fatalf("mismatch = %v, want the hint %s", err, want)
	}
}
