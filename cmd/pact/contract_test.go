package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/pact-cli/pact/store"
)

// TestContractScripts runs the stories of testdata/contract against the
// real binary and a demo Provider on 127.0.0.1 (same setup as TestScripts):
// the --json shapes of docs/json.md, --jq, shell completion, the config
// file's precedence, and a --debug session that leaks no secret.
func TestContractScripts(t *testing.T) {
	jsonDoc, err := filepath.Abs("../../docs/json.md")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/contract",
		Setup: func(env *testscript.Env) error {
			env.Setenv("JSON_DOC", jsonDoc)
			return setupScript(env)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"pact-exit": cmdPactExit, "waitfor": cmdWaitFor, "jsonpath": cmdJSONPath,
			"no-secrets-in": cmdNoSecretsIn, "age-grants": cmdAgeGrants, "redacted": cmdRedacted,
			"jsonshape": cmdJSONShape, "sleep": cmdSleep,
		},
		RequireExplicitExec: true,
		Deadline:            time.Now().Add(5 * time.Minute),
	})
}

// no-secrets-in [-also SNAPSHOT]... FILE... fails when any secret stored in
// the file keyring ($PACT_HOME/data/secrets.json), or in an earlier copy of
// it named with -also (secrets since replaced, such as a refreshed access
// token), appears in one of the files. Values shorter than 8 characters are
// not looked for.
func cmdNoSecretsIn(ts *testscript.TestScript, neg bool, args []string) {
	keyrings := []string{filepath.Join(ts.Getenv("PACT_HOME"), "data", "secrets.json")}
	for len(args) >= 2 && args[0] == "-also" {
		keyrings = append(keyrings, args[1])
		args = args[2:]
	}
	if len(args) == 0 {
		ts.Fatalf("usage: no-secrets-in [-also SNAPSHOT]... FILE...")
	}
	secrets := map[string]string{}
	for _, kr := range keyrings {
		var m map[string]string
		if err := json.Unmarshal([]byte(ts.ReadFile(kr)), &m); err != nil || len(m) == 0 {
			ts.Fatalf("no secrets to look for in %s: %v", kr, err)
		}
		for k, v := range m {
			if len(v) >= 8 {
				secrets[v] = k + " (from " + filepath.Base(kr) + ")"
			}
		}
	}
	for _, f := range args {
		text := ts.ReadFile(f)
		for v, name := range secrets {
			if strings.Contains(text, v) {
				ts.Fatalf("%s contains the secret %s", f, name)
			}
		}
	}
	ts.Logf("%d secret values absent from %d files", len(secrets), len(args))
}

// age-grants SECONDS sets every stored grant of the default profile to
// expire SECONDS from now, as if time had passed, so that the next use
// refreshes its token (delegation refreshes within 2 minutes of exp).
func cmdAgeGrants(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: age-grants SECONDS")
	}
	secs, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("usage: age-grants SECONDS")
	}
	dirs := store.Dirs{Config: filepath.Join(ts.Getenv("PACT_HOME"), "config"), Data: filepath.Join(ts.Getenv("PACT_HOME"), "data")}
	db, err := store.Open(context.Background(), dirs.DBPath("default"))
	if err != nil {
		ts.Fatalf("%v", err)
	}
	defer db.Close()
	exp := time.Now().Add(time.Duration(secs) * time.Second).UTC().Format(time.RFC3339)
	if err := db.Exec(context.Background(), `UPDATE grants SET data = json_set(data, '$.expiresAt', ?)`, exp); err != nil {
		ts.Fatalf("%v", err)
	}
	if docs, _ := db.Grants(context.Background()); len(docs) == 0 {
		ts.Fatalf("no grants in %s", db.Path())
	}
}

