package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestExitStories runs testdata/exits: every exit code of every command
// (CLI contract "Exit codes"), as a user meets them.
func TestExitStories(t *testing.T) {
	t.Parallel()
	testscript.Run(t, testscript.Params{
		Dir:   "testdata/exits",
		Setup: setupScript,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"pact-exit": cmdPactExit, "waitfor": cmdWaitFor, "jsonpath": cmdJSONPath, "sleep": cmdSleep,
			"pact-interrupt": cmdPactInterrupt,
		},
		RequireExplicitExec: true,
		Deadline:            time.Now().Add(5 * time.Minute),
	})
}

// lockedBuffer is a bytes.Buffer safe to read while a process writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// pact-interrupt [-sig HUP|QUIT|TERM] TEXT ARGS... starts pact, waits (at
// most 10 s) until its stderr shows TEXT, sends it SIGINT as Ctrl+C would
// (or the -sig signal), and checks that it exits 130 (CLI contract: an
// interrupt), or 128 + the -sig signal (HUP 129, QUIT 131, TERM 143).
// stdout and stderr are kept for the following assertions.
func cmdPactInterrupt(ts *testscript.TestScript, neg bool, args []string) {
	sig, want := syscall.SIGINT, exitCancelled
	if len(args) > 1 && args[0] == "-sig" {
		sigs := map[string]syscall.Signal{"HUP": syscall.SIGHUP, "QUIT": syscall.SIGQUIT, "TERM": syscall.SIGTERM}
		s, ok := sigs[args[1]]
		if !ok {
			ts.Fatalf("pact-interrupt: unknown signal %q", args[1])
		}
		sig, want, args = s, 128+int(s), args[2:]
	}
	if neg || len(args) < 2 {
		ts.Fatalf("usage: pact-interrupt [-sig HUP|QUIT|TERM] TEXT ARGS...")
	}
	cmd := exec.Command(os.Args[0], args[1:]...)
	cmd.Args[0] = "pact"
	cmd.Dir = ts.Getenv("WORK")
	cmd.Env = append(os.Environ(), "PACT_HOME="+ts.Getenv("PACT_HOME"), "PACT_KEYRING=file", "NO_COLOR=1")
	for _, k := range []string{"PACT_BROWSER", "BROWSER", "PACT_DEBUG", "PACT_PROFILE", "PERSON_APPROVE", "PERSON_USER", "PATH"} {
		cmd.Env = append(cmd.Env, k+"="+ts.Getenv(k))
	}
	var out, errb lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		ts.Fatalf("starting pact: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(errb.String(), args[0]) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			ts.Fatalf("pact %s never printed %q on stderr:\n%s", strings.Join(args[1:], " "), args[0], errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(sig)
	err := cmd.Wait()
	got := 0
	if ee, ok := err.(*exec.ExitError); ok {
		got = ee.ExitCode()
	} else if err != nil {
		ts.Fatalf("waiting for pact: %v", err)
	}
	ts.Stdout().Write([]byte(out.String()))
	ts.Stderr().Write([]byte(errb.String()))
	if got != want {
		ts.Fatalf("pact %s interrupted by %v: exit code %d, want %d\nstderr:\n%s", strings.Join(args[1:], " "), sig, got, want, errb.String())
	}
}
