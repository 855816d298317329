package main

import (
	"net"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/secrets"
	"github.com/pact-cli/pact/store"
)

// TestDemoServeHints_UseThisProfilesIssuerAndName: `pact demo serve`
// suggests `pact --profile NAME init` with the profile's own issuer when it
// has one (and export for a public issuer), a loopback issuer otherwise.
func TestDemoServeHints_UseThisProfilesIssuerAndName(t *testing.T) {
	t.Setenv("PACT_HOME", t.TempDir())
	a := &app{profile: "work"}
	hints := strings.Join(a.demoServeHints("http://127.0.0.1:1", "pact-demo", "http://127.0.0.1:2"), "\n")
	if !regexp.MustCompile(`pact --profile work init --issuer http://127\.0\.0\.1:\d+\n`).MatchString(hints) || !strings.Contains(hints, "pact --profile work jwks serve") {
		t.Fatalf("hints for a new profile:\n%s", hints)
	}
	sec, _ := secrets.Open("file", store.DefaultDirs().Data, 0)
	p := &profile.Profile{Name: "work", Dirs: store.DefaultDirs(), Secrets: sec}
	if _, err := p.Init("https://pa.example.com", "", "", false); err != nil {
		t.Fatal(err)
	}
	hints = strings.Join(a.demoServeHints("http://127.0.0.1:1", "pact-demo", "http://127.0.0.1:2"), "\n")
	if !strings.Contains(hints, "pact --profile work init --issuer https://pa.example.com") || !strings.Contains(hints, "pact --profile work jwks export DIR") ||
		!strings.Contains(hints, "pact --profile work provider add http://127.0.0.1:1 --audience pact-demo") {
		t.Fatalf("hints for an initialised profile:\n%s", hints)
	}
}

// TestDemoServeHints_NoOSKeyringSaysExportPACT_KEYRING: with no OS keyring
// answering and no profile yet, the hints start with export
// PACT_KEYRING=file (init would fail without it); with the file keyring
// chosen, they do not.
func TestDemoServeHints_NoOSKeyringSaysExportPACT_KEYRING(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the OS keyring is made unreachable through D-Bus (Linux only)")
	}
	// The D-Bus session connection is cached per process: once another
	// test reached a real Secret Service (CI runs one), this process would
	// keep using it. The check runs in a fresh process of this test binary.
	if os.Getenv("PACT_TEST_HINTS_CHILD") != "1" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestDemoServeHints_NoOSKeyringSaysExportPACT_KEYRING$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), "PACT_TEST_HINTS_CHILD=1", "DBUS_SESSION_BUS_ADDRESS=unix:path=/nonexistent/bus", "PACT_HOME="+t.TempDir())
		if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "--- PASS: TestDemoServeHints_NoOSKeyringSaysExportPACT_KEYRING") {
			t.Fatalf("in a fresh process: %v\n%s", err, out)
		}
		return
	}
	a := &app{profile: "default"}
	hints := a.demoServeHints("http://127.0.0.1:1", "pact-demo", "http://127.0.0.1:2")
	if len(hints) == 0 || !strings.HasPrefix(hints[0], "export PACT_KEYRING=file") {
		t.Fatalf("hints without an OS keyring:\n%s", strings.Join(hints, "\n"))
	}
	a.set.keyringEnv, a.set.keyring = "file", "file"
	hints = a.demoServeHints("http://127.0.0.1:1", "pact-demo", "http://127.0.0.1:2")
	if strings.Contains(strings.Join(hints, "\n"), "PACT_KEYRING") {
		t.Fatalf("hints with PACT_KEYRING=file:\n%s", strings.Join(hints, "\n"))
	}
}

// TestDemoServeHints_IssuerPortIsFree: the suggested loopback issuer is not
// an address something already listens on (`pact demo serve --addr
// 127.0.0.1:8787` would make `pact jwks serve` fail).
func TestDemoServeHints_IssuerPortIsFree(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	taken := l.Addr().String()
	if got := freeLoopback(taken); got == taken || !strings.HasPrefix(got, "127.0.0.1:") {
		t.Fatalf("freeLoopback(%s) = %s, want another loopback address", taken, got)
	}
	if got := freeLoopback("127.0.0.1:0"); strings.HasSuffix(got, ":0") {
		t.Fatalf("freeLoopback gave %s, want a port", got)
	}
}
