package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// phase is one part of a `pact send`, found in the merged CPU profile as
// the cumulative time of the functions whose names match re.
type phase struct {
	name string
	re   string
}

// sendPhases are the parts of one send that the breakdown names (issue 21).
var sendPhases = []phase{
	{"command tree (cobra) and flags", `^main\.newRootCmd$`},
	{"settings: environment, config file", `^main\.\(\*app\)\.resolve$`},
	{"keyring choice and secret store open", `^github\.com/pact-cli/pact/(profile\.ResolveKeyring|secrets\.Open)$`},
	{"database open (connection, pragmas, schema read)", `^github\.com/pact-cli/pact/store\.\(\*DB\)\.open$`},
	{"Agent Card from the cache (with the open above)", `^github\.com/pact-cli/pact/discovery\.\(\*Cache\)\.Fetch$`},
	{"key load (profile signer)", `^github\.com/pact-cli/pact/profile\.\(\*Profile\)\.Signer$`},
	{"PA JWT mint (ES256)", `^github\.com/pact-cli/pact/signer\.\(\*Signer\)\.Mint$`},
	{"message:send round trip (a2aclient)", `^github\.com/pact-cli/pact/a2aclient\.\(\*Client\)\.Send$`},
	{"conversation write (store)", `^github\.com/pact-cli/pact/store\.\(\*DB\)\.AppendTurns$`},
	{"reply output", `^main\.\(\*app\)\.printReply$`},
	{"garbage collector (mark and sweep)", `^runtime\.(gcBgMarkWorker|bgsweep)$`},
}