// redacted FILE NAME... checks that FILE (a --debug trace) shows each
// secret field NAME at least once, as a JSON member ("NAME": "…") or a form
// field (NAME=…), and every time with the value [redacted].
func cmdRedacted(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: redacted FILE NAME...")
	}
	text := ts.ReadFile(args[0])
	for _, name := range args[1:] {
		q := regexp.QuoteMeta(name)
		re := regexp.MustCompile(`"` + q + `"\s*:\s*"([^"]*)"|(?:^|[&\s?])` + q + `=([^&\s]*)`)
		ms := re.FindAllStringSubmatch(text, -1)
		if len(ms) == 0 {
			ts.Fatalf("%s: %s never appears: the trace does not show the exchange that carries it", args[0], name)
		}
		for _, m := range ms {
			if v := m[1] + m[2]; v != "[redacted]" {
				ts.Fatalf("%s: %s shown as %q, not [redacted]", args[0], name, v)
			}
		}
		ts.Logf("%s: %s shown %d times, always redacted", args[0], name, len(ms))
	}
}

// jsonshape NAME FILE checks FILE (a command's --json output) against the
// example documented in docs/json.md under `<!-- shape: NAME -->`: every
// member of the example is present in the output (recursively; an array's
// first element is the model of every element), and every member of the
// output's top-level object (or of each element of a top-level array) is
// documented.
func cmdJSONShape(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: jsonshape NAME FILE")
	}
	example, err := docExample(ts.ReadFile(ts.Getenv("JSON_DOC")), args[0])
	if err != nil {
		ts.Fatalf("docs/json.md: %v", err)
	}
	var got any
	if err := json.Unmarshal([]byte(ts.ReadFile(args[1])), &got); err != nil {
		ts.Fatalf("%s is not JSON: %v", args[1], err)
	}
	if problems := compareShape(args[0], example, got); len(problems) > 0 {
		ts.Fatalf("%s does not match the documented shape %q:\n  %s", args[1], args[0], strings.Join(problems, "\n  "))
	}
}

var shapeMarker = regexp.MustCompile("(?s)<!-- shape: ([a-z-]+) -->\\s*```json\\n(.*?)```")

// docExample returns the JSON example of shape name in the Markdown doc.
func docExample(doc, name string) (any, error) {
	for _, m := range shapeMarker.FindAllStringSubmatch(doc, -1) {
		if m[1] != name {
			continue
		}
		var v any
		if err := json.Unmarshal([]byte(m[2]), &v); err != nil {
			return nil, fmt.Errorf("the example of %q is not JSON: %v", name, err)
		}
		return v, nil
	}
	return nil, fmt.Errorf("no example marked <!-- shape: %s -->", name)
}

// compareShape lists the documented members missing from got, and the
// members of got's top level that are not documented.
func compareShape(path string, want, got any) []string {
	var problems []string
	var walk func(path string, want, got any)
	walk = func(path string, want, got any) {
		switch w := want.(type) {
		case map[string]any:
			g, ok := got.(map[string]any)
			if !ok {
				problems = append(problems, fmt.Sprintf("%s: documented as an object, got %T", path, got))
				return
			}
			for k, wv := range w {
				gv, ok := g[k]
				if !ok {
					problems = append(problems, path+"."+k+": documented, missing")
					continue
				}
				if wv != nil && gv != nil {
					walk(path+"."+k, wv, gv)
				}
			}
		case []any:
			g, ok := got.([]any)
			if !ok {
				problems = append(problems, fmt.Sprintf("%s: documented as an array, got %T", path, got))
				return
			}
			if len(w) > 0 {
				// Only the top level must have elements to check; a nested
				// array may be empty (a receipt with no actions).
				if len(g) == 0 && !strings.ContainsAny(path, ".[") {
					problems = append(problems, path+": empty, so its elements cannot be checked")
				}
				for i, gv := range g {
					walk(fmt.Sprintf("%s[%d]", path, i), w[0], gv)
				}
			}
		}
	}
	walk(path, want, got)
	// Undocumented members at the top level.
	top := func(w, g any) {
		wm, _ := w.(map[string]any)
		gm, _ := g.(map[string]any)
		var extra []string
		for k := range gm {
			if _, ok := wm[k]; !ok && wm != nil {
				extra = append(extra, k)
			}
		}
		sort.Strings(extra)
		for _, k := range extra {
			problems = append(problems, path+"."+k+": printed but not documented")
		}
	}
	if wa, ok := want.([]any); ok {
		if ga, ok := got.([]any); ok && len(wa) > 0 {
			for _, g := range ga {
				top(wa[0], g)
			}
		}
	} else {
		top(want, got)
	}
	return problems
}
