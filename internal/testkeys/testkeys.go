// Package testkeys starts the real key stores pact's tests sign with: a
// SoftHSM2 token in a private SOFTHSM2_CONF and token folder, and
// local-kms (an AWS KMS emulator, through internal/localkms) on
// 127.0.0.1. No fake of either: the tests drive them through crypto11
// and the AWS SDK (the pact-awskms plugin) as pact does.
//
// A missing tool skips the test with a message saying what to install,
// except under CI (CI=true), where it fails: the suite must not pass by
// skipping there. Each function has a form for testing.TB and one that
// returns an error (Start…, Init…) for testscript commands.
package testkeys

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// ErrMissing is what a missing tool's error matches.
var ErrMissing = errors.New("missing")

func missing(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrMissing, fmt.Sprintf(format, a...))
}

// CI reports whether the tests run under CI (CI=true), where a missing
// tool is a failure.
func CI() bool { return os.Getenv("CI") == "true" }

// Check fails t on err; a missing tool skips it instead, except under CI.
func Check(t testing.TB, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if errors.Is(err, ErrMissing) && !CI() {
		t.Skipf("skipped: %v", err)
	}
	if errors.Is(err, ErrMissing) {
		t.Fatalf("%v (CI=true: the key-store tests must run here; .ci/run installs it)", err)
	}
	t.Fatal(err)
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

// SoftHSMModule is the installed SoftHSM2 module, or a missing error.
func SoftHSMModule() (string, error) {
	if _, err := exec.LookPath("softhsm2-util"); err != nil {
		return "", missing("SoftHSM2 is not installed (softhsm2-util not found; Debian: apt-get install softhsm2)")
	}
	for _, m := range ModuleCandidates {
		if _, err := os.Stat(m); err == nil {
			return m, nil
		}
	}
	return "", missing("SoftHSM2's module libsofthsm2.so was not found in %s", strings.Join(ModuleCandidates, ", "))
}

// InitSoftHSM initialises a fresh token labelled label in dir, with its
// own SOFTHSM2_CONF there.
func InitSoftHSM(dir, label string) (*SoftHSM, error) {
	module, err := SoftHSMModule()
	if err != nil {
		return nil, err
	}
	tokens := filepath.Join(dir, "tokens")
	if err := os.MkdirAll(tokens, 0o700); err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, "softhsm2.conf")
	body := "directories.tokendir = " + tokens + "\nobjectstore.backend = file\nlog.level = ERROR\nslots.removable = false\n"
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		return nil, err
	}
	h := &SoftHSM{Module: module, Conf: conf, Token: label, PIN: "1234-test-pin", SOPIN: "5678-test-so", Dir: dir}
	if _, err := h.Run("--init-token", "--free", "--label", label, "--pin", h.PIN, "--so-pin", h.SOPIN); err != nil {
		return nil, err
	}
	return h, nil
}

// NewSoftHSM is InitSoftHSM in a temporary folder of t, with
// SOFTHSM2_CONF set in t's environment (for crypto11 in this process).
func NewSoftHSM(t testing.TB, label string) *SoftHSM {
	t.Helper()
	h, err := InitSoftHSM(t.TempDir(), label)
	Check(t, err)
	t.Setenv("SOFTHSM2_CONF", h.Conf)
	return h
}

