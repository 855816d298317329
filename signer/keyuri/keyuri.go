// Package keyuri is the one grammar that names where a personal agent's
// signing key lives, used by `pact init --key`, `pact key rotate --key` and
// the profile's configuration:
//
//	keyring:                                  the profile's secret store (the OS keyring or its 0600 file): the default
//	pkcs11:token=LABEL;object=LABEL[;id=%01]  a key on a PKCS#11 token (RFC 7512); ?module-path=/path/to/module.so
//	awskms:KEY                                an AWS KMS key: key id, key ARN, alias/NAME or alias ARN;
//	                                          "awskms:" alone asks pact to create one (init, rotate)
//
// Parse checks a URI and says in one sentence what is wrong with it; String
// gives it back in canonical form. Nothing here opens a key.
package keyuri

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Kinds of key.
const (
	Keyring = "keyring"
	PKCS11  = "pkcs11"
	AWSKMS  = "awskms"
)

// ErrInvalid is what every Parse error matches.
var ErrInvalid = errors.New("invalid key URI")

// URI names one key. Exactly one of the kind's fields is used.
type URI struct {
	Kind string // Keyring, PKCS11 or AWSKMS

	// PKCS#11 (RFC 7512). One of Token, Serial or SlotID selects the token;
	// Object (CKA_LABEL) and/or ID (CKA_ID) select the key on it.
	Token, Serial, SlotID string
	Object                string
	ID                    []byte
	ModulePath            string // the module (shared library); "" = PACT_PKCS11_MODULE

	// AWS KMS: a key id, key ARN, "alias/NAME" or alias ARN ("" = make a new key).
	KeyID string
}

// Default is the URI of a key kept in the profile's secret store.
var Default = URI{Kind: Keyring}

// Parse reads a key URI. "" is Default.
func Parse(s string) (URI, error) {
	if s == "" {
		return Default, nil
	}
	scheme, rest, ok := strings.Cut(s, ":")
	if !ok {
		return URI{}, invalid("%q is not a key URI: use keyring:, pkcs11:token=…;object=… or awskms:KEY", s)
	}
	switch strings.ToLower(scheme) {
	case Keyring:
		if rest != "" {
			return URI{}, invalid("%q: keyring: takes nothing after the colon (the profile's own keyring or file holds the key)", s)
		}
		return Default, nil
	case PKCS11:
		return parsePKCS11(s, rest)
	case AWSKMS:
		return parseKMS(s, rest)
	}
	return URI{}, invalid("%q: unknown key URI scheme %q; use keyring:, pkcs11: or awskms:", s, scheme)
}

func invalid(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, a...))
}

// pathAttrs are the RFC 7512 path attributes pact understands; the others
// would narrow the match in ways pact cannot honour, so they are refused.
var pathAttrs = map[string]bool{"token": true, "serial": true, "slot-id": true, "object": true, "id": true, "type": true}

func parsePKCS11(s, rest string) (URI, error) {
	u := URI{Kind: PKCS11}
	path, query, _ := strings.Cut(rest, "?")
	// A PIN in the URI is refused before anything else, so that no other
	// message repeats the URI with the PIN in it.
	for _, q := range strings.Split(query, "&") {
		if name, _, _ := strings.Cut(q, "="); name == "pin-value" || name == "pin-source" {
			return URI{}, invalid("a PIN never goes in a key URI (it would be stored in the profile); remove %s and give the PIN in PACT_PKCS11_PIN, with `pact key pin`, or at the prompt", name)
		}
	}
	seen := map[string]bool{}
	for _, attr := range strings.Split(path, ";") {
		if attr == "" {
			continue
		}
		name, raw, ok := strings.Cut(attr, "=")
		if !ok {
			return URI{}, invalid("%q: the attribute %q has no value (RFC 7512: name=value, separated by ;)", s, attr)
		}
		if !pathAttrs[name] {
			return URI{}, invalid("%q: pact does not understand the attribute %q; use token (or serial, slot-id), object and id", s, name)
		}
		if seen[name] {
			return URI{}, invalid("%q: the attribute %q appears twice", s, name)
		}
		seen[name] = true
		v, err := url.PathUnescape(raw)
		if err != nil {
			return URI{}, invalid("%q: the value of %s is not percent-encoded correctly", s, name)
		}
		switch name {
		case "token":
			u.Token = v
		case "serial":
			u.Serial = v
		case "slot-id":
			u.SlotID = v
		case "object":
			u.Object = v
		case "id":
			u.ID = []byte(v)
		case "type":
			if v != "private" {
				return URI{}, invalid("%q: type=%s names no private key; pact signs with type=private (or leave type out)", s, v)
			}
		}
	}
	if query != "" {
		for _, q := range strings.Split(query, "&") {
			name, raw, _ := strings.Cut(q, "=")
			v, err := url.PathUnescape(raw)
			if err != nil {
				return URI{}, invalid("%q: the value of %s is not percent-encoded correctly", s, name)
			}
			switch name {
			case "module-path":
				if seen[name] {
					return URI{}, invalid("%q: module-path appears twice", s)
				}
				seen[name] = true
				if !strings.HasPrefix(v, "/") && !isWindowsAbs(v) {
					return URI{}, invalid("%q: module-path must be an absolute path to the PKCS#11 module", s)
				}
				u.ModulePath = v
			default:
				return URI{}, invalid("%q: pact does not understand the query attribute %q; use module-path", s, name)
			}
		}
	}
	selectors := 0
	for _, v := range []string{u.Token, u.Serial, u.SlotID} {
		if v != "" {
			selectors++
		}
	}
	if selectors != 1 {
		return URI{}, invalid("%q must name its token by exactly one of token=LABEL, serial= or slot-id=", s)
	}
	if u.Object == "" && len(u.ID) == 0 {
		return URI{}, invalid("%q must name its key with object=LABEL (or id=)", s)
	}
	return u, nil
}

