// Package seal keeps secrets in a database as ciphertext only: a User's
// delegation access and refresh tokens (PACT §5) sealed with AES-256-GCM
// under a data key that the key store holds (the OS keyring or the 0600
// file of package secrets), never in the database. Each sealed value
// carries the version of the data key that sealed it, so the key can be
// rotated: Rotate makes a new key the one that seals, the old ones still
// open what they sealed, and Reseal moves a User's secrets to the new key.
//
// Sealer is the seam: a data key wrapped by a KMS (the keys issue) is
// another Sealer. Vault puts a Sealer and a User's store.Secrets together
// as the token store the delegation package reads and writes.
package seal

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/pact-cli/pact/secrets"
	"github.com/pact-cli/pact/store"
)

// Sealer seals secrets for a database and opens them again. aad (the
// User and the secret's name, see AAD) is authenticated with the
// ciphertext: a sealed value moved to another User's row, or another
// name, does not open.
type Sealer interface {
	Seal(plaintext, aad []byte) (store.SealedSecret, error)
	Open(s store.SealedSecret, aad []byte) ([]byte, error)
}

// ErrOpen is matched by the failure to open a sealed secret: its data key
// is missing, or it was changed, or moved to another User or name.
var ErrOpen = errors.New("seal: the sealed secret cannot be opened")

// AAD is the additional data a secret of user named name is sealed with.
func AAD(user, name string) []byte {
	return []byte("pact sealed secret v1\x00" + user + "\x00" + name)
}

// Keyring is a Sealer whose AES-256 data keys live in a secret store: the
// key of version V under Prefix+"data-key/V" (32 random bytes, base64),
// the version that seals under Prefix+"data-key/current". The first Seal
// makes version 1. Versions are decimal numbers.
type Keyring struct {
	Secrets secrets.Store
	Prefix  string // e.g. "default/" (the profile's)
	// Lock, when set, is held while a data key is made, so that processes
	// making the first key at once agree on one (store.Lock on a file
	// beside the profile's data).
	Lock func() (unlock func(), err error)

	mu   sync.Mutex
	keys map[string]cipher.AEAD
}

// KeySize is the size of a data key in bytes (AES-256).
const KeySize = 32

func (k *Keyring) name(v string) string { return k.Prefix + "data-key/" + v }
func (k *Keyring) currentName() string  { return k.Prefix + "data-key/current" }

// Current returns the version that seals ("" when no key exists yet).
func (k *Keyring) Current() (string, error) {
	v, err := k.Secrets.Get(k.currentName())
	if errors.Is(err, secrets.ErrNotFound) {
		return "", nil
	}
	return v, err
}

// KeyNames lists the names of the key store's entries that hold the data
// keys (those `pact keyring move` carries), versions 1 to current.
func (k *Keyring) KeyNames() ([]string, error) {
	cur, err := k.Current()
	if err != nil || cur == "" {
		return nil, err
	}
	n, err := strconv.Atoi(cur)
	if err != nil || n < 1 {
		return nil, fmt.Errorf("seal: the current data key version %q is not a number", cur)
	}
	out := []string{k.currentName()}
	for i := 1; i <= n; i++ {
		if _, err := k.Secrets.Get(k.name(strconv.Itoa(i))); err == nil {
			out = append(out, k.name(strconv.Itoa(i)))
		}
	}
	return out, nil
}

// aead returns the cipher of data key version v.
func (k *Keyring) aead(v string) (cipher.AEAD, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if a, ok := k.keys[v]; ok {
		return a, nil
	}
	enc, err := k.Secrets.Get(k.name(v))
	if err != nil {
		return nil, fmt.Errorf("%w: data key version %s: %w", ErrOpen, v, err)
	}
	key, err := base64.StdEncoding.DecodeString(enc)
	if err != nil || len(key) != KeySize {
		return nil, fmt.Errorf("%w: data key version %s in %s is damaged", ErrOpen, v, k.Secrets.Where())
	}
	a, err := newAEAD(key)
	if err != nil {
		return nil, err
	}
	if k.keys == nil {
		k.keys = map[string]cipher.AEAD{}
	}
	k.keys[v] = a
	return a, nil
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}

// Rotate makes a new data key, one version above the current one, the key
// that seals from now on, and returns its version. The older keys stay,
// to open what they sealed (Reseal moves secrets to the new key).
func (k *Keyring) Rotate() (string, error) { return k.makeKey(false) }

