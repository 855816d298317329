//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/pact-cli/pact/internal/testrun"
	"github.com/pact-cli/pact/iostreams"
)

// The CLI (not the full-screen chat) in a real pseudo-terminal: the real
// pact binary (this test binary re-executed as "pact", see TestMain)
// against its own demo Provider on 127.0.0.1.

// cliTerm is pact running in a pseudo-terminal (stdin, stdout and stderr
// all the terminal unless the caller set them).
type cliTerm struct {
	t    *testing.T
	cmd  *exec.Cmd
	ptmx *os.File
	mu   sync.Mutex
	out  bytes.Buffer
	// drained is closed when the reader has seen the end of the terminal's
	// output (every process holding the tty has exited).
	drained chan struct{}
}

func (e *pactEnv) startTerm(setup func(cmd *exec.Cmd, tty *os.File), args ...string) *cliTerm {
	e.t.Helper()
	testrun.Parallel(e.t) // it waits on the terminal far more than it computes
	ptmx, tty, err := pty.Open()
	if err != nil {
		e.t.Skipf("no pseudo-terminal available: %v", err)
	}
	pty.Setsize(ptmx, &pty.Winsize{Rows: 24, Cols: 100})
	cmd := e.command(context.Background(), args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	if setup != nil {
		setup(cmd, tty)
	}
	cmd.SysProcAttr = &unix.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	// Only pact (and what it starts) holds the tty now: when they have
	// exited, reading the pty ends, so exit can wait for every byte.
	tty.Close()
	c := &cliTerm{t: e.t, cmd: cmd, ptmx: ptmx, drained: make(chan struct{})}
	go func() {
		defer close(c.drained)
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			c.mu.Lock()
			c.out.Write(buf[:n])
			c.mu.Unlock()
			// Answer a terminal library's colour and cursor queries, as a
			// terminal would, so none of them stalls the test.
			chunk := string(buf[:n])
			if strings.Contains(chunk, "\x1b]11;?") {
				ptmx.Write([]byte("\x1b]11;rgb:0000/0000/0000\x1b\\"))
			}
			if strings.Contains(chunk, "\x1b[6n") {
				ptmx.Write([]byte("\x1b[1;1R"))
			}
			if err != nil {
				return
			}
		}
	}()
	e.t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
		ptmx.Close()
		tty.Close()
	})
	return c
}

func (c *cliTerm) text() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return ansi.Strip(c.out.String())
}

