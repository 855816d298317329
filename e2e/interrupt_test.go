package e2e

import (
	"bytes"
	"context"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pact-cli/pact/demoprovider"
)

// TestInterrupt_LoginCancelledCleanly interrupts `pact login` while it waits
// for the User (the "browser" never answers): pact says so, exits 130, and
// nothing stored changes.
func TestInterrupt_LoginCancelledCleanly(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("Windows has no SIGINT to send to another process (Ctrl+C there is a console event)")
	}
	d := newDemoEnv(t, demoprovider.Config{PollInterval: time.Second}, nil)
	before := d.snapshot()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := d.cmd(ctx, "login", d.brand.SiteURL, "--scope", "orders:read")
	var out, errb syncBuffer
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until pact shows the code and waits for approval.
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(errb.String(), "Waiting for approval") {
		if time.Now().After(deadline) {
			c.Process.Kill()
			t.Fatalf("pact login never started waiting:\n%s", errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.Process.Signal(syscall.SIGINT)
	err := c.Wait()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 130 {
		t.Fatalf("exit = %v, want 130\nstderr: %s", err, errb.String())
	}
	if !strings.Contains(errb.String(), "cancelled") {
		t.Errorf("stderr does not say the login was cancelled:\n%s", errb.String())
	}
	d.assertUnchanged(before)
}

// syncBuffer is a bytes.Buffer safe to read while a process writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
