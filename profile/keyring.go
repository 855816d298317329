package profile

import (
	"errors"
	"fmt"

	"github.com/pact-cli/pact/errs"
	"github.com/pact-cli/pact/secrets"
	"github.com/pact-cli/pact/signer/keyuri"
	"github.com/pact-cli/pact/store"
)

// ErrKeyringConflict means the keyring asked for explicitly (PACT_KEYRING
// or `pact init --keyring`) is not the one the profile's secrets live in.
// It wraps ErrInvalidInput.
var ErrKeyringConflict = fmt.Errorf("%w: keyring conflict", ErrInvalidInput)

// RecordedKeyring returns the secret-store backend ("os" or "file")
// recorded in profile name's profile.json, without opening any secret
// store; "" when the profile does not exist or predates the record.
func RecordedKeyring(d store.Dirs, name string) (string, error) {
	var c Config
	p := &Profile{Name: name, Dirs: d}
	if _, err := store.ReadJSON(p.path(), &c); err != nil {
		return "", err
	}
	return c.Keyring, nil
}

// KeyringChoice is where a profile's secret-store backend comes from.
type KeyringChoice struct {
	Explicit       string // PACT_KEYRING or --keyring ("" = not set)
	ExplicitSource string // how it was set, for messages: "PACT_KEYRING=file"
	Default        string // the config file's "keyring" ("" = "os")
}

// ResolveKeyring picks the backend for profile name: the one its
// profile.json records when there is one (an explicit choice that differs
// is ErrKeyringConflict, naming both and the way to move), else the
// explicit choice, else the config file's default, else "os".
func ResolveKeyring(d store.Dirs, name string, ch KeyringChoice) (string, error) {
	rec, err := RecordedKeyring(d, name)
	if err != nil {
		return "", err
	}
	norm := func(k string) string {
		if k == "" {
			return "os"
		}
		return k
	}
	if rec != "" {
		if ch.Explicit != "" && norm(ch.Explicit) != rec {
			return "", errs.New(fmt.Sprintf("%s, but profile %q keeps its secrets in the %q keyring (recorded by pact init). "+
				"Unset it to use the recorded one, or move the profile's secrets with `%s`",
				ch.ExplicitSource, name, rec, Command(name, "keyring move --to "+norm(ch.Explicit))), ErrKeyringConflict)
		}
		return rec, nil
	}
	if ch.Explicit != "" {
		return ch.Explicit, nil
	}
	return norm(ch.Default), nil
}

// SecretKeys are the secret-store entries of the profile's own identity:
// each key's private half (a key held on a token or in KMS has none), the
// PIN kept for a token (`pact key pin`), and the pairwise-sub secret.
func (p *Profile) SecretKeys(c *Config) []string {
	out := []string{p.subSecret()}
	seen := map[string]bool{}
	for _, k := range c.Keys {
		switch u := k.KeyURI(); {
		case u.Kind == keyuri.PKCS11:
			if pin := p.pinSecret(u); !seen[pin] {
				seen[pin] = true
				out = append(out, pin)
			}
		case !u.Held():
			out = append(out, p.keySecret(k.KID))
		}
	}
	if c.Server != nil {
		out = append(out, p.deviceKeySecret())
	}
	return out
}

// MoveResult reports what MoveSecrets did.
type MoveResult struct {
	From, To string // backend kinds
	Moved    int    // secrets copied
}

// MoveSecrets moves the profile's secrets to the backend to: the identity's
// (SecretKeys) and extra ones (delegation tokens; absent entries are
// skipped). Every secret is copied first; then profile.json records the new
// backend; only then are the old copies deleted. A failed copy removes what
// was copied and leaves the profile as it was.
func (p *Profile) MoveSecrets(to secrets.Store, extra []string) (MoveResult, error) {
	c, err := p.Load()
	if err != nil {
		return MoveResult{}, err
	}
	res := MoveResult{From: p.Secrets.Kind(), To: to.Kind()}
	if res.From == res.To {
		return res, errs.New(fmt.Sprintf("profile %q already keeps its secrets in the %q keyring", p.Name, res.To), ErrInvalidInput)
	}
	var copied []string
	undo := func() {
		for _, k := range copied {
			to.Delete(k)
		}
	}
	keys := append(p.SecretKeys(c), extra...)
	for _, k := range keys {
		v, err := p.Secrets.Get(k)
		if errors.Is(err, secrets.ErrNotFound) {
			continue
		}
		if err != nil {
			undo()
			return res, fmt.Errorf("reading %s from %s: %w", k, p.Secrets.Where(), err)
		}
		if err := to.Set(k, v); err != nil {
			undo()
			return res, fmt.Errorf("writing %s to %s: %w", k, to.Where(), err)
		}
		copied = append(copied, k)
	}
	if err := p.update(func(c *Config) error { c.Keyring = to.Kind(); return nil }); err != nil {
		undo()
		return res, err
	}
	var errs []error
	for _, k := range copied {
		if err := p.Secrets.Delete(k); err != nil {
			errs = append(errs, err)
		}
	}
	res.Moved = len(copied)
	p.Secrets = to
	if len(errs) > 0 {
		return res, fmt.Errorf("the secrets were moved, but some old copies could not be deleted: %w", errors.Join(errs...))
	}
	return res, nil
}
