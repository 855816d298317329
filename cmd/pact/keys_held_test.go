package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/gofrs/flock"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/pact-cli/pact/demoprovider"
	"github.com/pact-cli/pact/internal/testkeys"
	"github.com/pact-cli/pact/signer/pkcs11"
)

// keyScriptCmds are the testscript commands of the key-store stories
// (keys_kms.txtar, keys_pkcs11.txtar):
//
//	localkms                       start local-kms on loopback for this script: AWS_* set, pact-awskms first on PATH
//	kms disable|enable KEY         disable or enable a KMS key (id, ARN or alias)
//	kms swap-alias ALIAS           point ALIAS at a new KMS key (the tamper story)
//	softhsm LABEL                  a fresh SoftHSM2 token: SOFTHSM2_CONF, PACT_PKCS11_MODULE, $HSM_PIN, $HSM_TOKEN set
//	exec pact-hsm delete|replace-private LABEL   change the token behind pact's back (keys_pkcs11_test.go)
//	agent-runs save|same           note how many times the demo Provider ran its agent; check it ran no more since
//	stock-clear                    wait for a refill of PA JWTs minted ahead to end, then empty the stock
//	                               (a token minted before a key was disabled or swapped is valid until it expires)
var keyScriptCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	"localkms":    cmdLocalKMS,
	"kms":         cmdKMS,
	"softhsm":     cmdSoftHSM,
	"agent-runs":  cmdAgentRuns,
	"stock-clear": cmdStockClear,
}

// keyScriptEnv is the environment of the key-store stories that
// pact-exit passes on: the AWS SDK's, SoftHSM2's and the PIN.
var keyScriptEnv = []string{"AWS_ENDPOINT_URL", "AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_EC2_METADATA_DISABLED",
	"AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_PROFILE", "SOFTHSM2_CONF", "PACT_PKCS11_MODULE", "PACT_PKCS11_PIN"}

// withKeyCmds adds keyScriptCmds to cmds.
func withKeyCmds(cmds map[string]func(ts *testscript.TestScript, neg bool, args []string)) map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	for k, v := range keyScriptCmds {
		cmds[k] = v
	}
	return cmds
}

// keyCondition answers the stories' conditions: [kms] local-kms and the
// plugin can run here; [softhsm] SoftHSM2 is installed; [pkcs11] this
// pact has PKCS#11 (go test -tags pkcs11). Under CI (CI=true) [kms] and
// [softhsm] are always true, so that a missing tool fails the story
// instead of skipping it.
func keyCondition(cond string) (ok, known bool) {
	switch cond {
	case "kms":
		if testkeys.CI() {
			return true, true
		}
		_, err := testkeys.LocalKMSPath()
		return err == nil, true
	case "softhsm":
		if testkeys.CI() {
			return true, true
		}
		_, err := testkeys.SoftHSMModule()
		return err == nil, true
	case "pkcs11":
		return pkcs11.Available, true
	}
	return false, false
}

func cmdLocalKMS(ts *testscript.TestScript, neg bool, args []string) {
	// Any free port, but not one the script's setup set aside (closed
	// again, so the system may hand it out): jwks serve and the demo need them.
	reserved := map[string]bool{}
	for _, v := range []string{"JWKS_ADDR", "DEMO_ADDR1", "DEMO_ADDR2", "DEAD"} {
		reserved[strings.TrimPrefix(ts.Getenv(v), "http://")] = true
	}
	var k *testkeys.LocalKMS
	for try := 0; ; try++ {
		var err error
		if k, err = testkeys.StartLocalKMSIn(ts.MkAbs(fmt.Sprintf("kmsdata%d", try))); err != nil {
			ts.Fatalf("%v", err)
		}
		if !reserved[strings.TrimPrefix(k.URL, "http://")] || try == 5 {
			break
		}
		k.Stop()
	}
	ts.Defer(k.Stop)
	for _, kv := range k.Env() {
		name, v, _ := strings.Cut(kv, "=")
		ts.Setenv(name, v)
	}
	dir, err := testkeys.PluginDir("awskms")
	if err != nil {
		ts.Fatalf("%v", err)
	}
	ts.Setenv("PATH", dir+string(os.PathListSeparator)+ts.Getenv("PATH"))
	kmsByWork.Store(ts.Getenv("WORK"), k)
}

var kmsByWork sync.Map

