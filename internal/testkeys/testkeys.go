// Package testkeys starts the real key stores pact's tests sign with: a
// SoftHSM2 token in a private SOFTHSM2_CONF and token folder, and
// local-kms (an AWS KMS emulator, through internal/localkms) on
// 127.0.0.1. No fake of either: the tests drive them through crypto11
// and the AWS SDK as pact does.
//
// A missing tool skips the test with a message saying what to install,
// except under CI (CI=true), where it fails: the suite must not pass by
// skipping there.
package testkeys

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Missing skips t (or fails it under CI=true) because what is missing.
func Missing(t testing.TB, what string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s (CI=true: the key-store tests must run here; .ci/run installs it)", what)
	}
	t.Skipf("skipped: %s", what)
}

// SoftHSM is a SoftHSM2 token initialised for one test.
type SoftHSM struct {
	Module string // the PKCS#11 module
	Conf   string // the SOFTHSM2_CONF file
	Token  string // the token's label
	PIN    string // the user PIN
	SOPIN  string
	Dir    string
}

// Env is the environment a pact process needs to use the token: its
// SOFTHSM2_CONF and PACT_PKCS11_MODULE (not the PIN).
func (h *SoftHSM) Env() []string {
	return []string{"SOFTHSM2_CONF=" + h.Conf, "PACT_PKCS11_MODULE=" + h.Module}
}

// ModuleCandidates are where Debian and others install SoftHSM2's module.
var ModuleCandidates = []string{
	"/usr/lib/softhsm/libsofthsm2.so",
	"/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so",
	"/usr/lib/aarch64-linux-gnu/softhsm/libsofthsm2.so",
	"/usr/local/lib/softhsm/libsofthsm2.so",
	"/opt/homebrew/lib/softhsm/libsofthsm2.so",
}

// NewSoftHSM initialises a fresh token labelled label in a temporary
// folder, with its own SOFTHSM2_CONF (set in t's environment too, so
// that crypto11 in this process finds it).
func NewSoftHSM(t testing.TB, label string) *SoftHSM {
	t.Helper()
	if _, err := exec.LookPath("softhsm2-util"); err != nil {
		Missing(t, "SoftHSM2 is not installed (softhsm2-util not found; Debian: apt-get install softhsm2)")
	}
	module := ""
	for _, m := range ModuleCandidates {
		if _, err := os.Stat(m); err == nil {
			module = m
			break
		}
	}
	if module == "" {
		Missing(t, "SoftHSM2's module libsofthsm2.so was not found in "+strings.Join(ModuleCandidates, ", "))
	}
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	if err := os.Mkdir(tokens, 0o700); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "softhsm2.conf")
	body := "directories.tokendir = " + tokens + "\nobjectstore.backend = file\nlog.level = ERROR\nslots.removable = false\n"
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SOFTHSM2_CONF", conf)
	h := &SoftHSM{Module: module, Conf: conf, Token: label, PIN: "1234-test-pin", SOPIN: "5678-test-so", Dir: dir}
	h.Util(t, "--init-token", "--free", "--label", label, "--pin", h.PIN, "--so-pin", h.SOPIN)
	return h
}

// Util runs softhsm2-util with args against this token's configuration.
func (h *SoftHSM) Util(t testing.TB, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, "softhsm2-util", args...)
	c.Env = append(os.Environ(), "SOFTHSM2_CONF="+h.Conf)
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("softhsm2-util %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// LocalKMS is a running local-kms on 127.0.0.1.
type LocalKMS struct {
	URL     string // http://127.0.0.1:PORT
	Region  string
	Account string
}

// Env is the environment the AWS SDK (and so pact-awskms) needs to reach
// it: the endpoint, a Region, static test credentials, and no shared
// files or instance metadata from this machine.
func (k *LocalKMS) Env() []string {
	return []string{
		"AWS_ENDPOINT_URL=" + k.URL,
		"AWS_REGION=" + k.Region,
		"AWS_ACCESS_KEY_ID=AKIDPACTTEST",
		"AWS_SECRET_ACCESS_KEY=pact-test-secret",
		"AWS_EC2_METADATA_DISABLED=true",
		"AWS_CONFIG_FILE=" + os.DevNull,
		"AWS_SHARED_CREDENTIALS_FILE=" + os.DevNull,
		"AWS_PROFILE=",
	}
}

// SetEnv puts Env into t's environment (for the SDK in this process).
func (k *LocalKMS) SetEnv(t testing.TB) {
	for _, kv := range k.Env() {
		name, v, _ := strings.Cut(kv, "=")
		t.Setenv(name, v)
	}
}

// StartLocalKMS starts local-kms on a free loopback port with its database
// in a temporary folder; it stops with the test.
func StartLocalKMS(t testing.TB) *LocalKMS {
	t.Helper()
	bin := LocalKMSBinary(t)
	k := &LocalKMS{Region: "eu-west-2", Account: "111122223333"}
	ctx, cancel := context.WithCancel(context.Background())
	c := exec.CommandContext(ctx, bin)
	c.Env = append(os.Environ(), "PORT=0", "KMS_REGION="+k.Region, "KMS_ACCOUNT_ID="+k.Account, "KMS_DATA_PATH="+t.TempDir())
	out, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	c.Stderr = &logs
	c.WaitDelay = 2 * time.Second
	if err := c.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); c.Wait() })
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
	}()
	select {
	case l, ok := <-line:
		addr, found := strings.CutPrefix(l, "listening on ")
		if !ok || !found {
			t.Fatalf("local-kms did not start: %q\n%s", l, logs.String())
		}
		k.URL = "http://" + addr
	case <-time.After(30 * time.Second):
		t.Fatalf("local-kms did not say where it listens within 30 s\n%s", logs.String())
	}
	return k
}

