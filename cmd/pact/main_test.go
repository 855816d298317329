package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/pact-cli/pact/demoprovider"
	"github.com/pact-cli/pact/internal/testrun"
	"github.com/pact-cli/pact/iostreams"
)

// TestMain lets testscript run this test binary as the real `pact` command.
func TestMain(m *testing.M) {
	testrun.RaiseParallel()
	testscript.Main(m, map[string]func(){
		"pact":             func() { os.Exit(run(os.Args[1:], iostreams.System())) },
		"scripted-browser": scriptedBrowser,
		"pact-hsm":         hsmTool, // keys_pkcs11_test.go
	})
}

// TestScripts runs the acceptance tests in testdata/script: one file per
// user story, each against its own demo Provider on 127.0.0.1.
func TestScripts(t *testing.T) {
	t.Parallel()
	testscript.Run(t, testscript.Params{
		Dir:   "testdata/script",
		Setup: setupScript,
		Cmds: withKeyCmds(map[string]func(ts *testscript.TestScript, neg bool, args []string){"pact-exit": cmdPactExit, "waitfor": cmdWaitFor, "jsonpath": cmdJSONPath, "sleep": cmdSleep, "no-secrets": cmdNoSecrets, "revoke-grant": cmdRevokeGrant, "forge-receipt": cmdForgeReceipt, "cut-half": cmdCutHalf, "relabel-bundle": cmdRelabelBundle,
			"pg-database": cmdPGDatabase, "pg-tokens-sealed": cmdPGTokensSealed}),
		RequireExplicitExec: true,
		Condition: func(cond string) (bool, error) {
			if cond == "realkeyring" {
				return os.Getenv("PACT_TEST_REAL_KEYRING") == "1", nil
			}
			if ok, known := keyCondition(cond); known {
				return ok, nil
			}
			if cond == "postgres" {
				return condPostgres()
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Deadline: time.Now().Add(5 * time.Minute),
	})
}

// setupScript gives each script an isolated PACT_HOME, a file keyring, a
// running demo Provider and a free address for `pact jwks serve`:
//
//	$PROVIDER $AUDIENCE $BRAND (Example Co.'s site) $BRAND2 (Other Shop)
//	$CARD (Example Co.'s card URL on the Provider) $JWKS_ADDR $ISSUER
func setupScript(env *testscript.Env) error {
	env.Setenv("PACT_HOME", filepath.Join(env.WorkDir, "home"))
	env.Setenv("PACT_KEYRING", "file")
	env.Setenv("NO_COLOR", "1")
	env.Setenv("PACT_DEBUG", "")
	env.Setenv("PACT_BROWSER", "scripted-browser")
	// For the real-keyring story (PACT_KEYRING=os inside .ci/run's D-Bus session).
	env.Setenv("DBUS_SESSION_BUS_ADDRESS", os.Getenv("DBUS_SESSION_BUS_ADDRESS"))
	cfg := demoprovider.Config{PollInterval: time.Second}
	if _, err := os.Stat(filepath.Join(env.WorkDir, "short-device-code")); err == nil {
		cfg.DeviceCodeTTL = 3 * time.Second
	}
	srv, err := demoprovider.Start(context.Background(), cfg)
	if err != nil {
		return err
	}
	env.Defer(func() { srv.Close() })
	providers.Store(env.WorkDir, srv)
	b := srv.Brands()
	env.Setenv("PROVIDER", srv.URL())
	env.Setenv("AUDIENCE", srv.Audience())
	env.Setenv("BRAND", b[0].SiteURL)
	env.Setenv("BRAND2", b[1].SiteURL)
	env.Setenv("CARD", b[0].CardURL)
	env.Setenv("IFACE", b[0].InterfaceURL)
	// Free addresses (freeAddr): for `pact jwks serve`, for stories that run `pact demo
	// serve` themselves, and a closed port for "Provider stopped" stories.
	addrs := map[string]string{}
	for _, name := range []string{"JWKS_ADDR", "DEMO_ADDR1", "DEMO_ADDR2", "DEAD_ADDR"} {
		addr, err := freeAddr()
		if err != nil {
			return err
		}
		addrs[name] = addr
	}
	env.Setenv("JWKS_ADDR", addrs["JWKS_ADDR"])
	env.Setenv("ISSUER", "http://"+addrs["JWKS_ADDR"])
	env.Setenv("DEMO_ADDR1", addrs["DEMO_ADDR1"])
	env.Setenv("DEMO_ADDR2", addrs["DEMO_ADDR2"])
	env.Setenv("DEAD", "http://"+addrs["DEAD_ADDR"])
	return nil
}

// providers maps a script's $WORK to its demo Provider.
var providers sync.Map

// revoke-grant GRANT_ID revokes a grant at the script's demo Provider, as a
// User would from the Brand's account settings.
func cmdRevokeGrant(ts *testscript.TestScript, neg bool, args []string) {
	v, ok := providers.Load(ts.Getenv("WORK"))
	if !ok || len(args) != 1 {
		ts.Fatalf("usage: revoke-grant GRANT_ID (in a script with a demo Provider)")
	}
	if !v.(*demoprovider.Server).RevokeGrant(args[0]) {
		ts.Fatalf("no grant %s at the Provider", args[0])
	}
}

// pact-exit [-stdin FILE] CODE ARGS... runs pact (its stdin read from
// FILE) and checks its exit code; stdout and stderr are kept for the
// following stdout/stderr assertions.
func cmdPactExit(ts *testscript.TestScript, neg bool, args []string) {
	var stdin string
	if len(args) >= 2 && args[0] == "-stdin" {
		stdin, args = ts.ReadFile(args[1]), args[2:]
	}
	if neg || len(args) < 1 {
		ts.Fatalf("usage: pact-exit [-stdin FILE] CODE [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("bad exit code %q", args[0])
	}
	cmd := exec.Command(os.Args[0], args[1:]...)
	cmd.Dir = ts.Getenv("WORK")
	cmd.Env = append(os.Environ(), "PACT_HOME="+ts.Getenv("PACT_HOME"), "PACT_KEYRING=file", "NO_COLOR=1")
	for _, k := range append([]string{"PACT_BROWSER", "BROWSER", "PACT_DEBUG", "PACT_PROFILE", "PERSON_APPROVE", "PERSON_USER", "PATH", "PACT_DATABASE_URL"}, keyScriptEnv...) {
		cmd.Env = append(cmd.Env, k+"="+ts.Getenv(k))
	}
	if k := ts.Getenv("PACT_KEYRING"); k != "" {
		cmd.Env = append(cmd.Env, "PACT_KEYRING="+k) // a story's `env PACT_KEYRING=…`
	}
	// testscript.Main runs the "pact" entry point when argv[0] is "pact".
	cmd.Args[0] = "pact"
	cmd.Path = os.Args[0]
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	err = cmd.Run()
	got := 0
	if ee, ok := err.(*exec.ExitError); ok {
		got = ee.ExitCode()
	} else if err != nil {
		ts.Fatalf("running pact: %v", err)
	}
	fmt.Fprint(ts.Stdout(), out.String())
	fmt.Fprint(ts.Stderr(), errb.String())
	if got != want {
		ts.Fatalf("pact %s: exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args[1:], " "), got, want, out.String(), errb.String())
	}
}

// waitfor URL polls until URL answers 200 (at most 15 s).
func cmdWaitFor(ts *testscript.TestScript, neg bool, args []string) {
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := http.Get(args[0])
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) {
			ts.Fatalf("%s did not answer 200 within 15s: %v", args[0], err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// jsonpath FILE PATH WANT checks one value of a JSON document: PATH is
// dot-separated keys and indices (e.g. reply.message.role; `\.` is a
// literal dot in a key). WANT "*" only
// requires presence. With "save NAME" instead of WANT... see setvar.
func cmdJSONPath(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 3 {
		ts.Fatalf("usage: jsonpath FILE PATH WANT|'->' VAR")
	}
	data := ts.ReadFile(args[0])
	var v any
	if err := json.Unmarshal([]byte(data), &v); err != nil {
		ts.Fatalf("%s is not JSON: %v\n%s", args[0], err, data)
	}
	cur := v
	for _, k := range strings.Split(strings.ReplaceAll(args[1], `\.`, "\x00"), ".") {
		k = strings.ReplaceAll(k, "\x00", ".")
		switch c := cur.(type) {
		case map[string]any:
			cur = c[k]
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i >= len(c) {
				cur = nil
			} else {
				cur = c[i]
			}
		default:
			cur = nil
		}
	}
	got := ""
	switch c := cur.(type) {
	case nil:
		got = "<missing>"
	case string:
		got = c
	default:
		b, _ := json.Marshal(c)
		got = string(b)
	}
	if args[2] == "->" && len(args) == 4 {
		if cur == nil {
			ts.Fatalf("%s: %s is missing", args[0], args[1])
		}
		ts.Setenv(args[3], got)
		return
	}
	ok := got == args[2] || (args[2] == "*" && cur != nil)
	if ok == neg {
		ts.Fatalf("%s: %s = %s, want %s%s", args[0], args[1], got, map[bool]string{true: "not "}[neg], args[2])
	}
}

// sleep DURATION pauses the script (at most 5 s).
func cmdSleep(ts *testscript.TestScript, neg bool, args []string) {
	d, err := time.ParseDuration(args[0])
	if err != nil || d > 5*time.Second {
		ts.Fatalf("sleep: bad duration %q (at most 5s)", args[0])
	}
	time.Sleep(d)
}

// scriptedBrowser is the PACT_BROWSER of the acceptance tests: a person who
// opens the link, logs in with the Brand and answers the consent page, all
// by HTTP (demoprovider.ScriptedUser). PERSON_APPROVE is "all" (default),
// "deny", "ignore" (never answers) or a comma-separated list of the scopes
// to leave checked.
func scriptedBrowser() {
	link := os.Args[len(os.Args)-1]
	u := demoprovider.ScriptedUser{Username: "jane", Password: "jane-demo-pass"}
	if v := os.Getenv("PERSON_USER"); v != "" {
		u.Username, u.Password = v, v+"-demo-pass"
	}
	switch v := os.Getenv("PERSON_APPROVE"); v {
	case "", "all":
	case "ignore":
		fmt.Fprintln(os.Stderr, "scripted-browser: ignoring", link)
		os.Exit(0)
	case "deny":
		u.Deny = true
	default:
		u.Approve = strings.Split(v, ",")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := u.Visit(ctx, link); err != nil {
		fmt.Fprintln(os.Stderr, "scripted-browser:", err)
		os.Exit(1)
	}
	fmt.Fprintln(os.Stderr, "scripted-browser: answered the consent page")
	os.Exit(0)
}

// no-secrets FILE... fails when any secret stored in the profile's file
// keyring ($PACT_HOME/data/secrets.json) appears in the files.
func cmdNoSecrets(ts *testscript.TestScript, neg bool, args []string) {
	var secrets map[string]string
	data := ts.ReadFile(filepath.Join(ts.Getenv("PACT_HOME"), "data", "secrets.json"))
	if err := json.Unmarshal([]byte(data), &secrets); err != nil || len(secrets) == 0 {
		ts.Fatalf("no secrets to look for: %v", err)
	}
	for _, f := range args {
		text := ts.ReadFile(f)
		for name, v := range secrets {
			if len(v) >= 8 && strings.Contains(text, v) {
				ts.Fatalf("%s contains the secret %s", f, name)
			}
		}
	}
}
