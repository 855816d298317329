// Package pkcs11 holds personal-agent signing keys on a PKCS#11 token
// (a YubiKey, a smart card, a TPM, an HSM; SoftHSM2 in the tests) through
// ThalesGroup/crypto11: a key generated on the token, or one already there,
// named by an RFC 7512 URI (package keyuri). The private half never leaves
// the token; each signature is made there.
//
// PKCS#11 needs cgo, so the backend is built only with -tags pkcs11 (the
// release's linux/amd64 pkcs11 archive). Without the tag Available is
// false and every function fails with ErrNotBuilt, whose message says how
// to get a build that has it.
package pkcs11

import (
	"errors"
	"os"

	"github.com/pact-cli/pact/signer"
	"github.com/pact-cli/pact/signer/keyuri"
)

// ModuleEnv names the PKCS#11 module when the URI has no module-path.
const ModuleEnv = "PACT_PKCS11_MODULE"

// PINEnv holds the token's user PIN for commands that cannot ask.
const PINEnv = "PACT_PKCS11_PIN"

// ErrNotBuilt is returned by every function of a build without -tags
// pkcs11. It matches signer.ErrKeyUnavailable.
var ErrNotBuilt = &Error{Kind: KindNotBuilt, Message: "this pact was built without PKCS#11 support: take the release archive " +
	"whose name ends in _pkcs11 (linux/amd64), or build pact with `CGO_ENABLED=1 go build -tags pkcs11 ./cmd/pact`"}

// Kinds of failure.
const (
	KindNotBuilt = "not_built"
	KindModule   = "module"    // the module cannot be loaded
	KindAbsent   = "absent"    // the token is not present
	KindPIN      = "pin"       // wrong, locked or missing PIN
	KindNotFound = "not_found" // no such key on the token
	KindOther    = "other"
)

// Error is a failure to use a token's key: one sentence, never the PIN.
// It matches signer.ErrKeyUnavailable.
type Error struct {
	Kind    string
	URI     keyuri.URI
	Message string
}

func (e *Error) Error() string { return e.Message }

// Is makes every Error a signer.ErrKeyUnavailable.
func (e *Error) Is(target error) bool { return target == signer.ErrKeyUnavailable }

// Module is the PKCS#11 module for u: its module-path, else
// PACT_PKCS11_MODULE.
func Module(u keyuri.URI) (string, error) {
	if u.ModulePath != "" {
		return u.ModulePath, nil
	}
	if m := os.Getenv(ModuleEnv); m != "" {
		return m, nil
	}
	return "", &Error{Kind: KindModule, URI: u, Message: "no PKCS#11 module is named: set " + ModuleEnv +
		" to the token's module (SoftHSM2: /usr/lib/softhsm/libsofthsm2.so; YubiKey: libykcs11.so) or add ?module-path=… to the key URI"}
}

// IsPINError reports whether err is a wrong, locked or missing PIN.
func IsPINError(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == KindPIN
}
