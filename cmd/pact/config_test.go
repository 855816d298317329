package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pact-cli/pact/iostreams"
)

// resolveWith runs the root command's resolve step for args, with the
// environment env and the config file content cfg ("" = no file), and
// returns the app.
func resolveWith(t *testing.T, cfg string, env map[string]string, args ...string) (*app, error) {
	t.Helper()
	home := t.TempDir()
	for _, k := range []string{"PACT_PROFILE", "PACT_DEBUG", "PACT_NO_BROWSER", "PACT_KEYRING", "PACT_BROWSER", "BROWSER", "NO_COLOR"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	t.Setenv("PACT_HOME", home)
	for k, v := range env {
		t.Setenv(k, v)
	}
	if cfg != "" {
		if err := os.MkdirAll(filepath.Join(home, "config"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, "config", "config.json"), []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	io, _, _, _ := iostreams.Test()
	a := &app{io: io}
	root := newRootCmd(a)
	cmd, rest, err := root.Find(append([]string{"version"}, args...))
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.ParseFlags(rest); err != nil {
		t.Fatal(err)
	}
	return a, a.resolve(cmd)
}

func TestResolve_Precedence(t *testing.T) {
	cases := []struct {
		name      string
		cfg       string
		env       map[string]string
		args      []string
		profile   string
		debug     bool
		noBrowser bool
		keyring   string
	}{
		{name: "defaults", profile: "default"},
		{name: "config", cfg: `{"profile":"c","debug":true,"no_browser":true,"keyring":"file"}`,
			profile: "c", debug: true, noBrowser: true, keyring: "file"},
		{name: "env beats config", cfg: `{"profile":"c","debug":true,"no_browser":true,"keyring":"file"}`,
			env:     map[string]string{"PACT_PROFILE": "e", "PACT_DEBUG": "0", "PACT_NO_BROWSER": "0", "PACT_KEYRING": "os"},
			profile: "e", keyring: "os"},
		{name: "flag beats env", cfg: `{"profile":"c"}`,
			env:  map[string]string{"PACT_PROFILE": "e", "PACT_DEBUG": "0", "PACT_NO_BROWSER": "1"},
			args: []string{"--profile", "f", "--debug", "--no-browser=false"}, profile: "f", debug: true},
		{name: "empty env is unset", cfg: `{"profile":"c","debug":true}`,
			env: map[string]string{"PACT_PROFILE": "", "PACT_DEBUG": ""}, profile: "c", debug: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, err := resolveWith(t, c.cfg, c.env, c.args...)
			if err != nil {
				t.Fatal(err)
			}
			if a.profile != c.profile || a.debug != c.debug || a.noBrows != c.noBrowser || a.set.keyring != c.keyring {
				t.Errorf("got profile=%q debug=%v no-browser=%v keyring=%q, want %q %v %v %q",
					a.profile, a.debug, a.noBrows, a.set.keyring, c.profile, c.debug, c.noBrowser, c.keyring)
			}
		})
	}
}

func TestResolve_BrowserAndColourFillTheEnvironment(t *testing.T) {
	_, err := resolveWith(t, `{"browser":"my-browser --new-window","no_color":true}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := os.Getenv("PACT_BROWSER"); got != "my-browser --new-window" {
		t.Errorf("PACT_BROWSER = %q", got)
	}
	if _, set := os.LookupEnv("NO_COLOR"); !set {
		t.Error("no_color did not set NO_COLOR")
	}
	// BROWSER in the environment wins over the config file.
	_, err = resolveWith(t, `{"browser":"cfg-browser"}`, map[string]string{"BROWSER": "env-browser"})
	if err != nil {
		t.Fatal(err)
	}
	if got := os.Getenv("PACT_BROWSER"); got != "" {
		t.Errorf("PACT_BROWSER = %q, want unset (BROWSER is set)", got)
	}
}

func TestResolve_BadInput(t *testing.T) {
	for name, c := range map[string]struct {
		cfg string
		env map[string]string
	}{
		"unknown key":    {cfg: `{"colour": "never"}`},
		"not JSON":       {cfg: `{"profile":`},
		"wrong type":     {cfg: `{"debug": "yes"}`},
		"bad PACT_DEBUG": {env: map[string]string{"PACT_DEBUG": "sometimes"}},
		"bad no_browser": {env: map[string]string{"PACT_NO_BROWSER": "maybe"}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := resolveWith(t, c.cfg, c.env)
			if code, _, _ := classify(err); err == nil || code != exitUsage {
				t.Fatalf("err = %v (exit %d), want a usage error", err, code)
			}
		})
	}
}

func TestResolveJQ(t *testing.T) {
	a, err := resolveWith(t, "", nil, "--jq", ".kid")
	if err != nil || a.jq == nil || !a.json {
		t.Fatalf("--jq .kid: jq=%v json=%v err=%v", a.jq != nil, a.json, err)
	}
	_, err = resolveWith(t, "", nil, "--jq", ".[")
	if code, _, _ := classify(err); code != exitUsage {
		t.Fatalf("--jq '.[': err = %v (exit %d), want a usage error", err, code)
	}
	_, err = resolveWith(t, "", nil, "--jq", "undefined_function(1)")
	if code, _, _ := classify(err); code != exitUsage {
		t.Fatalf("--jq with an undefined function: err = %v (exit %d), want a usage error", err, code)
	}
}

func TestWriteJQ(t *testing.T) {
	a, err := resolveWith(t, "", nil, "--jq", ".a, .b, .n, .s[]")
	if err != nil {
		t.Fatal(err)
	}
	io, _, out, _ := iostreams.Test()
	a.io = io
	v := map[string]any{"a": "raw text", "b": map[string]any{"x": 1}, "n": uint64(1) << 60, "s": []string{"p", "q"}}
	if err := a.printJSON(v); err != nil {
		t.Fatal(err)
	}
	want := "raw text\n{\"x\":1}\n1152921504606846976\np\nq\n"
	if out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}

// TestCompareShape: the docs/json.md check reports missing members,
// undocumented members at any depth (but inside open paths), scalar type
// mismatches and empty top-level arrays.
func TestCompareShape(t *testing.T) {
	doc := "<!-- shape: x open: b.raw -->\n```json\n[{\"a\": 1, \"s\": \"t\", \"f\": true, \"n\": null, \"b\": {\"c\": [{\"d\": 1}], \"raw\": {\"k\": 1}}}]\n```\n"
	ex, err := docExample(doc, "x")
	if err != nil {
		t.Fatal(err)
	}
	if len(ex.open) != 1 || ex.open[0] != "b.raw" {
		t.Fatalf("open paths %q", ex.open)
	}
	if _, err := docExample(doc, "y"); err == nil {
		t.Error("an undocumented shape was found")
	}
	for _, c := range []struct {
		got  string
		want int
	}{
		{`[{"a": 2, "s": "u", "f": false, "n": 5, "b": {"c": [{"d": 3}], "raw": {"k": 2}}}]`, 0},
		{`[{"a": 2, "s": "u", "f": false, "n": "x", "b": {"c": [], "raw": {"k": 2}}}]`, 0},
		// Members as received: extra ones inside the open path are fine.
		{`[{"a": 2, "s": "u", "f": false, "n": {}, "b": {"c": [], "raw": {"k": 2, "z": {"y": 1}}}}]`, 0},
		// A value documented may be null.
		{`[{"a": null, "s": null, "f": null, "n": null, "b": null}]`, 0},
		// Nested: missing d and undocumented e.
		{`[{"a": 2, "s": "u", "f": false, "n": 1, "b": {"c": [{"e": 3}], "raw": {"k": 2}}}]`, 2},
		// Undocumented at the top and one level down.
		{`[{"a": 2, "s": "u", "f": false, "n": 1, "b": {"c": [], "raw": {"k": 2}, "x": 1}, "z": 1}]`, 2},
		// Scalar types: a number as a string, a boolean as a number, a
		// string as a boolean, a number inside an open object.
		{`[{"a": "2", "s": "u", "f": 1, "n": 1, "b": {"c": [{"d": "3"}], "raw": {"k": "2"}}}]`, 4},
		{`[{"a": 2, "s": true, "f": false, "n": 1, "b": {"c": [], "raw": {"k": 2}}}]`, 1},
		{`[{"a": 2, "s": "u", "f": false, "n": 1, "b": "str"}]`, 1},
		{`[]`, 1},
		{`{"a": 1}`, 1},
	} {
		var got any
		if err := json.Unmarshal([]byte(c.got), &got); err != nil {
			t.Fatal(err)
		}
		if p := compareShape(ex.value, got, ex.open); len(p) != c.want {
			t.Errorf("%s: %d problems %q, want %d", c.got, len(p), p, c.want)
		}
	}
}

// Trust finding 3: a raw string from --jq is remote text. On a terminal it
// passes through iostreams.Sanitize (OSC title, OSC 52, the C1 CSI and a
// bidi override are shown, not executed); piped, it stays exact.
func TestWriteJQ_RawStringsSanitisedOnATerminal(t *testing.T) {
	evil := "Evil\x1b]0;pwned\x07 \x1b]52;c;ZXZpbA==\x07 \u009b31m \u202eesrever"
	for _, tty := range []bool{true, false} {
		a, err := resolveWith(t, "", nil, "--jq", ".brandName")
		if err != nil {
			t.Fatal(err)
		}
		io, _, out, _ := iostreams.Test()
		io.SetTTY(false, tty, false)
		a.io = io
		if err := a.printJSON(map[string]any{"brandName": evil}); err != nil {
			t.Fatal(err)
		}
		want := evil + "\n"
		if tty {
			want = iostreams.Sanitize(evil) + "\n"
			if strings.ContainsAny(out.String(), "\x1b\x07\u009b\u202e") {
				t.Errorf("a control reached the terminal: %q", out.String())
			}
		}
		if out.String() != want {
			t.Errorf("tty=%v: got %q, want %q", tty, out.String(), want)
		}
	}
}

// Issue 28: the database is taken from --database, then PACT_DATABASE_URL,
// then the config file's "database" (default: the profile's SQLite file);
// a value that is no PostgreSQL URL is a usage error naming its source,
// never its password.
func TestIssue28_DatabaseSettingPrecedence(t *testing.T) {
	const f, e, c = "postgres://f@db/pact", "postgres://e@db/pact", "postgresql://c@db/pact"
	for _, tc := range []struct {
		name string
		cfg  string
		env  string
		args []string
		want string
	}{
		{name: "default", want: ""},
		{name: "config", cfg: `{"database":"` + c + `"}`, want: c},
		{name: "env beats config", cfg: `{"database":"` + c + `"}`, env: e, want: e},
		{name: "flag beats env", cfg: `{"database":"` + c + `"}`, env: e, args: []string{"--database", f}, want: f},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := resolveWith(t, tc.cfg, map[string]string{"PACT_DATABASE_URL": tc.env}, tc.args...)
			if err != nil || a.set.database != tc.want {
				t.Fatalf("database %q, %v; want %q", a.set.database, err, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		cfg, env string
		args     []string
		source   string
	}{
		{args: []string{"--database", "mysql://u:s3cret@db/pact"}, source: "--database"},
		{env: "file:/tmp/pact.db", source: "PACT_DATABASE_URL"},
		{cfg: `{"database":"sqlite://u:s3cret@x"}`, source: `the config file's "database"`},
	} {
		_, err := resolveWith(t, tc.cfg, map[string]string{"PACT_DATABASE_URL": tc.env}, tc.args...)
		var ue usageError
		if !errors.As(err, &ue) || !strings.HasPrefix(err.Error(), tc.source+": ") || !strings.Contains(err.Error(), "is not a PostgreSQL URL") || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: %v", tc.source, err)
		}
	}
}
