//go:build !pkcs11

package pkcs11

import (
	"crypto"

	"github.com/pact-cli/pact/signer/keyuri"
)

// Available reports whether this build can use PKCS#11 tokens: false here
// (built without -tags pkcs11).
const Available = false

// Key is a private key on a PKCS#11 token; this build has none.
type Key struct{ crypto.Signer }

// Close does nothing here.
func (k *Key) Close() error { return nil }

// URI is the key's URI.
func (k *Key) URI() keyuri.URI { return keyuri.URI{} }

// Open fails with ErrNotBuilt.
func Open(u keyuri.URI, pin string) (*Key, error) { return nil, ErrNotBuilt }

// Generate fails with ErrNotBuilt.
func Generate(u keyuri.URI, pin, alg string) (*Key, bool, error) { return nil, false, ErrNotBuilt }
