package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/pact-cli/pact/discovery"
	"github.com/pact-cli/pact/store"
)

// cut-half FILE truncates FILE to half its size, as a failed copy would.
func cmdCutHalf(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: cut-half FILE")
	}
	path := ts.MkAbs(args[0])
	fi, err := os.Stat(path)
	ts.Check(err)
	if fi.Size() < 2 {
		ts.Fatalf("%s has %d bytes: nothing to cut", path, fi.Size())
	}
	ts.Check(os.Truncate(path, fi.Size()/2))
}

// relabel-bundle FILE CARDURL NAME sets the cardUrl and brandName labels of
// every line of the bundle FILE, as a Brand forging another's name would.
func cmdRelabelBundle(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: relabel-bundle FILE CARDURL NAME")
	}
	path := ts.MkAbs(args[0])
	data, err := os.ReadFile(path)
	ts.Check(err)
	var out []byte
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var m map[string]any
		ts.Check(json.Unmarshal(line, &m))
		m["cardUrl"], m["brandName"] = args[1], args[2]
		b, err := json.Marshal(m)
		ts.Check(err)
		out = append(append(out, b...), '\n')
	}
	ts.Check(os.WriteFile(path, out, 0o600))
}

// runCode runs pact ARGS... without a terminal and returns its exit code
// and output (stdout and stderr).
func (e *pactEnv) runCode(args ...string) (int, string) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := e.command(ctx, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		e.t.Fatalf("pact %s: %v", strings.Join(args, " "), err)
	}
	return cmd.ProcessState.ExitCode(), out.String()
}

// One card state (issue 20): once `pact card` has seen a changed card
// (CARD_CHANGED), `pact send` stops too though it holds the earlier card,
// fresh in its cache, and doctor agrees; nothing reaches the Brand until the
// User accepts a card.
func TestCardChangedSeenOnceStopsEveryCommand(t *testing.T) {
	e, srv := newRoguePTYEnv(t)
	e.run("send", e.brand, "hello") // first contact: the real card, pinned
	runs := srv.AgentRuns()
	code, out := e.runCode("card", e.brand) // a fresh fetch: the rogue card
	if code != 1 || !strings.Contains(out, "changed since you accepted it") {
		t.Fatalf("pact card: exit %d\n%s", code, out)
	}
	code, out = e.runCode("doctor")
	if code != 1 || !strings.Contains(out, "pact sends nothing to it") {
		t.Fatalf("pact doctor after the change was seen: exit %d\n%s", code, out)
	}
	if n := srv.AgentRuns(); n != runs {
		t.Fatalf("the Brand's agent ran %d times after the change was seen", n-runs)
	}
}

// The earlier card, fresh in the cache (max-age 300), no longer sends once a
// changed card was seen by another command; accepting a card lets it go.
func TestCardChangedSeenStopsASendHoldingTheCachedCard(t *testing.T) {
	e := newCLIEnv(t)
	e.run("send", e.brand, "hello") // pinned, and the card cached
	runs := e.srv.AgentRuns()
	// What `pact card` records when it sees a changed card.
	db, err := store.Open(context.Background(), filepath.Join(e.dir, "pact", "data", "profiles", "default", store.DBFileName))
	if err != nil {
		t.Fatal(err)
	}
	cardURL, err := discovery.CardURL(e.brand)
	if err != nil {
		t.Fatal(err)
	}
	pin, _, _ := db.ForUser(store.LocalUser).Pin(context.Background(), cardURL)
	pin.KeyThumbprint = "another-key"
	if err := db.ForUser(store.LocalUser).NoteCardChange(context.Background(), cardURL, pin, []string{"signed by another key"}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	code, out := e.runCode("send", e.brand, "hello again")
	if code != 1 || !strings.Contains(out, "changed since you accepted it") || !strings.Contains(out, "signed by another key") {
		t.Fatalf("pact send holding the cached card: exit %d\n%s", code, out)
	}
	if n := e.srv.AgentRuns(); n != runs {
		t.Fatalf("the Brand's agent ran %d times after the change was seen", n-runs)
	}
	e.run("card", e.brand, "--trust") // the card as it is (the one accepted before)
	e.run("send", e.brand, "hello again")
}
