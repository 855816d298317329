// Package keyplugin is how pact uses a key held by a service whose client
// library it does not link: it starts a key plugin, a program named
// pact-KIND (pact-awskms for awskms: keys), and talks to it over its
// standard input and output, one JSON object a line.
//
// The plugin first writes {"hello": {"protocol": 1, "kind": "awskms"}}.
// pact then writes requests, each with an id; the plugin answers each with
// one response of the same id, in any order (requests run concurrently):
//
//	{"id":1,"op":"public","key":"alias/pact"}                → {"id":1,"arn":"arn:…","spki":"<base64 DER>","alg":"ES256"}
//	{"id":2,"op":"sign","key":"…","alg":"ES256","digest":"<base64>"} → {"id":2,"signature":"<base64>"} (ES256: ASN.1 DER)
//	{"id":3,"op":"create","alg":"ES256","alias":"alias/x","description":"…"} → as public
//	{"id":4,"op":"encrypt","key":"…","data":"<base64>","context":{…}} → {"id":4,"data":"<base64 ciphertext>"}
//	{"id":5,"op":"decrypt","key":"…","data":"<base64>","context":{…}} → {"id":5,"data":"<base64 plaintext>"}
//	any failure                                              → {"id":n,"error":{"kind":"disabled","message":"…"}}
//
// The plugin exits when its standard input closes (pact exited). Nothing
// secret crosses the pipe but a data key being wrapped or unwrapped:
// digests, public keys, signatures and ciphertexts. The PA JWTs themselves
// never do.
//
// Why a separate program: the AWS SDK's package initialisation would cost
// every pact process (pact version, pact send) one to two milliseconds,
// a fifth of a whole send; a plugin costs only the commands that sign
// with a KMS key, and tokens minted ahead (signer.Stock) hide even that.
package keyplugin

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"errors"
	"fmt"

	"github.com/pact-cli/pact/signer"
)

// Protocol is the version spoken here.
const Protocol = 1

// Ops.
const (
	OpPublic  = "public"
	OpSign    = "sign"
	OpCreate  = "create"
	OpEncrypt = "encrypt"
	OpDecrypt = "decrypt"
)

// Hello is the plugin's first line.
type Hello struct {
	Hello struct {
		Protocol int    `json:"protocol"`
		Kind     string `json:"kind"`
	} `json:"hello"`
}

// Request is one line pact writes.
type Request struct {
	ID          uint64            `json:"id"`
	Op          string            `json:"op"`
	Key         string            `json:"key,omitempty"`
	Alg         string            `json:"alg,omitempty"`
	Digest      []byte            `json:"digest,omitempty"`
	Data        []byte            `json:"data,omitempty"`
	Context     map[string]string `json:"context,omitempty"`
	Alias       string            `json:"alias,omitempty"`
	Description string            `json:"description,omitempty"`
}

// Response is one line the plugin writes.
type Response struct {
	ID        uint64 `json:"id"`
	ARN       string `json:"arn,omitempty"`
	SPKI      []byte `json:"spki,omitempty"` // DER SubjectPublicKeyInfo
	Alg       string `json:"alg,omitempty"`
	Signature []byte `json:"signature,omitempty"`
	Data      []byte `json:"data,omitempty"`
	Error     *Error `json:"error,omitempty"`
}

// Kinds of failure a plugin reports (the awskms package's kinds).
const (
	KindDisabled     = "disabled"
	KindNotFound     = "not_found"
	KindState        = "state"
	KindAccessDenied = "access_denied"
	KindThrottled    = "throttled"
	KindCredentials  = "credentials"
	KindRegion       = "region"
	KindNetwork      = "network"
	KindUnavailable  = "unavailable"
	KindKeyType      = "key_type"
	KindPlugin       = "plugin" // the plugin is missing, failed to start, or broke the protocol
	KindOther        = "other"
)

// Error is a failure the plugin reported (or a failure to reach it). It
// matches signer.ErrKeyUnavailable: the key cannot sign now.
type Error struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	Op      string `json:"-"`
}

func (e *Error) Error() string { return e.Cause() }

// Is makes every plugin failure a signer.ErrKeyUnavailable.
func (e *Error) Is(target error) bool { return target == signer.ErrKeyUnavailable }

// Cause is the failure in plain words, for the end of "cannot sign: …".
// The service's own message follows in brackets, single-line.
func (e *Error) Cause() string {
	var s string
	switch e.Kind {
	case KindDisabled:
		s = "the KMS key is disabled (enable it, or rotate to another key)"
	case KindNotFound:
		s = "AWS KMS has no such key in this account and Region (deleted, or an alias that names nothing?)"
	case KindState:
		s = "the KMS key cannot be used in its present state (scheduled for deletion? cancel the deletion, or rotate to another key)"
	case KindAccessDenied:
		what := "kms:" + e.Op
		if e.Op == "" {
			what = "the request"
		}
		s = "AWS denied " + what + ": the key policy or IAM policy must allow kms:Sign and kms:GetPublicKey on it"
	case KindThrottled:
		s = "AWS KMS is throttling requests; try again in a moment"
	case KindCredentials:
		s = "no AWS credentials AWS accepts were found (environment, ~/.aws, SSO, or an instance or container role)"
	case KindRegion:
		s = "no AWS Region is configured (set AWS_REGION, or use the key's ARN)"
	case KindNetwork:
		s = "AWS KMS cannot be reached (network, or AWS_ENDPOINT_URL)"
	case KindUnavailable:
		s = "AWS KMS cannot use the key right now; try again in a moment"
	case KindKeyType:
		s = "the KMS key cannot sign PA JWTs: it must be SIGN_VERIFY, ECC_NIST_P256 (ES256) or RSA (RS256)"
	case KindPlugin:
		return e.Message
	default:
		s = "AWS KMS refused the request"
	}
	// The service's own words, when they may say more (who was denied
	// what, why the state is wrong, the network error).
	if e.Message != "" && e.Kind != KindDisabled && e.Kind != KindNotFound {
		s += " [" + oneLine(e.Message) + "]"
	}
	return s
}

func oneLine(s string) string {
	out := make([]rune, 0, len(s))
	space := false
	for _, r := range s {
		if r < ' ' || r == 0x7f {
			r = ' '
		}
		if r == ' ' && space {
			continue
		}
		space = r == ' '
		out = append(out, r)
		if len(out) > 300 {
			out = append(out, '…')
			break
		}
	}
	return string(out)
}

// AlgFor is the algorithm a crypto.Signer call asks for on a key with
// public key pub: ES256, RS256, or PS256 (opts *rsa.PSSOptions).
func AlgFor(pub crypto.PublicKey, opts crypto.SignerOpts) (string, error) {
	if opts.HashFunc() != crypto.SHA256 {
		return "", errors.New("only SHA-256 digests are signed")
	}
	switch pub.(type) {
	case *ecdsa.PublicKey:
		return "ES256", nil
	case *rsa.PublicKey:
		if _, ok := opts.(*rsa.PSSOptions); ok {
			return "PS256", nil
		}
		return "RS256", nil
	}
	return "", fmt.Errorf("unsupported key type %T", pub)
}
