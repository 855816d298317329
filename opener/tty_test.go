//go:build linux

package opener

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// TestMain runs the pty helper when this binary is re-executed as one.
func TestMain(m *testing.M) {
	if os.Getenv("OPENER_TTY_HELPER") == "1" {
		ttyHelper()
		return
	}
	os.Exit(m.Run())
}

// ttyHelper plays pact in a terminal: it starts the opener (PACT_BROWSER),
// waits for it, then reads the line the User types and keeps it in
// $OUT/helper-got.
func ttyHelper() {
	out := os.Getenv("OUT")
	p, err := Start("https://brand.example/login?user_code=ABCD-EFGH", os.Stderr)
	if err != nil {
		fmt.Println("start failed:", err)
		os.Exit(1)
	}
	select {
	case <-p.Done():
	case <-time.After(15 * time.Second): // a loaded machine may take seconds to run it
	}
	fmt.Println("ready")
	line, _ := bufio.NewReader(os.Stdin).ReadString('\n')
	os.WriteFile(filepath.Join(out, "helper-got"), []byte(strings.TrimSpace(line)), 0o600)
	os.Exit(0)
}

// A PACT_BROWSER program that reads the terminal cannot take the User's
// keystrokes: it has no controlling terminal (its own session) and its
// stdin is /dev/null. The line typed reaches pact.
func TestOpenerCannotStealKeystrokes(t *testing.T) {
	out := t.TempDir()
	browser := filepath.Join(out, "tty-browser")
	src := "#!/bin/sh\n" +
		"if ( : </dev/tty ) 2>/dev/null; then echo has-tty > '" + out + "/tty'; read -r l </dev/tty; echo \"$l\" > '" + out + "/stolen'\n" +
		"else echo no-tty > '" + out + "/tty'; fi\n" +
		"read -r l; echo \"stdin:$l\" > '" + out + "/stdin'\n"
	if err := os.WriteFile(browser, []byte(src), 0o700); err != nil {
		t.Fatal(err)
	}
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal available: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "OPENER_TTY_HELPER=1", "OUT="+out, "PACT_BROWSER="+browser, "BROWSER=")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &unix.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var (
		mu     sync.Mutex
		screen bytes.Buffer
	)
	go func() {
		buf := make([]byte, 1024)
		for {
			n, err := ptmx.Read(buf)
			mu.Lock()
			screen.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	deadline := time.Now().Add(30 * time.Second) // the helper waits up to 15 s for the opener
	for {
		mu.Lock()
		s := screen.String()
		mu.Unlock()
		if strings.Contains(s, "ready") {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the helper did not get ready; terminal:\n%s", s)
		}
		time.Sleep(20 * time.Millisecond)
	}
	ptmx.Write([]byte("my secret keystrokes\n"))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the helper never got the typed line")
	}
	if got, _ := os.ReadFile(filepath.Join(out, "tty")); strings.TrimSpace(string(got)) != "no-tty" {
		t.Errorf("the opener could open the terminal (%q)", got)
	}
	if got, err := os.ReadFile(filepath.Join(out, "stolen")); err == nil {
		t.Errorf("the opener read %q from the terminal", got)
	}
	if got, _ := os.ReadFile(filepath.Join(out, "stdin")); strings.TrimSpace(string(got)) != "stdin:" {
		t.Errorf("the opener read %q from stdin", got)
	}
	if got, _ := os.ReadFile(filepath.Join(out, "helper-got")); string(got) != "my secret keystrokes" {
		t.Errorf("pact got %q, want the typed line", got)
	}
}