// breakdown prints where one `pact send` spends its time: process start of
// a Go program that does nothing, package init (GODEBUG=inittrace=1), and
// the phases of the send from CPU profiles of n real sends merged by pprof
// (a build of pact with -tags pactprofile writes one profile per process;
// at 100 Hz a send gets about one sample, so n must be in the hundreds).
func breakdown(tmp, pact, card string, n int) ([]row, error) {
	var rows []row
	// A Go program that does nothing: the runtime's start and exit.
	empty := filepath.Join(tmp, "empty")
	os.WriteFile(empty+".go", []byte("package main\n\nfunc main() {}\n"), 0o600)
	if err := sh(nil, "go", releaseBuild("-o", empty, empty+".go")...); err != nil {
		return nil, err
	}
	res, err := hyperfine(tmp, *runs,
		cmd{"empty Go program", empty}, // built like the release (static, stripped)
		cmd{"pact version", pact + " version"},
		cmd{"pact send", pact + " send " + card + " status-of-A-88213"},
		cmd{"curl --version", "curl --version"})
	if err != nil {
		return nil, err
	}
	rows = append(rows,
		row{name: "B. empty Go program (runtime start and exit)", value: ms(res[0])},
		row{name: "B. pact version", value: ms(res[1])},
		row{name: "B. pact send", value: ms(res[2])},
		row{name: "B. curl --version", value: ms(res[3])})

	for _, args := range [][]string{{"version"}, {"send", card, "status-of-A-88213"}} {
		total, top, err := initTrace(pact, args, 21)
		if err != nil {
			return rows, err
		}
		rows = append(rows, row{name: "B. package init, pact " + args[0] + " (inittrace, median of 21)", value: fmt.Sprintf("%.2f ms; most: %s", total, top)})
	}

	prof := filepath.Join(tmp, "pact-prof")
	if err := sh(nil, "go", "build", "-tags", "pactprofile,pactrelease", "-trimpath", "-o", prof, "./cmd/pact"); err != nil {
		return rows, err
	}
	dir := filepath.Join(tmp, "profiles")
	os.MkdirAll(dir, 0o700)
	for i := 0; i < n; i++ {
		c := exec.Command(prof, "send", card, "status-of-A-88213")
		c.Env = append(os.Environ(), "PACT_CPUPROFILE_DIR="+dir)
		if out, err := c.CombinedOutput(); err != nil {
			return rows, fmt.Errorf("pact send: %v\n%s", err, out)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.pprof"))
	var top bytes.Buffer
	args := append([]string{"tool", "pprof", "-top", "-cum", "-nodecount=100000"}, files...)
	if err := sh(&top, "go", args...); err != nil {
		return rows, err
	}
	os.WriteFile(filepath.Join(tmp, "send-pprof-top.txt"), top.Bytes(), 0o600)
	// Go's profiler samples each thread after 10 ms of its own CPU, so a
	// process of a few milliseconds is undercounted: these rows are
	// shares of what was sampled; perf (below) gives the milliseconds.
	cum := pprofCum(top.String())
	total := cum["total"]
	rows = append(rows, row{name: fmt.Sprintf("B. pprof, %d sends merged: samples after package init", n), value: ms(total)})
	for _, p := range sendPhases {
		re := regexp.MustCompile(p.re)
		best := 0.0
		for fn, v := range cum {
			if re.MatchString(fn) && v > best {
				best = v
			}
		}
		rows = append(rows, row{name: "B.   " + p.name, value: fmt.Sprintf("%.1f %%", 100*best/max(total, 1e-9))})
	}
	if *keepProfile != "" {
		os.WriteFile(*keepProfile, top.Bytes(), 0o644)
	}
	if _, err := exec.LookPath("perf"); err != nil {
		return rows, nil
	}
	// The profiling build keeps its symbol table for perf; without
	// PACT_CPUPROFILE_DIR it does what the release build does.
	pr, err := perfBreakdown(tmp, prof, card, n)
	return append(rows, pr...), err
}

// perfPhases are the parts of a whole pact process that perf's samples
// (all threads, kernel included, from exec to exit) are attributed to,
// by the symbol whose callees' samples they count (perf report --children).
var perfPhases = []phase{
	{"runtime start before package init (runtime.schedinit, rt0_go)", `^runtime\.(schedinit|rt0_go)$`},
	{"package init (runtime.doInit1, all packages)", `^runtime\.doInit1$`},
	{"main: all of the command (main.main)", `^main\.main$`},
	{"  command tree (cobra) and flags", `^main\.newRootCmd$`},
	{"  settings: environment, config file", `^main\.\(\*app\)\.resolve$`},
	{"  database open (connection, pragmas, schema read)", `^github\.com/pact-cli/pact/store\.\(\*DB\)\.open$`},
	{"  Agent Card from the cache (with the open above)", `^github\.com/pact-cli/pact/discovery\.\(\*Cache\)\.Fetch$`},
	{"  key load (profile signer)", `^github\.com/pact-cli/pact/profile\.\(\*Profile\)\.Signer$`},
	{"  PA JWT mint (ES256)", `^github\.com/pact-cli/pact/signer\.\(\*Signer\)\.Mint$`},
	{"  message:send round trip (a2aclient: request, wait, reply parse)", `^github\.com/pact-cli/pact/a2aclient\.\(\*Client\)\.Send$`},
	{"  conversation write (store)", `^github\.com/pact-cli/pact/store\.\(\*DB\)\.AppendTurns$`},
	{"  reply output", `^main\.\(\*app\)\.printReply$`},
	{"garbage collector (mark and sweep)", `^runtime\.(gcBgMarkWorker|bgsweep)$`},
	{"exit (runtime and kernel)", `^(os\.Exit|runtime\.exit|do_group_exit|__x64_sys_exit_group)$`},
	{"other goroutines and threads (runtime background, network poller)", `^(runtime\.mstart\.abi0)$`},
}

// perfBreakdown samples n real sends with `perf record` (4 kHz, all
// threads, kernel included: program loading, page faults, exit) and
// attributes the CPU time of one send to perfPhases.
func perfBreakdown(tmp, pact, card string, n int) ([]row, error) {
	data := filepath.Join(tmp, "perf.data")
	loop := fmt.Sprintf("for i in $(seq %d); do %s send %s status-of-A-88213 >/dev/null || exit 1; done", n, pact, card)
	if err := sh(nil, "perf", "record", "-q", "-F", "4000", "--call-graph", "fp", "-o", data, "--", "sh", "-c", loop); err != nil {
		return nil, err
	}
	var rep bytes.Buffer
	if err := sh(&rep, "perf", "report", "-i", data, "--stdio", "--children", "--sort", "symbol", "-g", "none", "--percent-limit", "0.1", "--comm", filepath.Base(pact)); err != nil {
		return nil, err
	}
	var total bytes.Buffer
	if err := sh(&total, "perf", "report", "-i", data, "--stdio", "--sort", "comm", "-g", "none", "-F", "overhead,sample,period,comm"); err != nil {
		return nil, err
	}
	os.WriteFile(filepath.Join(tmp, "perf-report.txt"), rep.Bytes(), 0o600)
	if *keepProfile != "" {
		os.WriteFile(*keepProfile+".perf", rep.Bytes(), 0o644)
	}
	// The period of the pact processes' samples is their CPU time in ns
	// (the cpu-clock or task-clock event).
	var period float64
	for _, l := range strings.Split(total.String(), "\n") {
		f := strings.Fields(l)
		if len(f) == 4 && f[3] == filepath.Base(pact) {
			period, _ = strconv.ParseFloat(f[2], 64)
		}
	}
	perSend := period / 1e9 / float64(n)
	rows := []row{{name: fmt.Sprintf("P. CPU of one pact send, all threads and kernel (perf, %d sends)", n), value: ms(perSend)}}
	children := map[string]float64{}
	for _, l := range strings.Split(rep.String(), "\n") {
		f := strings.Fields(l)
		// "  74.50%  0.00%  [.] runtime.main  -  -"
		if len(f) >= 4 && strings.HasSuffix(f[0], "%") && (f[2] == "[.]" || f[2] == "[k]") {
			pct, _ := strconv.ParseFloat(strings.TrimSuffix(f[0], "%"), 64)
			sym := f[3]
			if pct > children[sym] {
				children[sym] = pct
			}
		}
	}
	for _, p := range perfPhases {
		re := regexp.MustCompile(p.re)
		sum := 0.0
		for sym, pct := range children {
			if re.MatchString(sym) {
				sum += pct
			}
		}
		rows = append(rows, row{name: "P. " + p.name, value: fmt.Sprintf("%s (%.1f %%)", ms(perSend*sum/100), sum)})
	}
	return rows, nil
}

func ms(sec float64) string { return fmt.Sprintf("%.2f ms", sec*1e3) }

var pprofLine = regexp.MustCompile(`^\s*[\d.]+(?:ms|s|us|µs|ns|m|h)?\s+[\d.]+%\s+[\d.]+%\s+([\d.]+)(ms|s|us|µs|ns|m|h)?\s+[\d.]+%\s+(.+)$`)

var pprofTotal = regexp.MustCompile(`Total samples = ([\d.]+)(ms|s|us|µs|ns|m|h)`)

// pprofCum reads `go tool pprof -top -cum` output: cumulative seconds by
// function.
func pprofCum(out string) map[string]float64 {
	unit := map[string]float64{"": 1, "ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600}
	m := map[string]float64{}
	if g := pprofTotal.FindStringSubmatch(out); g != nil {
		v, _ := strconv.ParseFloat(g[1], 64)
		m["total"] = v * unit[g[2]]
	}
	for _, l := range strings.Split(out, "\n") {
		if g := pprofLine.FindStringSubmatch(l); g != nil {
			v, _ := strconv.ParseFloat(g[1], 64)
			fn := strings.TrimSpace(g[3])
			if i := strings.Index(fn, " (inline)"); i >= 0 {
				fn = fn[:i]
			}
			m[fn] += v * unit[g[2]]
		}
	}
	return m
}

var initLine = regexp.MustCompile(`^init (\S+) @[\d.]+ ms, ([\d.]+) ms clock`)

// initTrace runs pact args k times with GODEBUG=inittrace=1 and returns the
// median of the summed package init clock (ms) and the three largest
// packages of that run.
func initTrace(pact string, args []string, k int) (float64, string, error) {
	type run struct {
		total float64
		top   string
	}
	var runs []run
	for i := 0; i < k; i++ {
		c := exec.Command(pact, args...)
		c.Env = append(os.Environ(), "GODEBUG=inittrace=1")
		var stderr bytes.Buffer
		c.Stderr = &stderr
		if err := c.Run(); err != nil {
			return 0, "", fmt.Errorf("pact %s: %v", args[0], err)
		}
		type pkg struct {
			name string
			ms   float64
		}
		var pkgs []pkg
		total := 0.0
		for _, l := range strings.Split(stderr.String(), "\n") {
			if g := initLine.FindStringSubmatch(l); g != nil {
				v, _ := strconv.ParseFloat(g[2], 64)
				total += v
				pkgs = append(pkgs, pkg{g[1], v})
			}
		}
		sort.Slice(pkgs, func(a, b int) bool { return pkgs[a].ms > pkgs[b].ms })
		var top []string
		for j := 0; j < len(pkgs) && j < 3; j++ {
			top = append(top, fmt.Sprintf("%s %.2f", pkgs[j].name, pkgs[j].ms))
		}
		runs = append(runs, run{total, strings.Join(top, ", ")})
	}
	sort.Slice(runs, func(a, b int) bool { return runs[a].total < runs[b].total })
	m := runs[len(runs)/2]
	return m.total, m.top, nil
}