// waitFor waits (at most 15 s) for want after the first skip bytes of text
// and returns the offset just past it.
func (c *cliTerm) waitFor(want string, skip int) int {
	c.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		txt := c.text()
		if i := strings.Index(txt[min(skip, len(txt)):], want); i >= 0 {
			return skip + i + len(want)
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%q did not appear within 15s; terminal:\n%s", want, txt)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// drain waits (at most 15 s) for want to come through the pty after the
// program exited: its last bytes may still be on their way.
func (c *cliTerm) drain(want string) {
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline) && !strings.Contains(c.text(), want); {
		time.Sleep(10 * time.Millisecond)
	}
}

func (c *cliTerm) typeKeys(s string) {
	c.t.Helper()
	if _, err := c.ptmx.Write([]byte(s)); err != nil {
		c.t.Fatal(err)
	}
}

// exit waits up to limit for pact to end and returns its exit code. The
// terminal's output is read to its end first (at most 5 s more, for a
// browser pact started that still holds the tty), so text() holds all of it.
func (c *cliTerm) exit(limit time.Duration) int {
	c.t.Helper()
	waited := make(chan error, 1)
	go func() { waited <- c.cmd.Wait() }()
	select {
	case err := <-waited:
		select {
		case <-c.drained:
		case <-time.After(5 * time.Second):
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			c.t.Fatal(err)
		}
		return 0
	case <-time.After(limit):
		c.cmd.Process.Kill()
		c.t.Fatalf("pact did not exit within %s; terminal:\n%s", limit, c.text())
		return -1
	}
}

// slowBrowser writes a PACT_BROWSER program that records its pid and
// whether it could open the terminal, then runs tail (e.g. "exec sleep 20").
func slowBrowser(t *testing.T, dir, tail string) string {
	t.Helper()
	path := filepath.Join(dir, "slow-browser")
	src := "#!/bin/sh\necho $$ > '" + dir + "/browser.pid'\n" +
		"if ( : </dev/tty ) 2>/dev/null; then echo has-tty > '" + dir + "/browser.tty'; else echo no-tty > '" + dir + "/browser.tty'; fi\n" + tail + "\n"
	if err := os.WriteFile(path, []byte(src), 0o700); err != nil {
		t.Fatal(err)
	}
	return path
}

func readPid(t *testing.T, dir string) int {
	t.Helper()
	for range 750 { // 15 s: the program starts in the background
		if b, err := os.ReadFile(filepath.Join(dir, "browser.pid")); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				return pid
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the browser program never started")
	return 0
}

// readTTY waits (up to 15 s) for the browser program to say whether it
// could open the terminal: it writes browser.tty after browser.pid, so a
// loaded machine may not have written it yet when the pid is there.
func readTTY(t *testing.T, dir string) string {
	t.Helper()
	for range 750 { // 15 s: the program starts in the background
		if b, err := os.ReadFile(filepath.Join(dir, "browser.tty")); err == nil && strings.HasSuffix(string(b), "\n") {
			return strings.TrimSpace(string(b))
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the browser program never said whether it had the terminal")
	return ""
}

// RFC 8628 §3.3, §3.4 (PACT §5.3): with a PACT_BROWSER that takes 20 s, the
// countdown (and polling) starts at once, Ctrl+C ends the login at once
// (exit 130, long before the browser program ends), and the browser program
// neither had the terminal nor got the Ctrl+C: it runs on, detached.
func TestRFC8628_LoginWithSlowBrowserInPTY(t *testing.T) {
	dir := t.TempDir()
	e := newCLIEnv(t, "PACT_BROWSER="+slowBrowser(t, dir, "exec sleep 20"))
	c := e.startTerm(nil, "login", e.brand, "--scope", "orders:read")
	at := c.waitFor("Code:", 0)
	at = c.waitFor("Opening the link in your browser", at)
	c.waitFor("Waiting for your approval", at)
	pid := readPid(t, dir)
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	c.typeKeys("\x03")
	if code := c.exit(15 * time.Second); code != exitCancelled {
		t.Fatalf("exit code %d after Ctrl+C, want %d; terminal:\n%s", code, exitCancelled, c.text())
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Errorf("the browser program did not survive pact's Ctrl+C (%v): it was not detached", err)
	}
	if got := readTTY(t, dir); got != "no-tty" {
		t.Errorf("the browser program could open the terminal: %q", got)
	}
	if strings.Contains(c.text(), "Opened") {
		t.Errorf("pact claims the link was opened:\n%s", c.text())
	}
}

// A browser program that fails after a while is reported while the
// countdown runs (it was not waited for), with the link to open by hand.
func TestRFC8628_LoginBrowserFailingLaterInPTY(t *testing.T) {
	dir := t.TempDir()
	e := newCLIEnv(t, "PACT_BROWSER="+slowBrowser(t, dir, "sleep 2; exit 7"))
	c := e.startTerm(nil, "login", e.brand, "--scope", "orders:read")
	at := c.waitFor("Waiting for your approval", 0)
	c.waitFor("could not open the browser (slow-browser exited with status 7); open this link: http", at)
	c.typeKeys("\x03")
	if code := c.exit(15 * time.Second); code != exitCancelled {
		t.Fatalf("exit code %d after Ctrl+C, want %d", code, exitCancelled)
	}
}

// On SSH without a display and without PACT_BROWSER/BROWSER, nothing is
// started and nothing is claimed: the link and the code are printed.
func TestLoginHeadlessPrintsOnlyTheLinkInPTY(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	os.Mkdir(bin, 0o700)
	for _, name := range []string{"xdg-open", "x-www-browser", "www-browser"} {
		os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\ntouch '"+dir+"/ran'\n"), 0o700)
	}
	e := newCLIEnv(t)
	e.env = append(e.env, "PACT_BROWSER=", "BROWSER=", "SSH_CONNECTION=192.0.2.1 5000 192.0.2.2 22", "DISPLAY=", "WAYLAND_DISPLAY=",
		"PATH="+bin+":"+os.Getenv("PATH"))
	c := e.startTerm(nil, "login", e.brand, "--scope", "orders:read")
	at := c.waitFor("Link:", 0)
	at = c.waitFor("No browser here", at)
	c.waitFor("Waiting for your approval", at)
	c.typeKeys("\x03")
	if code := c.exit(15 * time.Second); code != exitCancelled {
		t.Fatalf("exit code %d, want %d", code, exitCancelled)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Error("the system opener ran on a headless session")
	}
	if txt := c.text(); strings.Contains(txt, "Opening") || strings.Contains(txt, "Opened") {
		t.Errorf("claims to open the browser:\n%s", txt)
	}
}

// `pact chat BRAND | cat` on a terminal: line mode, with a prompt on the
// terminal (stderr) so the User knows input is expected; replies go to the
// pipe; /new and /quit are handled by pact.
func TestLineModePromptWithStdoutPipedInPTY(t *testing.T) {
	e := newCLIEnv(t)
	outPath := filepath.Join(t.TempDir(), "stdout")
	out, err := os.Create(outPath)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	c := e.startTerm(func(cmd *exec.Cmd, tty *os.File) { cmd.Stdout = out }, "chat", e.brand, "--new")
	at := c.waitFor("/help for commands", 0)
	at = c.waitFor("you›", at)
	c.typeKeys("hello\r")
	at = c.waitFor("you›", at)
	c.typeKeys("/new\r")
	at = c.waitFor("The next message starts a new conversation", at)
	c.waitFor("you›", at)
	c.typeKeys("/quit\r")
	if code := c.exit(15 * time.Second); code != 0 {
		t.Fatalf("exit code %d, want 0; terminal:\n%s", code, c.text())
	}
	got, _ := os.ReadFile(outPath)
	if !strings.Contains(string(got), "order number") || strings.Contains(string(got), "you›") {
		t.Errorf("stdout = %q, want the reply and no prompt", got)
	}
	if strings.Contains(string(got), "/new") || strings.Contains(c.text(), "error:") {
		t.Errorf("a command was sent or failed; stdout %q, terminal:\n%s", got, c.text())
	}
}

// markdownProvider is a Provider on 127.0.0.1 whose agent answers every
// message with the same Markdown text; it checks no PA JWT.
func markdownProvider(t *testing.T, text string) string {
	t.Helper()
	return cannedProvider(t, []any{map[string]any{"text": text}})
}

// cannedProvider is a Provider on 127.0.0.1 whose agent answers every
// message with the same parts (A2A JSON); it checks no PA JWT.
func cannedProvider(t *testing.T, parts []any) string {
	t.Helper()
	mux := http.NewServeMux()
	var base string
	mux.HandleFunc("/.well-known/agent-card.json", func(w http.ResponseWriter, r *http.Request) {
		card := map[string]any{
			"name": "Markdown Co.", "description": "replies in Markdown", "version": "1.0.0",
			"supportedInterfaces":  []any{map[string]any{"url": base + "/a2a/md", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}},
			"capabilities":         map[string]any{},
			"securitySchemes":      map[string]any{"paJwt": map[string]any{"httpAuthSecurityScheme": map[string]any{"scheme": "Bearer", "bearerFormat": "JWT"}}},
			"securityRequirements": []any{map[string]any{"schemes": map[string]any{"paJwt": map[string]any{"list": []any{}}}}},
			"defaultInputModes":    []any{"text/plain"}, "defaultOutputModes": []any{"text/plain"}, "skills": []any{},
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(card)
	})
	mux.HandleFunc("/a2a/md/message:send", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/a2a+json")
		json.NewEncoder(w).Encode(map[string]any{"message": map[string]any{
			"messageId": "r-1", "contextId": "ctx-1", "role": "ROLE_AGENT", "parts": parts}})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	base = srv.URL
	return srv.URL
}

// `pact send` on a colour terminal renders the reply as Markdown; with
// NO_COLOR, or when stdout is a pipe, the text is printed as received.
func TestSendRendersMarkdownOnATerminalInPTY(t *testing.T) {
	const md = "# Your order\n\nIt has **shipped** today.\n\n- headphones\n- charger"
	url := markdownProvider(t, md)
	home := t.TempDir()
	base := []string{"PACT_HOME=" + filepath.Join(home, "pact"), "PACT_KEYRING=file", "PATH=" + os.Getenv("PATH"),
		"HOME=" + home, "TERM=xterm-256color", "LANG=C.UTF-8"}
	e := &pactEnv{t: t, env: append(base, "NO_COLOR=1")}
	e.run("init", "--issuer", "http://127.0.0.1:1")
	e.run("provider", "add", url, "--audience", "md")

	// Colour on: Markdown rendered.
	e.env = base
	c := e.startTerm(nil, "send", url, "hi")
	if code := c.exit(15 * time.Second); code != 0 {
		t.Fatalf("exit %d\n%s", code, c.text())
	}
	c.drain("shipped")
	c.mu.Lock()
	raw := c.out.String()
	c.mu.Unlock()
	txt := c.text()
	if !strings.Contains(raw, "\x1b[") || strings.Contains(txt, "**shipped**") || !strings.Contains(txt, "shipped") || !strings.Contains(txt, "Your order") {
		t.Errorf("the reply was not rendered as Markdown:\n%q", raw)
	}

	// NO_COLOR: plain text, exactly as sent.
	e.env = append(base, "NO_COLOR=1")
	c = e.startTerm(nil, "send", url, "hi")
	if code := c.exit(15 * time.Second); code != 0 {
		t.Fatalf("exit %d\n%s", code, c.text())
	}
	c.drain("charger")
	// On a terminal every line of the Brand's text has pact's gutter (issue
	// 18: no Brand line can pass for one of pact's).
	if txt := strings.ReplaceAll(c.text(), "\r\n", "\n"); !strings.Contains(txt, iostreams.Gutter(md, iostreams.GutterMark)) {
		t.Errorf("NO_COLOR output is not the plain text in the gutter:\n%q", txt)
	}

	// A pipe: plain text.
	out := e.run("send", url, "hi")
	if !strings.Contains(out, md) || strings.Contains(out, "\x1b") {
		t.Errorf("piped output = %q", out)
	}
}

// Ctrl+C in line mode ends the chat at once, also while pact waits for a
// line (exit 130).
func TestLineModeCtrlCWhileWaitingInPTY(t *testing.T) {
	e := newCLIEnv(t)
	out, err := os.Create(filepath.Join(t.TempDir(), "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	c := e.startTerm(func(cmd *exec.Cmd, tty *os.File) { cmd.Stdout = out }, "chat", e.brand, "--new")
	c.waitFor("you›", 0)
	c.typeKeys("\x03")
	if code := c.exit(15 * time.Second); code != exitCancelled {
		t.Fatalf("exit code %d after Ctrl+C, want %d; terminal:\n%s", code, exitCancelled, c.text())
	}
}

// RFC 8628 §3.4: with the system opener (no PACT_BROWSER or BROWSER) being
// an xdg-open that lets the User approve and then stays 20 s, the login
// completes as soon as the User has approved: polling never waits for the
// opener to exit.
func TestRFC8628_LoginCompletesWhileSystemOpenerLingersInPTY(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	os.Mkdir(bin, 0o700)
	xdg := "#!/bin/sh\necho $$ > '" + dir + "/browser.pid'\nscripted-browser \"$1\"\nexec sleep 20\n"
	if err := os.WriteFile(filepath.Join(bin, "xdg-open"), []byte(xdg), 0o700); err != nil {
		t.Fatal(err)
	}
	e := newCLIEnv(t)
	e.env = append(e.env, "PACT_BROWSER=", "BROWSER=", "DISPLAY=:0", "SSH_CONNECTION=", "SSH_TTY=", "PATH="+bin+":"+os.Getenv("PATH"))
	c := e.startTerm(nil, "login", e.brand, "--scope", "orders:read")
	at := c.waitFor("Opening the link in your browser (xdg-open)", 0)
	pid := readPid(t, dir)
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	c.waitFor("granted: orders:read", at)
	if code := c.exit(15 * time.Second); code != 0 {
		t.Fatalf("exit code %d, want 0; terminal:\n%s", code, c.text())
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("the opener had already exited (%v): the test did not exercise a lingering opener", err)
	}
}