var (
	buildOnce sync.Once
	built     string
	buildErr  string
)

// LocalKMSBinary is internal/localkms built (once per test process, kept
// in the user's cache folder by the hash of its go.mod and go.sum), or
// PACT_LOCAL_KMS when set. A build that fails (no module proxy) is Missing.
func LocalKMSBinary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("PACT_LOCAL_KMS"); p != "" {
		return p
	}
	buildOnce.Do(func() { built, buildErr = buildLocalKMS() })
	if buildErr != "" {
		Missing(t, buildErr)
	}
	return built
}

func buildLocalKMS() (string, string) {
	root, err := moduleRoot()
	if err != nil {
		return "", "the go command is needed to build local-kms"
	}
	src := filepath.Join(root, "internal", "localkms")
	h := sha256.New()
	for _, f := range []string{"go.mod", "go.sum", "main.go"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			return "", "internal/localkms is missing: " + err.Error()
		}
		h.Write(b)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	bin := filepath.Join(cache, "pact-test", "localkms-"+hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Stat(bin); err == nil {
		return bin, ""
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o700); err != nil {
		return "", err.Error()
	}
	tmp := fmt.Sprintf("%s.%d.tmp", bin, os.Getpid())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, "go", "build", "-o", tmp, ".")
	c.Dir = src
	c.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false")
	if out, err := c.CombinedOutput(); err != nil {
		os.Remove(tmp)
		return "", fmt.Sprintf("local-kms could not be built from the module proxy (go build in internal/localkms: %v: %s)", err, lastLine(out))
	}
	if err := os.Rename(tmp, bin); err != nil {
		return "", err.Error()
	}
	return bin, ""
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

var (
	pluginMu    sync.Mutex
	pluginBuilt = map[string]string{}
)

// BuildPlugin builds the key plugin cmd/pact-KIND of this module once per
// test process (kept in the user's cache folder by the hash of its
// sources) and returns the path of a folder holding it as pact-KIND,
// ready to be put first on PATH.
func BuildPlugin(t testing.TB, kind string) string {
	t.Helper()
	pluginMu.Lock()
	defer pluginMu.Unlock()
	if dir, ok := pluginBuilt[kind]; ok {
		return dir
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	for _, d := range []string{"signer", "signer/keyplugin", "signer/" + kind, "cmd/pact-" + kind} {
		files, _ := filepath.Glob(filepath.Join(root, d, "*.go"))
		for _, f := range files {
			b, _ := os.ReadFile(f)
			h.Write([]byte(f))
			h.Write(b)
		}
	}
	for _, f := range []string{"go.mod", "go.sum"} {
		b, _ := os.ReadFile(filepath.Join(root, f))
		h.Write(b)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "pact-test", "plugin-"+kind+"-"+hex.EncodeToString(h.Sum(nil))[:16])
	bin := filepath.Join(dir, "pact-"+kind)
	if _, err := os.Stat(bin); err != nil {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		tmp := fmt.Sprintf("%s.%d.tmp", bin, os.Getpid())
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		c := exec.CommandContext(ctx, "go", "build", "-o", tmp, "github.com/pact-cli/pact/cmd/pact-"+kind)
		c.Dir = root
		c.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := c.CombinedOutput(); err != nil {
			os.Remove(tmp)
			t.Fatalf("building pact-%s: %v\n%s", kind, err, out)
		}
		if err := os.Rename(tmp, bin); err != nil {
			t.Fatal(err)
		}
	}
	pluginBuilt[kind] = dir
	return dir
}

// moduleRoot is the folder of pact's go.mod.
func moduleRoot() (string, error) {
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil || len(bytes.TrimSpace(gomod)) == 0 {
		return "", fmt.Errorf("go env GOMOD: %v", err)
	}
	return filepath.Dir(string(bytes.TrimSpace(gomod))), nil
}
