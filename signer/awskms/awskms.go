// Package awskms reaches personal-agent signing keys (and data keys) held
// in AWS KMS through the AWS SDK for Go v2: its standard configuration
// (credential chain, Region, AWS_ENDPOINT_URL), GetPublicKey, Sign,
// CreateKey and CreateAlias, Encrypt and Decrypt.
//
// The pact binary does not link this package (the SDK's package
// initialisation would cost every pact process a millisecond or two): it
// runs inside the pact-awskms program, which pact starts when a key is an
// awskms: URI and talks to over package keyplugin's protocol.
package awskms

import (
	"context"
	"crypto"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// Algorithms, as PACT names them (§3.2), and the RSASSA-PSS one that
// `pact provider check` also signs.
const (
	ES256 = "ES256"
	RS256 = "RS256"
	PS256 = "PS256"
)

// Kinds of failure (Error.Kind): what went wrong, so that pact can say it
// in one sentence naming the key.
const (
	KindDisabled     = "disabled"      // DisabledException
	KindNotFound     = "not_found"     // NotFoundException, or an alias that names nothing
	KindState        = "state"         // KMSInvalidStateException: pending deletion, pending import…
	KindAccessDenied = "access_denied" // AccessDeniedException: the policy lacks kms:Sign, kms:GetPublicKey…
	KindThrottled    = "throttled"     // ThrottlingException, LimitExceededException
	KindCredentials  = "credentials"   // no credentials, or credentials AWS does not accept
	KindRegion       = "region"        // no Region configured
	KindNetwork      = "network"       // the endpoint cannot be reached, or did not answer in time
	KindUnavailable  = "unavailable"   // KMS-side: KMSInternalException, DependencyTimeoutException, KeyUnavailableException
	KindKeyType      = "key_type"      // the key cannot sign ES256/RS256 (spec or usage)
	KindOther        = "other"
)

// Error is a failed KMS operation: Kind says what went wrong, Message is
// AWS's or the SDK's own words (never a secret: requests carry digests,
// public keys and ciphertexts only).
type Error struct {
	Kind    string
	Op      string // "Sign", "GetPublicKey", …
	Message string
}

func (e *Error) Error() string { return e.Op + ": " + e.Message }

// Client is a KMS client with the SDK's standard configuration.
type Client struct {
	kms *kms.Client
}

// New loads the SDK's default configuration (environment, shared files,
// SSO, container and instance roles; AWS_REGION, AWS_ENDPOINT_URL) and
// returns a client. Loading reads files only: no request is made.
func New(ctx context.Context) (*Client, error) {
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, &Error{Kind: KindCredentials, Op: "LoadDefaultConfig", Message: err.Error()}
	}
	return &Client{kms: kms.NewFromConfig(cfg)}, nil
}

// KeyInfo is a KMS key as pact sees it.
type KeyInfo struct {
	ARN    string           // the key's ARN (an alias resolved)
	Public crypto.PublicKey // *ecdsa.PublicKey (P-256) or *rsa.PublicKey
	Alg    string           // ES256 or RS256
}

// PublicKey fetches key's public half (GetPublicKey) and checks that it
// can sign PA JWTs: SIGN_VERIFY, and ECC_NIST_P256 (ES256) or RSA
// (RS256). key is a key id, key ARN, alias/NAME or alias ARN.
func (c *Client) PublicKey(ctx context.Context, key string) (*KeyInfo, error) {
	out, err := c.kms.GetPublicKey(ctx, &kms.GetPublicKeyInput{KeyId: aws.String(key)})
	if err != nil {
		return nil, classify("GetPublicKey", err)
	}
	if out.KeyUsage != types.KeyUsageTypeSignVerify {
		return nil, &Error{Kind: KindKeyType, Op: "GetPublicKey", Message: fmt.Sprintf("the key's usage is %s, not SIGN_VERIFY", out.KeyUsage)}
	}
	var alg string
	switch out.KeySpec {
	case types.KeySpecEccNistP256:
		alg = ES256
	case types.KeySpecRsa2048, types.KeySpecRsa3072, types.KeySpecRsa4096:
		alg = RS256
	default:
		return nil, &Error{Kind: KindKeyType, Op: "GetPublicKey", Message: fmt.Sprintf("the key spec is %s; PACT signs with ECC_NIST_P256 (ES256) or RSA (RS256)", out.KeySpec)}
	}
	pub, err := x509.ParsePKIXPublicKey(out.PublicKey)
	if err != nil {
		return nil, &Error{Kind: KindOther, Op: "GetPublicKey", Message: "the public key returned is not a DER SubjectPublicKeyInfo: " + err.Error()}
	}
	return &KeyInfo{ARN: aws.ToString(out.KeyId), Public: pub, Alg: alg}, nil
}

// Sign signs a SHA-256 digest with key (Sign, MessageType DIGEST): alg
// ES256 returns the ASN.1 DER ECDSA signature KMS makes; RS256 PKCS #1
// v1.5; PS256 RSASSA-PSS.
func (c *Client) Sign(ctx context.Context, key, alg string, digest []byte) ([]byte, error) {
	var spec types.SigningAlgorithmSpec
	switch alg {
	case ES256:
		spec = types.SigningAlgorithmSpecEcdsaSha256
	case RS256:
		spec = types.SigningAlgorithmSpecRsassaPkcs1V15Sha256
	case PS256:
		spec = types.SigningAlgorithmSpecRsassaPssSha256
	default:
		return nil, &Error{Kind: KindKeyType, Op: "Sign", Message: "unsupported algorithm " + alg}
	}
	if len(digest) != 32 {
		return nil, &Error{Kind: KindOther, Op: "Sign", Message: fmt.Sprintf("a SHA-256 digest is 32 bytes, not %d", len(digest))}
	}
	out, err := c.kms.Sign(ctx, &kms.SignInput{KeyId: aws.String(key), Message: digest,
		MessageType: types.MessageTypeDigest, SigningAlgorithm: spec})
	if err != nil {
		return nil, classify("Sign", err)
	}
	return out.Signature, nil
}

