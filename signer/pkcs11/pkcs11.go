//go:build pkcs11

package pkcs11

import (
	"crypto"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ThalesGroup/crypto11"
	p11 "github.com/miekg/pkcs11"

	"github.com/pact-cli/pact/signer/keyuri"
)

// Available reports whether this build can use PKCS#11 tokens: true here
// (built with -tags pkcs11, cgo).
const Available = true

// Key is a private key on a PKCS#11 token, logged in: a crypto.Signer
// whose Public is read from the token. Close logs out.
type Key struct {
	ctx *crypto11.Context
	s   crypto11.Signer
	uri keyuri.URI
}

// Public is the public half stored on the token beside the private key.
func (k *Key) Public() crypto.PublicKey { return k.s.Public() }

// Sign signs digest on the token (ECDSA: ASN.1 DER).
func (k *Key) Sign(r io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	sig, err := k.s.Sign(r, digest, opts)
	if err != nil {
		return nil, classify(k.uri, "sign", err)
	}
	return sig, nil
}

// Close ends the session with the token.
func (k *Key) Close() error { return k.ctx.Close() }

// URI is the key's URI, with the id the token gave it.
func (k *Key) URI() keyuri.URI { return k.uri }

func configure(u keyuri.URI, pin string) (*crypto11.Context, error) {
	module, err := Module(u)
	if err != nil {
		return nil, err
	}
	cfg := &crypto11.Config{Path: module, TokenLabel: u.Token, TokenSerial: u.Serial, Pin: pin}
	if u.SlotID != "" {
		n, err := strconv.Atoi(u.SlotID)
		if err != nil {
			return nil, &Error{Kind: KindOther, URI: u, Message: "slot-id " + u.SlotID + " is not a number"}
		}
		cfg.SlotNumber = &n
	}
	ctx, err := crypto11.Configure(cfg)
	if err != nil {
		e := classify(u, "log in", err)
		if e.Kind == KindModule {
			from := "from " + ModuleEnv
			if u.ModulePath != "" {
				from = "the key URI's module-path"
			}
			e.Message = fmt.Sprintf("the PKCS#11 module %s (%s) cannot be loaded: is the path right, and the token's software installed?", module, from)
		}
		return nil, e
	}
	return ctx, nil
}

// Open logs in to the token u names with pin and finds the key pair u
// names (object label and/or id).
func Open(u keyuri.URI, pin string) (*Key, error) {
	ctx, err := configure(u, pin)
	if err != nil {
		return nil, err
	}
	pairs, err := ctx.FindKeyPairs(u.ID, label(u))
	if err != nil {
		ctx.Close()
		return nil, classify(u, "find the key", err)
	}
	switch len(pairs) {
	case 0:
		ctx.Close()
		return nil, &Error{Kind: KindNotFound, URI: u, Message: "the token holds no key pair with that object label and id (deleted?)"}
	case 1:
	default:
		ctx.Close()
		return nil, &Error{Kind: KindOther, URI: u, Message: fmt.Sprintf("the token holds %d key pairs with that object label; add the key's id= to the URI", len(pairs))}
	}
	if len(u.ID) == 0 {
		if a, err := ctx.GetAttribute(pairs[0], crypto11.CkaId); err == nil && a != nil {
			u.ID = a.Value
		}
	}
	return &Key{ctx: ctx, s: pairs[0], uri: u}, nil
}

func label(u keyuri.URI) []byte {
	if u.Object == "" {
		return nil
	}
	return []byte(u.Object)
}

// Generate makes a new key pair on the token for alg (ES256: P-256;
// RS256: RSA 2048), labelled u.Object, with u.ID or a random 16-byte id,
// unless u already names a key pair there: that one is used (created is
// then false). The private half is sensitive and cannot be extracted.
func Generate(u keyuri.URI, pin, alg string) (k *Key, created bool, err error) {
	if k, err := Open(u, pin); err == nil {
		return k, false, nil
	} else if e := (*Error)(nil); !errors.As(err, &e) || e.Kind != KindNotFound {
		return nil, false, err
	}
	ctx, err := configure(u, pin)
	if err != nil {
		return nil, false, err
	}
	id := u.ID
	if len(id) == 0 {
		id = make([]byte, 16)
		if _, err := rand.Read(id); err != nil {
			ctx.Close()
			return nil, false, err
		}
	}
	var s crypto11.Signer
	switch alg {
	case "ES256", "":
		s, err = ctx.GenerateECDSAKeyPairWithLabel(id, label(u), elliptic.P256())
	case "RS256":
		s, err = ctx.GenerateRSAKeyPairWithLabel(id, label(u), 2048)
	default:
		err = fmt.Errorf("unsupported algorithm %q", alg)
	}
	if err != nil {
		ctx.Close()
		return nil, false, classify(u, "generate a key", err)
	}
	u.ID = id
	return &Key{ctx: ctx, s: s, uri: u}, true, nil
}

// classify names what failed, never with the PIN.
func classify(u keyuri.URI, doing string, err error) *Error {
	e := &Error{Kind: KindOther, URI: u, Message: "could not " + doing + ": " + err.Error()}
	var pe p11.Error
	if errors.As(err, &pe) {
		switch pe {
		case p11.CKR_PIN_INCORRECT:
			e.Kind, e.Message = KindPIN, "the PIN is wrong"
		case p11.CKR_PIN_LOCKED:
			e.Kind, e.Message = KindPIN, "the token's PIN is locked (too many wrong PINs); unlock it with the token's SO PIN"
		case p11.CKR_PIN_EXPIRED, p11.CKR_USER_PIN_NOT_INITIALIZED:
			e.Kind, e.Message = KindPIN, "the token's user PIN is not set or has expired"
		case p11.CKR_PIN_LEN_RANGE, p11.CKR_PIN_INVALID:
			e.Kind, e.Message = KindPIN, "the token refuses the PIN as given (length or characters)"
		case p11.CKR_TOKEN_NOT_PRESENT, p11.CKR_DEVICE_REMOVED, p11.CKR_TOKEN_NOT_RECOGNIZED, p11.CKR_SLOT_ID_INVALID:
			e.Kind, e.Message = KindAbsent, "the token is not present (is it plugged in?)"
		case p11.CKR_USER_NOT_LOGGED_IN, p11.CKR_SESSION_HANDLE_INVALID, p11.CKR_SESSION_CLOSED:
			e.Kind, e.Message = KindAbsent, "the session with the token ended (was it removed?)"
		case p11.CKR_KEY_HANDLE_INVALID, p11.CKR_OBJECT_HANDLE_INVALID:
			e.Kind, e.Message = KindNotFound, "the key is no longer on the token (deleted?)"
		}
		return e
	}
	switch msg := err.Error(); {
	case msg == "could not find PKCS#11 token":
		e.Kind, e.Message = KindAbsent, "no such token is present (is it plugged in, and is its label right?)"
	case strings.Contains(msg, "failed to open module"), strings.Contains(msg, "failed to initialize module"):
		e.Kind, e.Message = KindModule, "the PKCS#11 module cannot be loaded (is PACT_PKCS11_MODULE or module-path right?)"
	}
	return e
}
