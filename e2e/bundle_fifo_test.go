//go:build linux

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// inSyscall reports whether a thread of process pid is blocked in the
// system call nr (/proc/PID/task/*/syscall).
func inSyscall(pid, nr int) bool {
	tasks, _ := filepath.Glob(filepath.Join("/proc", itoa(pid), "task", "*", "syscall"))
	for _, t := range tasks {
		b, _ := os.ReadFile(t)
		if f := strings.Fields(string(b)); len(f) > 0 && f[0] == itoa(nr) {
			return true
		}
	}
	return false
}

func itoa(n int) string { return strconv.Itoa(n) }

// Issue 31 item 14: `pact receipts import` (and `verify --bundle`) reading
// a FIFO ignored Ctrl+C and TERM: blocked opening it (no writer yet) or
// reading it (a writer that sends nothing more). Both end at the signal,
// exiting 128 + its number.
func TestIssue31_14_BundleFromAFIFOEndsOnASignal(t *testing.T) {
	t.Parallel()
	openat := map[string]int{"amd64": 257, "arm64": 56}[runtime.GOARCH]
	if openat == 0 {
		t.Skipf("no openat number known for %s", runtime.GOARCH)
	}
	e := newEnv(t, "http://127.0.0.1:1")
	for _, tc := range []struct {
		name   string
		args   []string
		writer bool
		sig    syscall.Signal
	}{
		{"import, no writer yet, TERM", []string{"receipts", "import"}, false, syscall.SIGTERM},
		{"verify --bundle, a writer that sends one line, INT", []string{"receipts", "verify", "--bundle"}, true, syscall.SIGINT},
		{"import, a writer that sends one line, TERM", []string{"receipts", "import"}, true, syscall.SIGTERM},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fifo := filepath.Join(t.TempDir(), "bundle.fifo")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			c := e.cmd(ctx, append(tc.args, fifo)...)
			var out, errb syncBuffer
			c.Stdout, c.Stderr = &out, &errb
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(10 * time.Second)
			wait := func(what string, done func() bool) {
				for !done() {
					if time.Now().After(deadline) {
						c.Process.Kill()
						t.Fatalf("pact never %s:\nstdout: %s\nstderr: %s", what, out.String(), errb.String())
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
			if tc.writer {
				var w *os.File
				wait("opened the FIFO", func() bool {
					var err error
					w, err = os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
					return err == nil
				})
				defer w.Close()
				w.WriteString("{}\n")
				wait("reported the first line", func() bool { return strings.Contains(out.String(), "line 1") })
			} else {
				wait("waited to open the FIFO", func() bool { return inSyscall(c.Process.Pid, openat) })
			}
			c.Process.Signal(tc.sig)
			err := c.Wait()
			if ctx.Err() != nil {
				t.Fatalf("pact did not end on %v:\nstderr: %s", tc.sig, errb.String())
			}
			ee, ok := err.(*exec.ExitError)
			if !ok || ee.ExitCode() != 128+int(tc.sig) {
				t.Fatalf("exit %v, want %d\nstderr: %s", err, 128+int(tc.sig), errb.String())
			}
		})
	}
}
