package keyplugin_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/pact-cli/pact/internal/testkeys"
	"github.com/pact-cli/pact/signer"
	"github.com/pact-cli/pact/signer/keyplugin"
)

type fixture struct {
	c   *keyplugin.Client
	sdk *kms.Client // the test's own hands on the KMS: disable, move aliases
}

func start(t *testing.T) fixture {
	t.Helper()
	lk := testkeys.StartLocalKMS(t)
	lk.SetEnv(t)
	c := &keyplugin.Client{Kind: "awskms", Path: filepath.Join(testkeys.BuildPlugin(t, "awskms"), keyplugin.Program("awskms"))}
	t.Cleanup(func() { c.Close() })
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return fixture{c: c, sdk: kms.NewFromConfig(cfg)}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func heldSigner(t *testing.T, f fixture, key string, k *keyplugin.KeyInfo) *signer.Signer {
	t.Helper()
	kid, _ := signer.Thumbprint(k.Public)
	s, err := signer.NewHeld("https://pa.example.com", f.c.Key(key, k.Public), jose.JSONWebKey{Key: k.Public, KeyID: kid}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A key pact creates in KMS through the plugin signs PA JWTs that verify
// with the public key the plugin reported, by ARN and by alias.
func TestSection3_2_KMSKeySignsThroughThePlugin(t *testing.T) {
	f := start(t)
	k, err := f.c.Create(ctx(t), "ES256", "alias/pact-test", "pact test key")
	if err != nil {
		t.Fatal(err)
	}
	if k.Alg != "ES256" || !strings.HasPrefix(k.ARN, "arn:aws:kms:eu-west-2:111122223333:key/") {
		t.Fatalf("created %+v", k)
	}
	for _, name := range []string{k.ARN, "alias/pact-test"} {
		s := heldSigner(t, f, name, k)
		tok, err := s.Mint("aud", "sub")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		p, err := jwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.ES256})
		if err != nil {
			t.Fatal(err)
		}
		var c signer.Claims
		if err := p.Claims(k.Public, &c); err != nil || c.Audience != "aud" {
			t.Fatalf("%s: %v %+v", name, err, c)
		}
	}
}

// Tamper: the alias is moved to another KMS key. The plugin's key now
// signs with that key; the signer verifies each signature with the
// published key and refuses (ErrKeyMismatch): nothing signed by the other
// key is handed out.
func TestSection3_2_KMSKeySwappedUnderTheAliasIsRefused(t *testing.T) {
	f := start(t)
	k, err := f.c.Create(ctx(t), "ES256", "alias/pact-swap", "pact test key")
	if err != nil {
		t.Fatal(err)
	}
	other, err := f.c.Create(ctx(t), "ES256", "", "another key")
	if err != nil {
		t.Fatal(err)
	}
	s := heldSigner(t, f, "alias/pact-swap", k)
	if _, err := s.Mint("aud", "sub"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.sdk.UpdateAlias(ctx(t), &kms.UpdateAliasInput{AliasName: aws.String("alias/pact-swap"), TargetKeyId: aws.String(other.ARN)}); err != nil {
		t.Fatal(err)
	}
	tok, err := s.Mint("aud", "sub")
	if !errors.Is(err, signer.ErrKeyMismatch) || tok != "" {
		t.Fatalf("after the swap: %q, %v; want ErrKeyMismatch", tok, err)
	}
	// And the plugin says the alias now names another public key.
	got, err := f.c.PublicKey(ctx(t), "alias/pact-swap")
	if err != nil || got.ARN != other.ARN {
		t.Fatalf("PublicKey after the swap = %+v, %v", got, err)
	}
}

// A disabled key is one sentence naming the cause, matching
// signer.ErrKeyUnavailable; so is a key that does not exist.
func TestKMSDisabledKeyIsAClearError(t *testing.T) {
	f := start(t)
	k, err := f.c.Create(ctx(t), "ES256", "", "pact test key")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.sdk.DisableKey(ctx(t), &kms.DisableKeyInput{KeyId: aws.String(k.ARN)}); err != nil {
		t.Fatal(err)
	}
	s := heldSigner(t, f, k.ARN, k)
	_, err = s.Mint("aud", "sub")
	if !errors.Is(err, signer.ErrKeyUnavailable) || !strings.Contains(err.Error(), "the KMS key is disabled") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("disabled: %v", err)
	}
	_, err = f.c.PublicKey(ctx(t), "alias/none")
	if !errors.Is(err, signer.ErrKeyUnavailable) || !strings.Contains(err.Error(), "no such key") {
		t.Fatalf("missing: %v", err)
	}
}

// Without the plugin program, the error says where to get it.
func TestKMSPluginMissingSaysWhereToGetIt(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	c := keyplugin.New("awskms")
	_, err := c.PublicKey(ctx(t), "alias/x")
	if !errors.Is(err, signer.ErrKeyUnavailable) || !strings.Contains(err.Error(), "pact-awskms program") || !strings.Contains(err.Error(), "go install github.com/pact-cli/pact/cmd/pact-awskms@") {
		t.Fatalf("err = %v", err)
	}
	// A program that is not a plugin is refused at hello.
	fake := filepath.Join(t.TempDir(), "pact-awskms")
	os.WriteFile(fake, []byte("#!/bin/sh\necho hello world\n"), 0o755)
	c = &keyplugin.Client{Kind: "awskms", Path: fake}
	if _, err := c.PublicKey(ctx(t), "alias/x"); err == nil || !strings.Contains(err.Error(), "did not start as a pact awskms plugin") {
		t.Fatalf("err = %v", err)
	}
}

// A data key (pact serve's, issue 28) wrapped under a KMS key through the
// plugin comes back only under the same key and encryption context.
func TestKMSDataKeyWrapThroughThePlugin(t *testing.T) {
	f := start(t)
	sym, err := f.sdk.CreateKey(ctx(t), &kms.CreateKeyInput{})
	if err != nil {
		t.Fatal(err)
	}
	key := aws.ToString(sym.KeyMetadata.Arn)
	dataKey := []byte("0123456789abcdef0123456789abcdef")
	encCtx := map[string]string{"pact": "data-key", "version": "1"}
	ct, err := f.c.Encrypt(ctx(t), key, dataKey, encCtx)
	if err != nil || len(ct) == 0 || strings.Contains(string(ct), string(dataKey)) {
		t.Fatalf("Encrypt = %x, %v", ct, err)
	}
	pt, err := f.c.Decrypt(ctx(t), key, ct, encCtx)
	if err != nil || string(pt) != string(dataKey) {
		t.Fatalf("Decrypt = %q, %v", pt, err)
	}
	if _, err := f.c.Decrypt(ctx(t), key, ct, map[string]string{"pact": "data-key", "version": "2"}); !errors.Is(err, signer.ErrKeyUnavailable) {
		t.Fatalf("Decrypt under another context = %v, want a refusal", err)
	}
}

// A plugin that stopped (killed, crashed) is started again by the next
// call: a long-lived pact (pact serve, pact chat, pact mcp) keeps signing
// with its KMS key instead of failing every call until it is restarted.
func TestIssue27_StoppedPluginIsStartedAgain(t *testing.T) {
	f := start(t)
	k, err := f.c.Create(ctx(t), "ES256", "", "pact test key")
	if err != nil {
		t.Fatal(err)
	}
	s := heldSigner(t, f, k.ARN, k)
	if _, err := s.Mint("aud", "sub"); err != nil {
		t.Fatal(err)
	}
	first := keyplugin.PID(f.c)
	p, err := os.FindProcess(first)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !keyplugin.Stopped(f.c) {
		if time.Now().After(deadline) {
			t.Fatal("the client did not notice its plugin stopped within 20 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	tok, err := s.Mint("aud", "sub")
	if err != nil || tok == "" {
		t.Fatalf("after the plugin stopped: %q, %v; want a new plugin to sign", tok, err)
	}
	if again := keyplugin.PID(f.c); again == first || again == 0 {
		t.Fatalf("plugin pid %d after a restart, was %d", again, first)
	}
}

// A PKCS#11 PIN in pact's environment (PACT_PKCS11_PIN) is not passed on
// to the plugin, which has no use for it.
func TestIssue27_PluginGetsNoPIN(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/PID/environ")
	}
	const pin = "pin-for-the-test-7c1e"
	t.Setenv("PACT_PKCS11_PIN", pin)
	f := start(t)
	if _, err := f.c.PublicKey(ctx(t), "alias/none"); err == nil {
		t.Fatal("an alias that names nothing was found")
	}
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", keyplugin.PID(f.c)))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(env), pin) {
		t.Fatal("the plugin's environment holds the PKCS#11 PIN")
	}
	if !strings.Contains(string(env), "AWS_ENDPOINT_URL=") {
		t.Fatal("the plugin's environment lost the AWS settings")
	}
}
