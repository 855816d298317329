package main

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pact-cli/pact/demoprovider"
	"github.com/pact-cli/pact/internal/testrun"
)

// The set-up shared by the tests that run the real pact binary (this test binary re-executed
// as "pact", see TestMain) against their own demo Provider on 127.0.0.1: in a pseudo-terminal
// (the CLI, the full-screen chat) or over stdio (pact mcp).

// pactEnv is an isolated profile (PACT_HOME in a temp dir, file keyring) registered with its
// own demo Provider, its JWKS served by `pact jwks serve`.
type pactEnv struct {
	t      *testing.T
	env    []string
	brand  string // the first demo Brand's site
	dir    string // HOME; PACT_HOME is dir/pact
	issuer string // the profile's issuer, where `pact jwks serve` serves its JWKS
	srv    *demoprovider.Server
}

// newPactEnv starts a demo Provider with cfg, and sets up and registers a profile for it;
// extraEnv comes after (and so overrides) the base environment. The test runs in parallel
// with the others (testrun.Parallel).
func newPactEnv(t *testing.T, cfg demoprovider.Config, extraEnv ...string) *pactEnv {
	t.Helper()
	testrun.Parallel(t)
	srv := startDemo(t, cfg)
	addr, err := freeAddr()
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	e := &pactEnv{t: t, srv: srv, brand: srv.Brands()[0].SiteURL, dir: home, issuer: "http://" + addr, env: append([]string{
		"PACT_HOME=" + filepath.Join(home, "pact"), "PACT_KEYRING=file", "PACT_BROWSER=scripted-browser",
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TERM=xterm-256color", "LANG=C.UTF-8",
	}, extraEnv...)}
	e.run("init", "--issuer", e.issuer)
	jw := e.command(context.Background(), "jwks", "serve", "--addr", addr)
	if err := jw.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { jw.Process.Kill(); jw.Wait() })
	// The Provider fetches the keys from there on the first request: wait until it can (a
	// loaded machine may take a while to start the server).
	waitHTTP(t, e.issuer+"/.well-known/jwks.json")
	e.run("provider", "add", srv.URL(), "--audience", srv.Audience())
	return e
}

// newPTYEnv is the profile of the full-screen chat tests.
func newPTYEnv(t *testing.T) *pactEnv {
	t.Helper()
	return newPactEnv(t, demoprovider.Config{PollInterval: time.Second})
}

// newCLIEnv is the profile of the CLI tests: colour off.
func newCLIEnv(t *testing.T, extraEnv ...string) *pactEnv {
	t.Helper()
	return newPactEnv(t, demoprovider.Config{PollInterval: time.Second}, append([]string{"NO_COLOR=1"}, extraEnv...)...)
}

// newRoguePTYEnv is newPTYEnv against a demo Provider whose Brand sites
// serve their real card once, then a card signed by another key.
func newRoguePTYEnv(t *testing.T) (*pactEnv, *demoprovider.Server) {
	t.Helper()
	e := newPactEnv(t, demoprovider.Config{PollInterval: time.Second, RogueCard: true})
	return e, e.srv
}

// command is pact ARGS... in the environment, not yet started.
func (e *pactEnv) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Args[0] = "pact" // testscript.Main runs the pact entry point
	cmd.Env = e.env
	return cmd
}

// run runs pact ARGS... without a terminal and returns its output (stdout and stderr); it
// fails the test unless pact exits 0.
func (e *pactEnv) run(args ...string) string {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := e.command(ctx, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		e.t.Fatalf("pact %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

// output is pact ARGS... run without a terminal; it fails the test unless pact exits 0.
func (e *pactEnv) output(args ...string) []byte {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := e.command(ctx, args...).Output()
	if err != nil {
		e.t.Fatalf("pact %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// restartProvider stops the demo Provider and starts a new one, with nothing stored, on the
// same address (it no longer knows the conversations).
func (e *pactEnv) restartProvider() {
	e.t.Helper()
	addr := strings.TrimPrefix(e.srv.URL(), "http://")
	e.srv.Close()
	e.srv = startDemo(e.t, demoprovider.Config{Addr: addr, PollInterval: time.Second})
}

// startDemo starts a demo Provider with cfg for the rest of the test.
func startDemo(t *testing.T, cfg demoprovider.Config) *demoprovider.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	srv, err := demoprovider.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// freeAddr is a 127.0.0.1 address nothing listens on, for a server a test starts in another
// process (pact jwks serve, pact demo serve) or for an address nothing should answer. It is
// taken below the kernel's ephemeral ports (32768–60999 on Linux, 49152 and up on macOS and
// Windows), where every listener on port 0 and every connection's own port come from: a port
// taken there and let go was, with the tests running side by side, now and then taken by
// another connection or server before pact listened on it (jwks serve could not start, or
// the test's Provider fetched another test's keys). It is never handed out twice in one test
// binary.
func freeAddr() (string, error) {
	freePorts.mu.Lock()
	defer freePorts.mu.Unlock()
	if freePorts.used == nil {
		freePorts.used = map[int]bool{}
	}
	for range 1000 {
		p := 20000 + rand.IntN(12000)
		if freePorts.used[p] {
			continue
		}
		freePorts.used[p] = true
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			continue // another program's
		}
		ln.Close()
		return ln.Addr().String(), nil
	}
	return "", errors.New("no free port on 127.0.0.1 between 20000 and 32000")
}

var freePorts struct {
	mu   sync.Mutex
	used map[int]bool
}