// kmsAdmin is the test's own hands on local-kms, through the AWS SDK.
func kmsAdmin(ts *testscript.TestScript) *kms.Client {
	if _, ok := kmsByWork.Load(ts.Getenv("WORK")); !ok {
		ts.Fatalf("run localkms first")
	}
	cfg, err := config.LoadDefaultConfig(context.Background(), config.WithRegion(ts.Getenv("AWS_REGION")),
		config.WithBaseEndpoint(ts.Getenv("AWS_ENDPOINT_URL")),
		config.WithCredentialsProvider(aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: ts.Getenv("AWS_ACCESS_KEY_ID"), SecretAccessKey: ts.Getenv("AWS_SECRET_ACCESS_KEY")}, nil
		})))
	if err != nil {
		ts.Fatalf("%v", err)
	}
	return kms.NewFromConfig(cfg)
}

func cmdKMS(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: kms disable|enable|swap-alias KEY")
	}
	c := kmsAdmin(ts)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var err error
	switch args[0] {
	case "disable":
		_, err = c.DisableKey(ctx, &kms.DisableKeyInput{KeyId: aws.String(args[1])})
	case "enable":
		_, err = c.EnableKey(ctx, &kms.EnableKeyInput{KeyId: aws.String(args[1])})
	case "swap-alias":
		var out *kms.CreateKeyOutput
		out, err = c.CreateKey(ctx, &kms.CreateKeyInput{KeySpec: "ECC_NIST_P256", KeyUsage: "SIGN_VERIFY"})
		if err == nil {
			_, err = c.UpdateAlias(ctx, &kms.UpdateAliasInput{AliasName: aws.String(args[1]), TargetKeyId: out.KeyMetadata.KeyId})
		}
	default:
		ts.Fatalf("usage: kms disable|enable|swap-alias KEY")
	}
	if err != nil {
		ts.Fatalf("kms %s: %v", strings.Join(args, " "), err)
	}
}

func cmdSoftHSM(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: softhsm LABEL")
	}
	h, err := testkeys.InitSoftHSM(ts.MkAbs("hsm-"+args[0]), args[0])
	if err != nil {
		ts.Fatalf("%v", err)
	}
	for _, kv := range h.Env() {
		name, v, _ := strings.Cut(kv, "=")
		ts.Setenv(name, v)
	}
	ts.Setenv("HSM_PIN", h.PIN)
	ts.Setenv("HSM_TOKEN", h.Token)
}

func cmdAgentRuns(ts *testscript.TestScript, neg bool, args []string) {
	v, ok := providers.Load(ts.Getenv("WORK"))
	if !ok || len(args) != 1 {
		ts.Fatalf("usage: agent-runs save|same (in a script with a demo Provider)")
	}
	got := v.(*demoprovider.Server).AgentRuns()
	switch args[0] {
	case "save":
		ts.Setenv("AGENT_RUNS", strconv.Itoa(got))
	case "same":
		if want := ts.Getenv("AGENT_RUNS"); strconv.Itoa(got) != want {
			ts.Fatalf("the demo Provider ran its agent %d times, %s before: a message was sent", got, want)
		}
	default:
		ts.Fatalf("usage: agent-runs save|same")
	}
}

func cmdStockClear(ts *testscript.TestScript, neg bool, args []string) {
	name := "default"
	if v := ts.Getenv("PACT_PROFILE"); v != "" {
		name = v
	}
	dir := filepath.Join(ts.Getenv("PACT_HOME"), "data", "profiles", name, "minted-ahead")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		ts.Fatalf("%v", err)
	}
	lock := flock.New(filepath.Join(dir, ".refill.lock"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if ok, err := lock.TryLockContext(ctx, 20*time.Millisecond); err != nil || !ok {
		ts.Fatalf("a refill of the stock did not end within 60 s: %v", err)
	}
	defer lock.Unlock()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.Name() != ".refill.lock" {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// The default build of pact is cgo-free and links neither the AWS SDK
// (its package initialisation would slow every pact process: KMS keys go
// through the pact-awskms plugin) nor PKCS#11 (cgo: only with -tags
// pkcs11).
func TestIssue27_DefaultBuildLinksNoCgoAndNoAWSSDK(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, "go", "list", "-deps", "-f", "{{.ImportPath}} {{.Standard}} {{len .CgoFiles}}", ".")
	c.Env = append(os.Environ(), "CGO_ENABLED=1", "GOFLAGS=-buildvcs=false")
	out, err := c.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			continue
		}
		if f[1] == "false" && f[2] != "0" {
			t.Errorf("the default build links %s, which needs cgo", f[0])
		}
		for _, banned := range []string{"github.com/aws/", "github.com/ThalesGroup/crypto11", "github.com/miekg/pkcs11"} {
			if strings.HasPrefix(f[0], banned) {
				t.Errorf("the default build links %s", f[0])
			}
		}
	}
}
