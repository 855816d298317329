package server

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSettings_FlagOverEnvOverFileOverDefault(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "serve.json")
	os.WriteFile(path, []byte(`{"issuer": "https://file.example", "addr": "127.0.0.1:1", "database": "/file.db", "rate_limit": 7, "shutdown_timeout": "5s"}`), 0o600)
	file, err := LoadFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	env, err := FromEnv(func(k string) string {
		return map[string]string{Env.Addr: "127.0.0.1:2", Env.RateLimit: "9"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	flags := Settings{Addr: "127.0.0.1:3"}
	got := flags.Over(env).Over(file).WithDefaults("/default.db")
	want := Settings{Issuer: "https://file.example", Addr: "127.0.0.1:3", Database: "/file.db", RateLimit: 9,
		ShutdownTimeout: Duration(5 * time.Second), Name: DefaultName}
	if got != want {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if d := (Settings{}).WithDefaults("/d.db"); d.Addr != DefaultAddr || d.Database != "/d.db" || d.RateLimit != DefaultRateLimit || time.Duration(d.ShutdownTimeout) != DefaultShutdownTimeout {
		t.Fatalf("defaults %+v", d)
	}
	os.WriteFile(path, []byte(`{"adress": "x"}`), 0o600)
	if _, err := LoadFile(path, false); err == nil || !strings.Contains(err.Error(), "known keys") {
		t.Fatalf("a typo in the config file: %v", err)
	}
	if _, err := LoadFile(filepath.Join(dir, "none.json"), true); err != nil {
		t.Fatalf("an absent optional file: %v", err)
	}
	if _, err := LoadFile(filepath.Join(dir, "none.json"), false); err == nil {
		t.Fatal("an absent --config file was accepted")
	}
	if _, err := FromEnv(func(k string) string { return map[string]string{Env.RateLimit: "lots"}[k] }); err == nil || !strings.Contains(err.Error(), Env.RateLimit) {
		t.Fatalf("a bad %s: %v", Env.RateLimit, err)
	}
}

// TestIssue29_PlainHTTPOnlyOnLoopback: plain HTTP is refused, in one
// sentence, on every address that is not loopback; TLS files allow any.
func TestIssue29_PlainHTTPOnlyOnLoopback(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:8080": true, "[::1]:8080": true, "localhost:8080": true, "127.1.2.3:80": true,
		"0.0.0.0:8080": false, ":8080": false, "192.168.1.5:8080": false, "[::]:8080": false, "pa.example.com:80": false,
	} {
		err := Settings{Addr: addr}.CheckListen()
		if (err == nil) != ok {
			t.Errorf("%s: %v", addr, err)
		}
		if err != nil {
			if !errors.Is(err, ErrPlainHTTP) || strings.Contains(err.Error(), ". ") || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "--tls-cert") {
				t.Errorf("%s: %q is not the one sentence naming the fix", addr, err)
			}
		}
		if err := (Settings{Addr: addr, TLSCert: "c.pem", TLSKey: "k.pem"}).CheckListen(); err != nil {
			t.Errorf("%s with TLS: %v", addr, err)
		}
	}
	if err := (Settings{Addr: "127.0.0.1:1", TLSCert: "c.pem"}).CheckListen(); err == nil {
		t.Fatal("a certificate without its key was accepted")
	}
	if err := (Settings{Addr: "nonsense"}).CheckListen(); err == nil {
		t.Fatal("an address without a port was accepted")
	}
}

func TestParseDatabase(t *testing.T) {
	for in, want := range map[string]string{"/var/lib/pact/serve.db": "/var/lib/pact/serve.db", "sqlite:/x.db": "/x.db", "sqlite:///x.db": "/x.db", "file:rel.db": "rel.db"} {
		d, err := ParseDatabase(in)
		if err != nil || d.Path != want {
			t.Errorf("%s: %+v %v", in, d, err)
		}
	}
	for _, u := range []string{"postgres://pact:hunter2@db.example/pact", "postgresql://db.example/pact?sslmode=verify-full"} {
		if d, err := ParseDatabase(u); err != nil || d.Kind != "postgres" || d.URL != u {
			t.Errorf("%s: %+v %v", u, d, err)
		}
	}
	_, err := ParseDatabase("mysql://pact:hunter2@db.example/pact")
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("an unknown kind of URL: %v (the password must not show)", err)
	}
	// Shown (pact serve's status, messages): never the password, even of
	// a URL that does not parse.
	for _, u := range []string{"postgres://pact:hunter2@db.example/pact", "postgres://pact:hun%zzter2@db.example/pact", "mysql://pact:hunter2@db.example/pact"} {
		if r := RedactDatabase(u); strings.Contains(r, "hunter2") || strings.Contains(r, "hun%zzter2") || !strings.Contains(r, "db.example") {
			t.Errorf("RedactDatabase(%s) = %q", u, r)
		}
	}
}