// makeKey makes a new data key the current one, under Lock; firstOnly
// makes one only when there is none yet (returning the current version
// another process made meanwhile).
func (k *Keyring) makeKey(firstOnly bool) (string, error) {
	if k.Lock != nil {
		unlock, err := k.Lock()
		if err != nil {
			return "", err
		}
		defer unlock()
	}
	cur, err := k.Current()
	if err != nil {
		return "", err
	}
	if firstOnly && cur != "" {
		return cur, nil
	}
	n := 0
	if cur != "" {
		if n, err = strconv.Atoi(cur); err != nil {
			return "", fmt.Errorf("seal: the current data key version %q is not a number", cur)
		}
	}
	v := strconv.Itoa(n + 1)
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return "", err
	}
	if err := k.Secrets.Set(k.name(v), base64.StdEncoding.EncodeToString(key)); err != nil {
		return "", fmt.Errorf("seal: keeping data key version %s: %w", v, err)
	}
	if err := k.Secrets.Set(k.currentName(), v); err != nil {
		return "", fmt.Errorf("seal: making data key version %s current: %w", v, err)
	}
	return v, nil
}

// Seal encrypts plaintext with the current data key (AES-256-GCM, a random
// 96-bit nonce before the ciphertext), making the first key when there is
// none.
func (k *Keyring) Seal(plaintext, aad []byte) (store.SealedSecret, error) {
	v, err := k.Current()
	if err != nil {
		return store.SealedSecret{}, err
	}
	if v == "" {
		if v, err = k.makeKey(true); err != nil {
			return store.SealedSecret{}, err
		}
	}
	a, err := k.aead(v)
	if err != nil {
		return store.SealedSecret{}, err
	}
	nonce := make([]byte, a.NonceSize(), a.NonceSize()+len(plaintext)+a.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return store.SealedSecret{}, err
	}
	return store.SealedSecret{KeyVersion: v, Ciphertext: a.Seal(nonce, nonce, plaintext, aad)}, nil
}

// Open decrypts s with the data key of its version; ErrOpen when that key
// is missing or s does not open with aad.
func (k *Keyring) Open(s store.SealedSecret, aad []byte) ([]byte, error) {
	a, err := k.aead(s.KeyVersion)
	if err != nil {
		return nil, err
	}
	if len(s.Ciphertext) < a.NonceSize() {
		return nil, fmt.Errorf("%w: it is too short", ErrOpen)
	}
	p, err := a.Open(nil, s.Ciphertext[:a.NonceSize()], s.Ciphertext[a.NonceSize():], aad)
	if err != nil {
		return nil, fmt.Errorf("%w: it was changed, or belongs to another User or name", ErrOpen)
	}
	return p, nil
}

// UserSecrets is a User's sealed secrets in their store.
type UserSecrets interface {
	User() string
	store.Secrets
}

// Vault keeps a User's secrets sealed in their store: Get, Set and Delete
// by name, as the delegation package's token store (delegation.Secrets)
// and the secrets package's Store do, the values sealed by Sealer.
type Vault struct {
	Store  UserSecrets
	Sealer Sealer
}

// Get returns the secret kept under name; an error matching
// secrets.ErrNotFound when there is none.
func (v Vault) Get(name string) (string, error) {
	ctx := context.Background()
	s, ok, err := v.Store.Secret(ctx, name)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", fmt.Errorf("%w: %s", secrets.ErrNotFound, name)
	}
	p, err := v.Sealer.Open(s, AAD(v.Store.User(), name))
	if err != nil {
		return "", fmt.Errorf("reading the secret %s: %w", name, err)
	}
	return string(p), nil
}

// Set seals value and keeps it under name (at most secrets.MaxTotal
// bytes, as every key store).
func (v Vault) Set(name, value string) error {
	if err := secrets.CheckSize(name, value); err != nil {
		return err
	}
	s, err := v.Sealer.Seal([]byte(value), AAD(v.Store.User(), name))
	if err != nil {
		return err
	}
	return v.Store.PutSecret(context.Background(), name, s)
}

// Delete removes the secret kept under name (absent is no error).
func (v Vault) Delete(name string) error {
	return v.Store.DeleteSecret(context.Background(), name)
}

// Reseal seals every secret of the User again with the Sealer's current
// key (after a rotation), and returns how many it resealed.
func (v Vault) Reseal(ctx context.Context) (int, error) {
	names, err := v.Store.SecretNames(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, name := range names {
		p, err := v.Get(name)
		if err != nil {
			return n, err
		}
		if err := v.Set(name, p); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