// Run runs softhsm2-util with args against this token's configuration.
func (h *SoftHSM) Run(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, "softhsm2-util", args...)
	c.Env = append(os.Environ(), "SOFTHSM2_CONF="+h.Conf)
	out, err := c.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("softhsm2-util %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// Util is Run, failing t on an error.
func (h *SoftHSM) Util(t testing.TB, args ...string) string {
	t.Helper()
	out, err := h.Run(args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// LocalKMS is a running local-kms on 127.0.0.1.
type LocalKMS struct {
	URL     string // http://127.0.0.1:PORT
	Region  string
	Account string
	stop    func()
}

// Stop ends it.
func (k *LocalKMS) Stop() { k.stop() }

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

// StartLocalKMSIn starts local-kms on a free loopback port with its
// database in dataDir. Stop ends it.
func StartLocalKMSIn(dataDir string) (*LocalKMS, error) {
	bin, err := LocalKMSPath()
	if err != nil {
		return nil, err
	}
	k := &LocalKMS{Region: "eu-west-2", Account: "111122223333"}
	ctx, cancel := context.WithCancel(context.Background())
	c := exec.CommandContext(ctx, bin)
	c.Env = append(os.Environ(), "PORT=0", "KMS_REGION="+k.Region, "KMS_ACCOUNT_ID="+k.Account, "KMS_DATA_PATH="+dataDir)
	out, err := c.StdoutPipe()
	if err != nil {
		cancel()
		return nil, err
	}
	var logs bytes.Buffer
	c.Stderr = &logs
	c.WaitDelay = 2 * time.Second
	if err := c.Start(); err != nil {
		cancel()
		return nil, err
	}
	k.stop = func() { cancel(); c.Wait() }
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
			k.stop()
			return nil, fmt.Errorf("local-kms did not start: %q\n%s", l, logs.String())
		}
		k.URL = "http://" + addr
	case <-time.After(30 * time.Second):
		k.stop()
		return nil, fmt.Errorf("local-kms did not say where it listens within 30 s\n%s", logs.String())
	}
	return k, nil
}

// StartLocalKMS is StartLocalKMSIn a temporary folder of t; it stops with
// the test.
func StartLocalKMS(t testing.TB) *LocalKMS {
	t.Helper()
	k, err := StartLocalKMSIn(t.TempDir())
	Check(t, err)
	t.Cleanup(k.Stop)
	return k
}

var (
	buildOnce sync.Once
	built     string
	buildErr  error
)

// LocalKMSPath is internal/localkms built (once per test process, kept in
// the user's cache folder by the hash of its go.mod, go.sum and main.go),
// or PACT_LOCAL_KMS when set. A build that fails (no module proxy) is a
// missing tool.
func LocalKMSPath() (string, error) {
	if p := os.Getenv("PACT_LOCAL_KMS"); p != "" {
		return p, nil
	}
	buildOnce.Do(func() { built, buildErr = buildLocalKMS() })
	return built, buildErr
}

func buildLocalKMS() (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", missing("the go command is needed to build local-kms: %v", err)
	}
	src := filepath.Join(root, "internal", "localkms")
	h := sha256.New()
	for _, f := range []string{"go.mod", "go.sum", "main.go"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			return "", err
		}
		h.Write(b)
	}
	bin := filepath.Join(cacheDir(), "localkms-"+hex.EncodeToString(h.Sum(nil))[:16]+exe)
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := goBuild(src, bin, "."); err != nil {
		return "", missing("local-kms could not be built from the module proxy (go build in internal/localkms): %v", err)
	}
	return bin, nil
}

var (
	pluginMu    sync.Mutex
	pluginBuilt = map[string]string{}
)

// PluginDir builds the key plugin cmd/pact-KIND of this module once per
// test process (kept in the user's cache folder by the hash of its
// sources) and returns the folder holding it as pact-KIND, to put first
// on PATH.
func PluginDir(kind string) (string, error) {
	pluginMu.Lock()
	defer pluginMu.Unlock()
	if dir, ok := pluginBuilt[kind]; ok {
		return dir, nil
	}
	root, err := moduleRoot()
	if err != nil {
		return "", err
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
	dir := filepath.Join(cacheDir(), "plugin-"+kind+"-"+hex.EncodeToString(h.Sum(nil))[:16])
	bin := filepath.Join(dir, "pact-"+kind+exe)
	if _, err := os.Stat(bin); err != nil {
		if err := goBuild(root, bin, "./cmd/pact-"+kind); err != nil {
			return "", fmt.Errorf("building pact-%s: %v", kind, err)
		}
		// Builds of earlier sources are not used again.
		old, _ := filepath.Glob(filepath.Join(cacheDir(), "plugin-"+kind+"-*"))
		for _, o := range old {
			if o != dir {
				os.RemoveAll(o)
			}
		}
	}
	pluginBuilt[kind] = dir
	return dir, nil
}

// BuildPlugin is PluginDir, failing t on an error.
func BuildPlugin(t testing.TB, kind string) string {
	t.Helper()
	dir, err := PluginDir(kind)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// goBuild builds pkg in dir into bin (written whole: built aside, then
// renamed), static.
func goBuild(dir, bin, pkg string) error {
	if err := os.MkdirAll(filepath.Dir(bin), 0o700); err != nil {
		return err
	}
	tmp := fmt.Sprintf("%s.%d.tmp", bin, os.Getpid())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, "go", "build", "-o", tmp, pkg)
	c.Dir = dir
	c.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false")
	if out, err := c.CombinedOutput(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%v: %s", err, lastLine(out))
	}
	return os.Rename(tmp, bin)
}

// exe is the file name extension of programs here (".exe" on Windows, where
// go build -o adds none and os/exec runs only names that have one).
var exe = map[bool]string{true: ".exe"}[runtime.GOOS == "windows"]

func cacheDir() string {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	return filepath.Join(cache, "pact-test")
}

// moduleRoot is the folder of pact's go.mod.
func moduleRoot() (string, error) {
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil || len(bytes.TrimSpace(gomod)) == 0 {
		return "", fmt.Errorf("go env GOMOD: %v", err)
	}
	return filepath.Dir(string(bytes.TrimSpace(gomod))), nil
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}
