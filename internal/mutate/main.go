// Command mutate checks that pact's tests can fail where it matters
// (`make mutate`, issue 24). It copies the tree (the files git knows,
// committed or not) to a temporary folder and, for each rule of rules.go,
// applies that rule's one text substitution, builds the owning package's
// test binary and runs the tests Run names, with a timeout. A rule is
// "caught" when those tests fail; "missed" when they pass. Before any
// mutation, each package's filtered tests must pass on the unchanged copy
// (else a failure would prove nothing) and must run at least one test.
//
// It prints one line per rule and exits 1 when a rule is missed, when its
// target text is no longer in its file exactly once (STALE: rewrite the
// rule), when the mutated code does not build, or when the baseline fails.
//
//	go run ./internal/mutate                 every rule
//	go run ./internal/mutate -rule 'card-'   the rules whose name matches
//	go run ./internal/mutate -list           the rules, without running
//	go run ./internal/mutate -check          only that every target text is still there once (.ci/run)
//	go run ./internal/mutate -markdown       the result as a Markdown table
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// rule is one mutation: in File (relative to the module root) the text Old,
// which must occur exactly once, becomes New; then the tests of Pkg
// matching Run must fail.
type rule struct {
	Name, What string
	File       string
	Old, New   string
	Pkg, Run   string
}

// Outcomes of a rule.
const (
	caught   = "caught"
	missed   = "MISSED"
	stale    = "STALE"    // the target text is gone or ambiguous
	broken   = "NO BUILD" // the mutated code does not compile: the rule is wrong
	baseFail = "BASELINE" // the tests fail without the mutation
)

type result struct {
	rule    rule
	outcome string
	detail  string
	took    time.Duration
}

func main() {
	only := flag.String("rule", "", "run only the rules whose name matches this regular expression")
	list := flag.Bool("list", false, "list the rules and exit")
	markdown := flag.Bool("markdown", false, "print the result as a Markdown table")
	timeout := flag.Duration("timeout", 3*time.Minute, "bound on each test run (and each build)")
	keep := flag.Bool("keep", false, "keep the temporary copy (its path is printed)")
	check := flag.Bool("check", false, "only check that every rule's target text occurs once in its file")
	flag.Parse()

	sel, err := regexp.Compile(*only)
	if err != nil {
		fatal("-rule: %v", err)
	}
	var chosen []rule
	for _, r := range rules {
		if sel.MatchString(r.Name) {
			chosen = append(chosen, r)
		}
	}
	if len(chosen) == 0 {
		fatal("no rule matches %q", *only)
	}
	if *list {
		for _, r := range chosen {
			fmt.Printf("%-24s %-14s %s\n", r.Name, r.Pkg, r.What)
		}
		return
	}
	root, err := moduleRoot()
	if err != nil {
		fatal("%v", err)
	}
	if *check {
		n := 0
		for _, r := range chosen {
			if why := target(root, r); why != "" {
				report(result{rule: r, outcome: stale, detail: why})
				n++
			}
		}
		if n > 0 {
			fatal("%d of %d rules are stale", n, len(chosen))
		}
		fmt.Printf("mutate: the targets of %d rules are in place\n", len(chosen))
		return
	}
	tmp, err := os.MkdirTemp("", "pact-mutate-")
	if err != nil {
		fatal("%v", err)
	}
	if *keep {
		fmt.Println("mutate: copy in", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	copyRoot := filepath.Join(tmp, "src")
	if err := copyTree(root, copyRoot); err != nil {
		fatal("copying the tree: %v", err)
	}
	bin := filepath.Join(tmp, "bin")
	os.MkdirAll(bin, 0o755)

	results := run(chosen, copyRoot, bin, *timeout)
	bad := 0
	for _, r := range results {
		if r.outcome != caught {
			bad++
		}
	}
	if *markdown {
		printMarkdown(results)
	}
	fmt.Printf("mutate: %d of %d rules caught\n", len(results)-bad, len(results))
	if bad > 0 {
		if !*keep {
			os.RemoveAll(tmp)
		}
		os.Exit(1)
	}
}

// run checks the targets, then the baselines, then each mutation.
func run(chosen []rule, src, bin string, timeout time.Duration) []result {
	results := make([]result, len(chosen))
	for i, r := range chosen {
		results[i].rule = r
		if why := target(src, r); why != "" {
			results[i].outcome, results[i].detail = stale, why
			report(results[i])
		}
	}
	// Baselines: each (package, filter) once, on the unchanged copy.
	base := map[string]string{} // key → "" when it passed, else why not
	for i, r := range chosen {
		if results[i].outcome != "" {
			continue
		}
		key := r.Pkg + " " + r.Run
		if _, done := base[key]; done {
			continue
		}
		out, passed, ran, err := testOnce(src, bin, r, timeout)
		switch {
		case err != nil:
			base[key] = err.Error()
		case !passed:
			base[key] = "the tests fail without the mutation:\n" + tail(out, 30)
		case !ran:
			base[key] = fmt.Sprintf("-run %q runs no test in %s", r.Run, r.Pkg)
		default:
			base[key] = ""
		}
	}
	for i, r := range chosen {
		if results[i].outcome != "" {
			continue
		}
		if why := base[r.Pkg+" "+r.Run]; why != "" {
			results[i].outcome, results[i].detail = baseFail, why
			report(results[i])
			continue
		}
		results[i] = mutateOnce(src, bin, r, timeout)
		report(results[i])
	}
	return results
}

// target says why r cannot be applied in the tree at root ("" when its
// target text occurs exactly once in its file).
func target(root string, r rule) string {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(r.File)))
	if err != nil {
		return err.Error()
	}
	if n := bytes.Count(data, []byte(r.Old)); n != 1 {
		return fmt.Sprintf("the target text occurs %d times in %s, want exactly once: rewrite this rule", n, r.File)
	}
	return ""
}

