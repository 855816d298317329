package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
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
	t.Parallel()
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
	if docs, _ := db.ForUser(store.LocalUser).Grants(context.Background()); len(docs) == 0 {
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
// example documented in docs/json.md under `<!-- shape: NAME -->`. FILE may
// hold one JSON document or JSON Lines (each line is checked). See
// compareShape for the rules.
func cmdJSONShape(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: jsonshape NAME FILE")
	}
	ex, err := docExample(ts.ReadFile(ts.Getenv("JSON_DOC")), args[0])
	if err != nil {
		ts.Fatalf("docs/json.md: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(ts.ReadFile(args[1])))
	n := 0
	for {
		var got any
		if err := dec.Decode(&got); err == io.EOF {
			break
		} else if err != nil {
			ts.Fatalf("%s is not JSON: %v", args[1], err)
		}
		n++
		if problems := compareShape(ex.value, got, ex.open); len(problems) > 0 {
			ts.Fatalf("%s (document %d) does not match the documented shape %q:\n  %s", args[1], n, args[0], strings.Join(problems, "\n  "))
		}
	}
	if n == 0 {
		ts.Fatalf("%s is empty", args[1])
	}
}

// shapeMarker finds `<!-- shape: NAME -->` or `<!-- shape: NAME open: P,P -->`
// and the ```json example after it.
var shapeMarker = regexp.MustCompile("(?s)<!-- shape: ([a-z-]+)(?: open: ([^ ]+))? -->\\s*```json\\n(.*?)```")

// example is a documented JSON shape: its value and the paths (see
// shapePath) of objects printed as received from the network, whose
// members are the other side's.
type example struct {
	value any
	open  []string
}

// docExample returns the JSON example of shape name in the Markdown doc.
func docExample(doc, name string) (example, error) {
	for _, m := range shapeMarker.FindAllStringSubmatch(doc, -1) {
		if m[1] != name {
			continue
		}
		var v any
		if err := json.Unmarshal([]byte(m[3]), &v); err != nil {
			return example{}, fmt.Errorf("the example of %q is not JSON: %v", name, err)
		}
		var open []string
		if m[2] != "" {
			open = strings.Split(m[2], ",")
		}
		return example{v, open}, nil
	}
	return example{}, fmt.Errorf("no example marked <!-- shape: %s -->", name)
}

// compareShape lists how got differs from the documented want:
//   - every member of a documented object is printed (recursively; the first
//     element of a documented array is the model of every element, and a
//     top-level array must not be empty);
//   - every member printed is documented, at every depth, except inside the
//     objects at the open paths (printed as received: a card, an A2A reply,
//     receipt claims);
//   - a documented string, number or boolean is printed with that JSON type;
//     a documented null stands for any value, and null is accepted where a
//     value is documented (a member that may be null).
//
// Paths are dot-separated member names from the top (from each element
// of a top-level array), "[]" for any array element: "results[].problems",
// "reply".
func compareShape(want, got any, open []string) []string {
	var problems []string
	isOpen := func(path string) bool {
		path = strings.TrimPrefix(path, "[].") // the elements of a top-level array
		for _, o := range open {
			if path == o || strings.HasPrefix(path, o+".") || strings.HasPrefix(path, o+"[]") {
				return true
			}
		}
		return false
	}
	show := func(path string) string {
		if path == "" {
			return "(top)"
		}
		return path
	}
	join := func(path, k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	var walk func(path string, want, got any)
	walk = func(path string, want, got any) {
		if want == nil || got == nil {
			return
		}
		switch w := want.(type) {
		case map[string]any:
			g, ok := got.(map[string]any)
			if !ok {
				problems = append(problems, fmt.Sprintf("%s: documented as an object, got %s", show(path), jsonType(got)))
				return
			}
			for k, wv := range w {
				gv, ok := g[k]
				if !ok {
					problems = append(problems, join(path, k)+": documented, missing")
					continue
				}
				walk(join(path, k), wv, gv)
			}
			if isOpen(path) {
				return
			}
			var extra []string
			for k := range g {
				if _, ok := w[k]; !ok {
					extra = append(extra, k)
				}
			}
			sort.Strings(extra)
			for _, k := range extra {
				problems = append(problems, join(path, k)+": printed but not documented")
			}
		case []any:
			g, ok := got.([]any)
			if !ok {
				problems = append(problems, fmt.Sprintf("%s: documented as an array, got %s", show(path), jsonType(got)))
				return
			}
			if len(w) == 0 {
				return
			}
			// Only the top level must have elements to check; a nested
			// array may be empty (a receipt with no actions).
			if len(g) == 0 && path == "" {
				problems = append(problems, "(top): empty, so its elements cannot be checked")
			}
			for _, gv := range g {
				walk(path+"[]", w[0], gv)
			}
		default:
			if jsonType(want) != jsonType(got) {
				problems = append(problems, fmt.Sprintf("%s: documented as a %s, got a %s", show(path), jsonType(want), jsonType(got)))
			}
		}
	}
	walk("", want, got)
	return dedupe(problems)
}

// jsonType names the JSON type of a decoded value.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case float64, json.Number:
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// dedupe keeps the first of equal problems (array elements repeat them).
func dedupe(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range in {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}
