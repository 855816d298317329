package opener

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// script writes an executable shell script that records its arguments (one
// per line) in out and prints to both streams.
func script(t *testing.T, body string) (path, out string) {
	t.Helper()
	dir := t.TempDir()
	out = filepath.Join(dir, "args")
	path = filepath.Join(dir, "fake-browser")
	src := "#!/bin/sh\nfor a in \"$@\"; do echo \"$a\" >> '" + out + "'; done\necho to-stdout\necho to-stderr >&2\n" + body
	if err := os.WriteFile(path, []byte(src), 0o700); err != nil {
		t.Fatal(err)
	}
	return path, out
}

func TestPACTBrowserWinsAndGetsURLLast(t *testing.T) {
	pact, pactOut := script(t, "")
	other, otherOut := script(t, "")
	t.Setenv("PACT_BROWSER", pact+" --new-window  -x")
	t.Setenv("BROWSER", other)
	var stderr bytes.Buffer
	const link = "https://brand.example/login?user_code=WDJB-MJHT&return_to=%2Fx"
	if err := Open(link, &stderr); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(pactOut)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(got)), "\n")
	if len(lines) != 3 || lines[0] != "--new-window" || lines[1] != "-x" || lines[2] != link {
		t.Errorf("args = %q", lines)
	}
	if _, err := os.Stat(otherOut); err == nil {
		t.Error("BROWSER ran although PACT_BROWSER was set")
	}
	if s := stderr.String(); !strings.Contains(s, "to-stdout") || !strings.Contains(s, "to-stderr") {
		t.Errorf("program output should go to stderr, got %q", s)
	}
}

func TestBROWSERUsedWhenPACTBrowserUnset(t *testing.T) {
	b, out := script(t, "")
	t.Setenv("PACT_BROWSER", "")
	t.Setenv("BROWSER", b)
	if err := Open("http://127.0.0.1:8080/x", nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(out); strings.TrimSpace(string(got)) != "http://127.0.0.1:8080/x" {
		t.Errorf("args = %q", got)
	}
}

func TestFailingBrowserIsReported(t *testing.T) {
	b, _ := script(t, "exit 3\n")
	t.Setenv("PACT_BROWSER", b)
	err := Open("https://brand.example/login", nil)
	if err == nil || !strings.Contains(err.Error(), "status 3") {
		t.Fatalf("err = %v", err)
	}
}

func TestRefusesNonHTTPURLs(t *testing.T) {
	b, out := script(t, "")
	t.Setenv("PACT_BROWSER", b)
	for _, u := range []string{"--help", "file:///etc/passwd", "javascript:alert(1)", "/relative"} {
		if err := Open(u, nil); err == nil {
			t.Errorf("%q was opened", u)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("the browser ran for a refused URL")
	}
}