// Create makes a new KMS key for signing PA JWTs: ECC_NIST_P256 (alg
// ES256) or RSA_2048 (RS256), SIGN_VERIFY, with description; and, when
// alias is set ("alias/NAME"), the alias naming it.
func (c *Client) Create(ctx context.Context, alg, description, alias string) (*KeyInfo, error) {
	spec := types.KeySpecEccNistP256
	if alg == RS256 {
		spec = types.KeySpecRsa2048
	} else if alg != ES256 {
		return nil, &Error{Kind: KindKeyType, Op: "CreateKey", Message: "unsupported algorithm " + alg}
	}
	out, err := c.kms.CreateKey(ctx, &kms.CreateKeyInput{KeySpec: spec, KeyUsage: types.KeyUsageTypeSignVerify,
		Description: aws.String(description)})
	if err != nil {
		return nil, classify("CreateKey", err)
	}
	arn := aws.ToString(out.KeyMetadata.Arn)
	if alias != "" {
		if _, err := c.kms.CreateAlias(ctx, &kms.CreateAliasInput{AliasName: aws.String(alias), TargetKeyId: aws.String(arn)}); err != nil {
			return nil, classify("CreateAlias", err)
		}
	}
	return c.PublicKey(ctx, arn)
}

// Encrypt encrypts a small secret (at most 4 KiB: a data key) under the
// symmetric key with the encryption context given (bound to the
// ciphertext: Decrypt needs the same).
func (c *Client) Encrypt(ctx context.Context, key string, plaintext []byte, encCtx map[string]string) ([]byte, error) {
	out, err := c.kms.Encrypt(ctx, &kms.EncryptInput{KeyId: aws.String(key), Plaintext: plaintext, EncryptionContext: encCtx})
	if err != nil {
		return nil, classify("Encrypt", err)
	}
	return out.CiphertextBlob, nil
}

// Decrypt decrypts what Encrypt returned, under the same key and
// encryption context.
func (c *Client) Decrypt(ctx context.Context, key string, ciphertext []byte, encCtx map[string]string) ([]byte, error) {
	out, err := c.kms.Decrypt(ctx, &kms.DecryptInput{KeyId: aws.String(key), CiphertextBlob: ciphertext, EncryptionContext: encCtx})
	if err != nil {
		return nil, classify("Decrypt", err)
	}
	return out.Plaintext, nil
}

// classify turns an SDK error into an *Error with its Kind.
func classify(op string, err error) *Error {
	e := &Error{Kind: KindOther, Op: op, Message: err.Error()}
	var (
		disabled *types.DisabledException
		notFound *types.NotFoundException
		state    *types.KMSInvalidStateException
		usage    *types.InvalidKeyUsageException
		limit    *types.LimitExceededException
		internal *types.KMSInternalException
		depTime  *types.DependencyTimeoutException
		unavail  *types.KeyUnavailableException
		signing  *v4.SigningError
		send     *smithyhttp.RequestSendError
		region   *aws.MissingRegionError
		api      smithy.APIError
	)
	switch {
	case errors.As(err, &disabled):
		e.Kind, e.Message = KindDisabled, disabled.ErrorMessage()
	case errors.As(err, &notFound):
		e.Kind, e.Message = KindNotFound, notFound.ErrorMessage()
	case errors.As(err, &state):
		e.Kind, e.Message = KindState, state.ErrorMessage()
	case errors.As(err, &usage):
		e.Kind, e.Message = KindKeyType, usage.ErrorMessage()
	case errors.As(err, &limit):
		e.Kind, e.Message = KindThrottled, limit.ErrorMessage()
	case errors.As(err, &internal), errors.As(err, &depTime), errors.As(err, &unavail):
		e.Kind = KindUnavailable
	case errors.As(err, &signing), strings.Contains(err.Error(), "get identity: "), strings.Contains(err.Error(), "failed to retrieve credentials"):
		// The SDK's identity resolution wraps no typed error.
		e.Kind = KindCredentials
	case errors.As(err, &region):
		e.Kind = KindRegion
	case errors.As(err, &api):
		e.Message = api.ErrorMessage()
		switch code := api.ErrorCode(); {
		case code == "AccessDeniedException" || strings.HasPrefix(code, "AccessDenied"):
			e.Kind = KindAccessDenied
		case code == "ThrottlingException" || code == "TooManyRequestsException" || code == "RequestLimitExceeded":
			e.Kind = KindThrottled
		case code == "UnrecognizedClientException" || code == "InvalidSignatureException" || code == "ExpiredTokenException" || code == "IncompleteSignature":
			e.Kind = KindCredentials
		}
		if e.Message == "" {
			e.Message = api.ErrorCode()
		}
	case errors.As(err, &send), errors.Is(err, context.DeadlineExceeded):
		e.Kind = KindNetwork
	}
	return e
}
