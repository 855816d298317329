// Package e2e runs the real pact binary against hostile and flaky Providers
// on 127.0.0.1: the CLI contract's exit codes and --json error shape, the
// hardened HTTP rules (caps, timeouts, redirects), §4.3 idempotent retries,
// and durability of the local store under concurrency and SIGKILL.
//
// The binary is built once in TestMain. Every server is an httptest server
// or the demo Provider on loopback; every command runs under a deadline.
package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pact-cli/pact/internal/testrun"
	"github.com/pact-cli/pact/store"
)

// pactBin is the binary under test, built by TestMain.
var pactBin string

// atExit runs after the last test: what a fixture started once for the
// package (the replica set) is stopped there.
var atExit []func()

// binName is the file name go build -o should write for a program called
// name on goos: with ".exe" on Windows, where `go build -o` adds no
// extension and os/exec only starts a path that has one (it tries the
// PATHEXT extensions, never the bare name).
func binName(goos, name string) string {
	if goos == "windows" {
		return name + ".exe"
	}
	return name
}

func TestMain(m *testing.M) {
	testrun.RaiseParallel()
	flag.Parse()
	dir, err := os.MkdirTemp("", "pact-e2e-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	pactBin = filepath.Join(dir, binName(runtime.GOOS, "pact"))
	if willRun("TestDurability_SIGKILLMidWrite") && !testing.Short() {
		go hookBin() // linked while the binary below is
	}
	build := exec.Command("go", "build", "-o", pactBin, "github.com/pact-cli/pact/cmd/pact")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building pact:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	for _, f := range atExit {
		f()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// willRun reports whether -test.run (as parsed) selects the top-level test
// name: no filter, or a filter whose first part matches it.
func willRun(name string) bool {
	f := flag.Lookup("test.run")
	if f == nil || f.Value.String() == "" {
		return true
	}
	first, _, _ := strings.Cut(f.Value.String(), "/")
	ok, err := regexp.MatchString(first, name)
	return ok || err != nil
}

// result is one finished pact process.
type result struct {
	stdout, stderr string
	code           int
	elapsed        time.Duration
}

// env is one isolated pact profile (PACT_HOME, file keyring).
type env struct {
	t     *testing.T
	home  string
	extra []string // more environment, e.g. SSL_CERT_FILE
}

// newEnv creates a PACT_HOME and runs `pact init` with issuer.
func newEnv(t *testing.T, issuer string) *env {
	t.Helper()
	e := &env{t: t, home: t.TempDir()}
	e.must("init", "--issuer", issuer, "--json")
	return e
}

func (e *env) cmd(ctx context.Context, args ...string) *exec.Cmd {
	c := exec.CommandContext(ctx, pactBin, args...)
	c.Env = append(os.Environ(), "PACT_HOME="+e.home, "PACT_KEYRING=file", "NO_COLOR=1", "PACT_DEBUG=", "BROWSER=true", "PACT_BROWSER=true")
	c.Env = append(c.Env, e.extra...)
	c.WaitDelay = time.Second
	return c
}

// run runs pact with a 60 s ceiling (tests pass tighter ones with runCtx).
func (e *env) run(args ...string) result {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return e.runCtx(ctx, args...)
}

func (e *env) runCtx(ctx context.Context, args ...string) result {
	e.t.Helper()
	c := e.cmd(ctx, args...)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	start := time.Now()
	err := c.Run()
	r := result{stdout: out.String(), stderr: errb.String(), elapsed: time.Since(start)}
	if ctx.Err() != nil {
		e.t.Fatalf("pact %s did not finish within its deadline (%s)\nstderr: %s", strings.Join(args, " "), r.elapsed.Round(time.Millisecond), r.stderr)
	}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatalf("running pact: %v", err)
	}
	if strings.Contains(r.stderr, "goroutine ") || strings.Contains(r.stderr, "panic:") {
		e.t.Fatalf("pact %s panicked:\n%s", strings.Join(args, " "), r.stderr)
	}
	return r
}

func (e *env) must(args ...string) result {
	e.t.Helper()
	r := e.run(args...)
	if r.code != 0 {
		e.t.Fatalf("pact %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r
}

// snapshot hashes every file under PACT_HOME except lock files (flock
// targets, created empty on first use) and the card cache (public
// documents kept while fresh, not state); the profile database is compared
// by what it holds (dbDigest: not its card cache, nor the Brand pins,
// recorded before anything is sent, like known_hosts).
func (e *env) snapshot() map[string][32]byte {
	e.t.Helper()
	m := map[string][32]byte{}
	cache := filepath.Join(e.home, "data", "cache")
	err := filepath.WalkDir(e.home, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && p == cache {
			return filepath.SkipDir
		}
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".lock") {
			return err
		}
		switch filepath.Base(p) {
		case store.DBFileName:
			// The database is compared by what it holds (the card cache
			// left out); an empty one is no state.
			if sum, ok := dbDigest(e.t, p); ok {
				m[strings.TrimPrefix(p, e.home)] = sum
			}
			return nil
		case store.DBFileName + "-wal", store.DBFileName + "-shm", store.HistoryMarker: // the marker says only that pact.db exists
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		m[strings.TrimPrefix(p, e.home)] = sha256.Sum256(b)
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return m
}

func (e *env) assertUnchanged(before map[string][32]byte) {
	e.t.Helper()
	after := e.snapshot()
	for p, h := range after {
		if b, ok := before[p]; !ok {
			e.t.Errorf("state file %s appeared after a failed command", p)
		} else if b != h {
			e.t.Errorf("state file %s changed after a failed command", p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			e.t.Errorf("state file %s vanished after a failed command", p)
		}
	}
}

// jsonError is the CLI contract's --json error document.
type jsonError struct {
	Reason     string `json:"reason"`
	Message    string `json:"message"`
	HTTPStatus int    `json:"httpStatus"`
}

// anyReason accepts any non-empty reason: the CLI contract fixes the
// shape, not the reason of transport failures.
const anyReason = "*"

// wantError asserts exit code, and that stdout is exactly one
// {"error":{"reason","message","httpStatus"}} document with this reason and
// status and a message containing every one of msgParts.
func wantError(t *testing.T, r result, code int, reason string, status int, msgParts ...string) jsonError {
	t.Helper()
	if r.code != code {
		t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, code, r.stdout, r.stderr)
	}
	var doc map[string]json.RawMessage
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("stdout is not a JSON document: %v\n%s", err, r.stdout)
	}
	if dec.More() {
		t.Errorf("stdout holds more than one JSON document:\n%s", r.stdout)
	}
	var inner map[string]json.RawMessage
	if err := json.Unmarshal(doc["error"], &inner); err != nil || len(doc) != 1 {
		t.Fatalf("stdout is not {\"error\": {...}}:\n%s", r.stdout)
	}
	for _, k := range []string{"reason", "message", "httpStatus"} {
		if _, ok := inner[k]; !ok {
			t.Errorf("error document lacks %q:\n%s", k, r.stdout)
		}
	}
	var je jsonError
	if err := json.Unmarshal(doc["error"], &je); err != nil {
		t.Fatalf("error document has wrong types: %v\n%s", err, r.stdout)
	}
	if je.Reason == "" || (reason != anyReason && je.Reason != reason) || je.HTTPStatus != status {
		t.Errorf("error reason %q status %d, want %q %d (message %q)", je.Reason, je.HTTPStatus, reason, status, je.Message)
	}
	for _, p := range msgParts {
		if !strings.Contains(strings.ToLower(je.Message), strings.ToLower(p)) {
			t.Errorf("error message %q does not mention %q", je.Message, p)
		}
	}
	return je
}

// fakeProvider is a hostile Provider: it serves an Agent Card for one
// interface, {URL}/a2a/b1, and answers message:send with Send.
type fakeProvider struct {
	srv   *httptest.Server
	Card  http.HandlerFunc // nil: the default card
	Send  http.HandlerFunc
	sends atomic.Int32
	mux   *http.ServeMux
}

func newFakeProvider(t *testing.T, send http.HandlerFunc) *fakeProvider {
	f := &fakeProvider{Send: send, mux: http.NewServeMux()}
	f.mux.HandleFunc("/.well-known/agent-card.json", func(w http.ResponseWriter, r *http.Request) {
		if f.Card != nil {
			f.Card(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(cardJSON(f.Iface(), nil)))
	})
	f.mux.HandleFunc("/a2a/b1/message:send", func(w http.ResponseWriter, r *http.Request) {
		f.sends.Add(1)
		f.Send(w, r)
	})
	f.srv = httptest.NewServer(f.mux)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeProvider) URL() string   { return f.srv.URL }
func (f *fakeProvider) Iface() string { return f.srv.URL + "/a2a/b1" }

// cardJSON is a valid §2.1 card for iface; extra members are merged at the
// top level.
func cardJSON(iface string, extra map[string]any) string {
	card := map[string]any{
		"name":        "Hostile Co.",
		"description": "A Provider that tries everything",
		"version":     "1.0.0",
		"supportedInterfaces": []any{
			map[string]any{"url": iface, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
		},
		"capabilities":         map[string]any{},
		"securitySchemes":      map[string]any{"paJwt": map[string]any{"httpAuthSecurityScheme": map[string]any{"scheme": "Bearer", "bearerFormat": "JWT"}}},
		"securityRequirements": []any{map[string]any{"schemes": map[string]any{"paJwt": map[string]any{"list": []any{}}}}},
		"defaultInputModes":    []any{"text/plain"},
		"defaultOutputModes":   []any{"text/plain"},
		"skills":               []any{},
	}
	for k, v := range extra {
		card[k] = v
	}
	b, _ := json.Marshal(card)
	return string(b)
}

// agentReply is a §4.2 reply message with text.
func agentReply(text string) string {
	b, _ := json.Marshal(map[string]any{"message": map[string]any{
		"messageId": "r-1", "contextId": "ctx-1", "role": "ROLE_AGENT", "parts": []any{map[string]any{"text": text}},
	}})
	return string(b)
}

// hostileEnv is a profile registered with f.
func hostileEnv(t *testing.T, f *fakeProvider) *env {
	e := newEnv(t, "http://127.0.0.1:1")
	e.must("provider", "add", f.URL(), "--audience", "hostile", "--json")
	return e
}

// On Windows the binaries TestMain and hookBin build must end in ".exe":
// exec.Command("…\\pact") there fails with "file does not exist" for a file
// named pact, so every test of the windows-latest CI job would fail.
func TestBinName_WindowsBinariesEndInExe(t *testing.T) {
	for _, c := range []struct{ goos, want string }{{"windows", "pact.exe"}, {"linux", "pact"}, {"darwin", "pact"}} {
		if got := binName(c.goos, "pact"); got != c.want {
			t.Errorf("binName(%q, pact) = %q, want %q", c.goos, got, c.want)
		}
	}
	if got := filepath.Base(pactBin); got != binName(runtime.GOOS, "pact") {
		t.Errorf("TestMain built %q, want %q on %s", got, binName(runtime.GOOS, "pact"), runtime.GOOS)
	}
}
