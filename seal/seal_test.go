package seal_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pact-cli/pact/seal"
	"github.com/pact-cli/pact/secrets"
	"github.com/pact-cli/pact/store"
)

func keyring(t *testing.T) (*seal.Keyring, secrets.Store) {
	t.Helper()
	sec, err := secrets.Open("file", t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	return &seal.Keyring{Secrets: sec, Prefix: "default/"}, sec
}

// Issue 28: a secret is sealed with AES-256-GCM under a data key the key
// store holds, its version beside the ciphertext; it opens with the same
// User and name only, and not once changed.
func TestIssue28_SealedUnderTheKeyStoresDataKey(t *testing.T) {
	k, sec := keyring(t)
	plain := []byte("eyJhbGciOiJFUzI1NiJ9.refresh-token.sig")
	aad := seal.AAD("profile:default", "default/delegation/ab/refresh")
	s, err := k.Seal(plain, aad)
	if err != nil {
		t.Fatal(err)
	}
	if s.KeyVersion != "1" || bytes.Contains(s.Ciphertext, plain) || len(s.Ciphertext) != 12+len(plain)+16 {
		t.Fatalf("sealed: version %q, %d bytes", s.KeyVersion, len(s.Ciphertext))
	}
	if s2, _ := k.Seal(plain, aad); bytes.Equal(s2.Ciphertext, s.Ciphertext) {
		t.Fatal("two seals of one secret are the same bytes (a nonce reused)")
	}
	if got, err := k.Open(s, aad); err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("open: %q %v", got, err)
	}
	if v, err := sec.Get("default/data-key/current"); err != nil || v != "1" {
		t.Fatalf("current version in the key store: %q %v", v, err)
	}
	for what, try := range map[string]func() ([]byte, error){
		"another User": func() ([]byte, error) { return k.Open(s, seal.AAD("profile:other", "default/delegation/ab/refresh")) },
		"another name": func() ([]byte, error) { return k.Open(s, seal.AAD("profile:default", "default/delegation/ab/access")) },
		"changed": func() ([]byte, error) {
			c := bytes.Clone(s.Ciphertext)
			c[len(c)-1] ^= 1
			return k.Open(store.SealedSecret{KeyVersion: "1", Ciphertext: c}, aad)
		},
		"a version never made": func() ([]byte, error) {
			return k.Open(store.SealedSecret{KeyVersion: "7", Ciphertext: s.Ciphertext}, aad)
		},
	} {
		if got, err := try(); !errors.Is(err, seal.ErrOpen) || got != nil {
			t.Errorf("%s: opened %q, %v; want ErrOpen", what, got, err)
		}
	}
	// Another Keyring on the same key store (another process) opens it.
	k2 := &seal.Keyring{Secrets: sec, Prefix: "default/"}
	if got, err := k2.Open(s, aad); err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("open from another process: %q %v", got, err)
	}
}

// Issue 28: rotation makes a new data key the one that seals; what the old
// one sealed still opens, and Reseal moves it to the new key.
func TestIssue28_DataKeyRotatedAndSecretsResealed(t *testing.T) {
	k, _ := keyring(t)
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), store.DBFileName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	v := seal.Vault{Store: db.ForUser("profile:default"), Sealer: k}
	if err := v.Set("tok", "access-token-1"); err != nil {
		t.Fatal(err)
	}
	if ver, err := k.Rotate(); err != nil || ver != "2" {
		t.Fatalf("rotate: %q %v", ver, err)
	}
	if got, err := v.Get("tok"); err != nil || got != "access-token-1" {
		t.Fatalf("a secret sealed by the old key: %q %v", got, err)
	}
	if n, err := v.Reseal(context.Background()); err != nil || n != 1 {
		t.Fatalf("reseal: %d %v", n, err)
	}
	s, _, _ := db.ForUser("profile:default").Secret(context.Background(), "tok")
	if s.KeyVersion != "2" {
		t.Fatalf("after reseal: version %q", s.KeyVersion)
	}
	names, err := k.KeyNames()
	if err != nil || strings.Join(names, " ") != "default/data-key/current default/data-key/1 default/data-key/2" {
		t.Fatalf("key names: %v %v", names, err)
	}
	if _, err := v.Get("absent"); !errors.Is(err, secrets.ErrNotFound) {
		t.Fatalf("an absent secret: %v", err)
	}
}