// mutateOnce applies r, runs its tests and restores the file.
func mutateOnce(src, bin string, r rule, timeout time.Duration) result {
	res := result{rule: r}
	start := time.Now()
	path := filepath.Join(src, r.File)
	orig, err := os.ReadFile(path)
	if err != nil {
		res.outcome, res.detail = stale, err.Error()
		return res
	}
	defer os.WriteFile(path, orig, 0o644)
	if err := os.WriteFile(path, bytes.Replace(orig, []byte(r.Old), []byte(r.New), 1), 0o644); err != nil {
		res.outcome, res.detail = broken, err.Error()
		return res
	}
	out, passed, _, err := testOnce(src, bin, r, timeout)
	res.took = time.Since(start)
	var be *buildError
	switch {
	case errors.As(err, &be):
		res.outcome, res.detail = broken, be.Error()
	case err != nil:
		// A timeout or a crash of the test binary is a failing test.
		res.outcome, res.detail = caught, err.Error()
	case passed:
		res.outcome, res.detail = missed, "the tests pass with the rule broken: add a test that fails"
	default:
		res.outcome, res.detail = caught, firstFailure(out)
	}
	return res
}

type buildError struct{ out string }

func (e *buildError) Error() string { return "the mutated code does not build:\n" + tail(e.out, 20) }

// testOnce builds r.Pkg's test binary in src and runs the tests matching
// r.Run from the package's folder, as go test does. passed is the binary's
// verdict; ran is false when no test matched.
func testOnce(src, bin string, r rule, timeout time.Duration) (out string, passed, ran bool, err error) {
	exe := filepath.Join(bin, strings.NewReplacer("/", "_", ".", "_").Replace(r.Pkg)+".test")
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "test", "-c", "-o", exe, r.Pkg)
	build.Dir = src
	if b, berr := build.CombinedOutput(); berr != nil {
		return string(b), false, false, &buildError{out: string(b)}
	}
	tctx, tcancel := context.WithTimeout(context.Background(), timeout+30*time.Second)
	defer tcancel()
	cmd := exec.CommandContext(tctx, exe, "-test.run", r.Run, "-test.count=1", "-test.timeout", timeout.String())
	cmd.Dir = filepath.Join(src, filepath.FromSlash(strings.TrimPrefix(r.Pkg, "./")))
	cmd.Env = append(os.Environ(), "PACT_TEST_REAL_KEYRING=")
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	rerr := cmd.Run()
	out = buf.String()
	ran = !strings.Contains(out, "no tests to run")
	if rerr == nil {
		return out, true, ran, nil
	}
	var ee *exec.ExitError
	if errors.As(rerr, &ee) && tctx.Err() == nil {
		return out, false, ran, nil
	}
	return out, false, ran, fmt.Errorf("the test run did not finish: %v", rerr)
}

func report(r result) {
	line := fmt.Sprintf("%-9s %-24s %-13s", r.outcome, r.rule.Name, r.rule.Pkg)
	if r.took > 0 {
		line += fmt.Sprintf(" %5.1fs", r.took.Seconds())
	}
	if r.detail != "" && r.outcome == caught {
		line += "  " + r.detail
	}
	fmt.Println(line)
	if r.outcome != caught && r.detail != "" {
		fmt.Println(indent(r.detail))
	}
}

func printMarkdown(results []result) {
	fmt.Println("| rule | what it breaks | file | package (tests) | result |")
	fmt.Println("| --- | --- | --- | --- | --- |")
	for _, r := range results {
		fmt.Printf("| %s | %s | %s | %s (`%s`) | %s |\n", r.rule.Name, r.rule.What, r.rule.File, r.rule.Pkg, strings.ReplaceAll(r.rule.Run, "|", `\|`), r.outcome)
	}
}

// firstFailure is the first "--- FAIL" line of a test run's output.
func firstFailure(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "--- FAIL") {
			return strings.Fields(t)[2]
		}
	}
	if strings.Contains(out, "panic:") {
		return "panic"
	}
	return ""
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func indent(s string) string { return "          " + strings.ReplaceAll(s, "\n", "\n          ") }

// moduleRoot is the folder of the go.mod above the working directory.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %v", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("run mutate inside the pact module")
	}
	return filepath.Dir(mod), nil
}

// copyTree copies the files git knows in root (tracked, and untracked but
// not ignored) to dst.
func copyTree(root, dst string) error {
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("git ls-files: %v", err)
	}
	for _, name := range strings.Split(string(out), "\x00") {
		if name == "" {
			continue
		}
		from := filepath.Join(root, filepath.FromSlash(name))
		fi, err := os.Lstat(from)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue // deleted in the work tree, not yet committed
			}
			return err
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		to := filepath.Join(dst, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		if err := copyFile(from, to, fi.Mode().Perm()); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(from, to string, mode os.FileMode) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func fatal(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "mutate: "+format+"\n", args...)
	os.Exit(2)
}