func isWindowsAbs(p string) bool {
	return len(p) > 2 && p[1] == ':' && (p[2] == '\\' || p[2] == '/')
}

const errKMSUsage = "use awskms:KEY-ID, awskms:arn:aws:kms:REGION:ACCOUNT:key/ID, awskms:alias/NAME, or awskms: alone to create a key"

func parseKMS(s, rest string) (URI, error) {
	switch {
	case rest == "", isKMSKeyID(rest), isKMSARN(rest):
	case strings.HasPrefix(rest, "alias/aws/"):
		return URI{}, invalid("%q: alias/aws/ names AWS managed keys, which cannot sign; %s", s, errKMSUsage)
	case isKMSAlias(rest):
	default:
		return URI{}, invalid("%q does not name a KMS key: %s", s, errKMSUsage)
	}
	return URI{Kind: AWSKMS, KeyID: rest}, nil
}

// only reports whether every byte of s is in set (ASCII letters and digits
// when alnum).
func only(s string, alnum bool, set string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if alnum && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') || strings.IndexByte(set, c) >= 0 {
			continue
		}
		return false
	}
	return true
}

// isKMSKeyID: a key id (a UUID, lower-case hex) or a multi-Region key id (mrk- and 32 hex digits).
func isKMSKeyID(s string) bool {
	const hexd = "0123456789abcdef"
	if rest, ok := strings.CutPrefix(s, "mrk-"); ok {
		return len(rest) == 32 && only(rest, false, hexd)
	}
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if s[i] != '-' {
				return false
			}
		} else if strings.IndexByte(hexd, s[i]) < 0 {
			return false
		}
	}
	return true
}

// isKMSAlias: alias/NAME, NAME of letters, digits, / _ - (at most 250).
func isKMSAlias(s string) bool {
	name, ok := strings.CutPrefix(s, "alias/")
	return ok && len(name) >= 1 && len(name) <= 250 && only(name, true, "/_-")
}

// isKMSARN: arn:PARTITION:kms:REGION:ACCOUNT:key/ID or …:alias/NAME.
func isKMSARN(s string) bool {
	f := strings.SplitN(s, ":", 6)
	if len(f) != 6 || f[0] != "arn" || !strings.HasPrefix(f[1], "aws") || f[2] != "kms" ||
		f[3] == "" || !only(f[3], true, "-") || len(f[4]) != 12 || !only(f[4], false, "0123456789") {
		return false
	}
	if id, ok := strings.CutPrefix(f[5], "key/"); ok {
		return id != "" && only(id, true, "-")
	}
	return isKMSAlias(f[5])
}

// String is the URI in canonical form: Parse(u.String()) == u.
func (u URI) String() string {
	switch u.Kind {
	case PKCS11:
		var attrs []string
		add := func(name, v string) {
			if v != "" {
				attrs = append(attrs, name+"="+escape(v))
			}
		}
		add("token", u.Token)
		add("serial", u.Serial)
		add("slot-id", u.SlotID)
		add("object", u.Object)
		if len(u.ID) > 0 { // binary: every byte percent-encoded (RFC 7512 §2.3)
			var b strings.Builder
			for _, c := range u.ID {
				fmt.Fprintf(&b, "%%%02X", c)
			}
			attrs = append(attrs, "id="+b.String())
		}
		s := "pkcs11:" + strings.Join(attrs, ";")
		if u.ModulePath != "" {
			s += "?module-path=" + escape(u.ModulePath)
		}
		return s
	case AWSKMS:
		return "awskms:" + u.KeyID
	}
	return "keyring:"
}

// escape percent-encodes everything but RFC 3986 unreserved characters
// (and "/" for paths), as RFC 7512 §2.3 allows.
func escape(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~/", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// Describe says where the key lives, for people: "token LABEL, object
// LABEL", the KMS key, or "" for a key in the profile's secret store (the
// profile says which).
func (u URI) Describe() string {
	switch u.Kind {
	case PKCS11:
		var parts []string
		switch {
		case u.Token != "":
			parts = append(parts, fmt.Sprintf("token %q", u.Token))
		case u.Serial != "":
			parts = append(parts, "token serial "+u.Serial)
		default:
			parts = append(parts, "slot "+u.SlotID)
		}
		if u.Object != "" {
			parts = append(parts, fmt.Sprintf("object %q", u.Object))
		}
		if len(u.ID) > 0 {
			parts = append(parts, "id "+hex.EncodeToString(u.ID))
		}
		return strings.Join(parts, ", ")
	case AWSKMS:
		if u.KeyID == "" {
			return "a new AWS KMS key"
		}
		return "AWS KMS key " + u.KeyID
	}
	return ""
}

// Held reports whether the key lives outside pact's memory (a token or a
// KMS): it signs but never leaves.
func (u URI) Held() bool { return u.Kind == PKCS11 || u.Kind == AWSKMS }
