package awskms

import (
	"context"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/sha256"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"

	"github.com/pact-cli/pact/internal/testkeys"
)

func client(t *testing.T) *Client {
	t.Helper()
	lk := testkeys.StartLocalKMS(t)
	lk.SetEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

// A key pact creates is ECC_NIST_P256 (or RSA_2048), SIGN_VERIFY; it signs
// SHA-256 digests that its public key verifies, reached by ARN or alias.
func TestKMSCreateSignVerify(t *testing.T) {
	c := client(t)
	digest := sha256.Sum256([]byte("header.payload"))
	for _, alg := range []string{ES256, RS256} {
		k, err := c.Create(ctx(t), alg, "pact test", "alias/pact-"+strings.ToLower(alg))
		if err != nil {
			t.Fatalf("%s: %v", alg, err)
		}
		if k.Alg != alg || !strings.HasPrefix(k.ARN, "arn:aws:kms:") {
			t.Fatalf("%s: %+v", alg, k)
		}
		for _, name := range []string{k.ARN, "alias/pact-" + strings.ToLower(alg)} {
			got, err := c.PublicKey(ctx(t), name)
			if err != nil || got.ARN != k.ARN {
				t.Fatalf("%s: PublicKey(%s) = %+v, %v", alg, name, got, err)
			}
			sig, err := c.Sign(ctx(t), name, alg, digest[:])
			if err != nil {
				t.Fatalf("%s: Sign(%s): %v", alg, name, err)
			}
			switch pub := k.Public.(type) {
			case *ecdsa.PublicKey:
				if !ecdsa.VerifyASN1(pub, digest[:], sig) {
					t.Fatalf("ES256 DER signature does not verify")
				}
			case *rsa.PublicKey:
				if err := rsa.VerifyPKCS1v15(pub, 5 /* crypto.SHA256 */, digest[:], sig); err != nil {
					t.Fatalf("RS256 signature does not verify: %v", err)
				}
			}
		}
	}
}

// Each failure has its kind, so pact can say it in one sentence.
func TestKMSFailuresAreClassified(t *testing.T) {
	c := client(t)
	digest := sha256.Sum256([]byte("x"))
	k, err := c.Create(ctx(t), ES256, "pact test", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.kms.DisableKey(ctx(t), &kms.DisableKeyInput{KeyId: aws.String(k.ARN)}); err != nil {
		t.Fatal(err)
	}
	wantKind(t, "disabled", KindDisabled)(c.Sign(ctx(t), k.ARN, ES256, digest[:]))
	if _, err := c.kms.EnableKey(ctx(t), &kms.EnableKeyInput{KeyId: aws.String(k.ARN)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Sign(ctx(t), k.ARN, ES256, digest[:]); err != nil {
		t.Fatalf("enabled again: %v", err)
	}
	if _, err := c.kms.ScheduleKeyDeletion(ctx(t), &kms.ScheduleKeyDeletionInput{KeyId: aws.String(k.ARN), PendingWindowInDays: aws.Int32(7)}); err != nil {
		t.Fatal(err)
	}
	wantKind(t, "pending deletion", KindState)(c.Sign(ctx(t), k.ARN, ES256, digest[:]))
	wantKind(t, "unknown alias", KindNotFound)(c.Sign(ctx(t), "alias/nothing-here", ES256, digest[:]))

	// A symmetric key cannot sign.
	sym, err := c.kms.CreateKey(ctx(t), &kms.CreateKeyInput{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.PublicKey(ctx(t), aws.ToString(sym.KeyMetadata.Arn))
	var e *Error
	if !errors.As(err, &e) || (e.Kind != KindKeyType && e.Kind != KindOther) {
		t.Fatalf("symmetric key: %v", err)
	}
}

// A data key wrapped under a KMS key comes back only with the same
// encryption context.
func TestKMSEncryptDecrypt(t *testing.T) {
	c := client(t)
	sym, err := c.kms.CreateKey(ctx(t), &kms.CreateKeyInput{})
	if err != nil {
		t.Fatal(err)
	}
	arn := aws.ToString(sym.KeyMetadata.Arn)
	ct, err := c.Encrypt(ctx(t), arn, []byte("32 bytes of data key material..."), map[string]string{"pact": "data-key-v1"})
	if err != nil {
		t.Fatal(err)
	}
	pt, err := c.Decrypt(ctx(t), arn, ct, map[string]string{"pact": "data-key-v1"})
	if err != nil || string(pt) != "32 bytes of data key material..." {
		t.Fatalf("Decrypt = %q, %v", pt, err)
	}
	if _, err := c.Decrypt(ctx(t), arn, ct, map[string]string{"pact": "other"}); err == nil {
		t.Fatal("decrypted under another encryption context")
	}
}

// No endpoint answering is a network failure; no credentials is a
// credentials failure: both said as such, not as a bare SDK error.
func TestKMSNetworkAndCredentialFailures(t *testing.T) {
	lk := testkeys.StartLocalKMS(t)
	lk.SetEnv(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	t.Setenv("AWS_ENDPOINT_URL", dead)
	t.Setenv("AWS_MAX_ATTEMPTS", "1")
	c, err := New(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	digest := sha256.Sum256([]byte("x"))
	wantKind(t, "dead endpoint", KindNetwork)(c.Sign(ctx(t), "alias/x", ES256, digest[:]))

	t.Setenv("AWS_ENDPOINT_URL", lk.URL)
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	c, err = New(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	wantKind(t, "no credentials", KindCredentials)(c.Sign(ctx(t), "alias/x", ES256, digest[:]))
}

func wantKind(t *testing.T, what, kind string) func([]byte, error) {
	return func(_ []byte, err error) {
		t.Helper()
		var e *Error
		if !errors.As(err, &e) || e.Kind != kind {
			t.Fatalf("%s: err = %v (%#v), want kind %s", what, err, e, kind)
		}
	}
}
