package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"time"

	"github.com/pact-cli/pact/store"
)

// storeRows measures the profile database (issue 11): rows 7 and 8.
func storeRows(tmp, pact string) ([]row, error) {
	var rows []row
	// 7. turn append at 100 vs 10,000 turns (store.BenchmarkAppendTurn).
	// Five rounds, each measuring both sizes; the median of each is kept
	// (one round on this shared machine swings by 20 %).
	var as, bs []float64
	for i := 0; i < 5; i++ {
		ns, err := gobench("./store", "^BenchmarkAppendTurn$", "2000x")
		if err != nil {
			return rows, err
		}
		as, bs = append(as, ns["BenchmarkAppendTurn/turns=10000"]), append(bs, ns["BenchmarkAppendTurn/turns=100"])
	}
	a, b := median(as), median(bs)
	rows = append(rows, row{name: "7. turn append, 10,000 vs 100 turns (in-process, median of 5)", value: fmt.Sprintf("%.0f µs vs %.0f µs", a/1e3, b/1e3), ratio: a / b, target: 1.1})

	more, err := receiptRows(tmp, pact)
	return append(rows, more...), err
}

// receiptRows is row 8: `pact receipts list` over 100,000 archived
// receipts (all, one Brand's, then every one with a problem).
func receiptRows(tmp, pact string) ([]row, error) {
	var rows []row
	home := filepath.Join(tmp, "home-receipts")
	const n = 100_000
	if err := seedReceipts(home, n, false); err != nil {
		return rows, err
	}
	env := append(os.Environ(), "PACT_HOME="+home, "PACT_KEYRING=file", "NO_COLOR=1")
	sec, kb, out, err := timed(env, pact, "receipts", "list", "--json")
	if err != nil {
		return rows, err
	}
	var items []json.RawMessage
	if err := json.Unmarshal(out, &items); err != nil || len(items) != n {
		return rows, fmt.Errorf("receipts list --json gave %d items (%v), want %d", len(items), err, n)
	}
	rows = append(rows,
		row{name: "8. receipts list --json, 100,000 receipts (s)", value: fmt.Sprintf("%.2f s", sec), measured: sec, target: 1, strictLT: true},
		row{name: "8'. its peak RSS (MB)", value: fmt.Sprintf("%.1f MB", float64(kb)*1024/1e6), measured: float64(kb) * 1024 / 1e6, target: 60, strictLT: true})
	sec, _, out, err = timed(env, pact, "receipts", "list", "--json", "--brand", "https://p.example/a2a/brand-7")
	if err != nil {
		return rows, err
	}
	items = nil
	if err := json.Unmarshal(out, &items); err != nil || len(items) != n/10 {
		return rows, fmt.Errorf("receipts list --brand gave %d items (%v), want %d", len(items), err, n/10)
	}
	rows = append(rows, row{name: "8''. receipts list --json --brand (1 in 10) (s)", value: fmt.Sprintf("%.2f s", sec), measured: sec, target: 0.5, strictLT: true})
	more, err := problemRows(tmp, pact)
	return append(rows, more...), err
}

// seedReceipts writes n receipt rows (ten brands, realistic sizes) into the
// database of profile "default" under home. The list does not verify
// signatures, so the JWSs are shaped like real ones without being signed.
// With problems every receipt is kept as not verified, with the problem a
// bundle import gives when the Brand's keys cannot be fetched.
func seedReceipts(home string, n int, problems bool) error {
	dirs := store.Dirs{Config: filepath.Join(home, "config"), Data: filepath.Join(home, "data")}
	db, err := store.Open(context.Background(), dirs.DBPath("default"))
	if err != nil {
		return err
	}
	defer db.Close()
	return seedReceiptsInto(db.ForUser(store.LocalUser), n, problems)
}

// seedReceiptsInto writes n receipt rows (seedReceipts) into a User's store.
func seedReceiptsInto(db store.Receipts, n int, problems bool) error {
	batch := make([]store.Receipt, 0, 5000)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		brand := fmt.Sprintf("https://p.example/a2a/brand-%d", i%10)
		claims, _ := json.Marshal(map[string]any{
			"grantId": "a2agrant_" + strconv.Itoa(i%10), "user": "jane-4471", "pa": "https://pa.example", "brand": brand,
			"scopesUsed": []string{"orders:read"}, "actions": []any{map[string]string{"tool": "list_orders", "argsHash": "wpEvnrFYveXTtUI73wiYMD89FoNMdg_k9MP6UL5ronQ"}},
			"ts": t0.Add(time.Duration(i) * time.Second).Format(time.RFC3339),
		})
		jws := "eyJhbGciOiJFUzI1NiIsImtpZCI6ImsxIn0." + b64(claims) + "." + b64(bytes.Repeat([]byte{byte(i)}, 64))
		r := store.Receipt{ID: fmt.Sprintf("%064x", i), JWS: jws, Claims: claims, JWK: []byte(`{"kty":"EC","crv":"P-256","x":"6SFSa6yWkrG3xWjNCVPMUuUfKvHEF8AjZ9_UU7R5DgQ","y":"HaL2Kwf0VcrcIzdh5U0hYCQxmCdYsGmP4-xL1KdAjnM"}`),
			JWKThumbprint: "JsmN3EdKFweUbv3XUj9i-1RZ0qFayPB_w_YgnRTSkEo", Verified: true, VerifiedAt: t0}
		if problems {
			r.Verified, r.JWK, r.JWKThumbprint = false, nil, ""
			r.Problems = []string{"not checked: the Brand's keys could not be fetched (Get \"" + brand +
				"/.well-known/agent-card.json\": dial tcp 127.0.0.1:9: connect: connection refused); kept as not verified: import the bundle again when the Brand can be reached"}
		}
		r.SetListing(claims, brand, "https://brand"+strconv.Itoa(i%10)+".example/.well-known/agent-card.json")
		batch = append(batch, r)
		if len(batch) == cap(batch) || i == n-1 {
			if err := db.PutReceipts(context.Background(), batch); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	return nil
}

func b64(b []byte) string {
	const enc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	var out []byte
	for i := 0; i < len(b); i += 3 {
		var v uint32
		k := 0
		for ; k < 3 && i+k < len(b); k++ {
			v |= uint32(b[i+k]) << (16 - 8*k)
		}
		for j := 0; j <= k; j++ {
			out = append(out, enc[(v>>(18-6*j))&63])
		}
	}
	return string(out)
}

var elapsedRe = regexp.MustCompile(`Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)`)

// timed runs a command under /usr/bin/time -v and returns its wall time in
// seconds, peak RSS in KiB and stdout.
func timed(env []string, name string, args ...string) (float64, int, []byte, error) {
	t, err := timedCPU(env, name, args...)
	return t.wall, t.kb, t.out, err
}

// timing is what /usr/bin/time -v reports of one run.
type timing struct {
	wall, cpu float64 // seconds; cpu is user + system
	kb        int     // peak RSS, KiB
	out       []byte  // stdout
}

var cpuRe = regexp.MustCompile(`(?:User|System) time \(seconds\): ([\d.]+)`)

// timedCPU is timed with the CPU time (user + system) too: on a shared
// machine the wall time also counts the time other work held the CPU.
func timedCPU(env []string, name string, args ...string) (timing, error) {
	c := exec.Command("/usr/bin/time", append([]string{"-v", name}, args...)...)
	c.Env = env
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		return timing{}, fmt.Errorf("%s %v: %v\n%s", name, args, err, tail(stderr.String()))
	}
	m := maxRSS.FindStringSubmatch(stderr.String())
	e := elapsedRe.FindStringSubmatch(stderr.String())
	if m == nil || e == nil {
		return timing{}, fmt.Errorf("no time/RSS from /usr/bin/time:\n%s", tail(stderr.String()))
	}
	var t timing
	t.kb, _ = strconv.Atoi(m[1])
	h, _ := strconv.ParseFloat(e[1], 64)
	mm, _ := strconv.ParseFloat(e[2], 64)
	ss, _ := strconv.ParseFloat(e[3], 64)
	t.wall = h*3600 + mm*60 + ss
	for _, c := range cpuRe.FindAllStringSubmatch(stderr.String(), -1) {
		v, _ := strconv.ParseFloat(c[1], 64)
		t.cpu += v
	}
	t.out = stdout.Bytes()
	return t, nil
}

// chatTurnRows is row 9: one conversation fed to `pact chat` (line mode)
// in three processes: turns 1–500, 501–2,500, 2,501–3,000. The first and
// the last do the same work but for the conversation's length.
func chatTurnRows(pact, brand string) ([]row, error) {
	feed := func(from, to int, fresh bool) (float64, error) {
		var in bytes.Buffer
		for i := from; i <= to; i++ {
			fmt.Fprintf(&in, "turn %d: status of A-88213?\n", i)
		}
		args := []string{"chat", brand}
		if fresh {
			args = append(args, "--new")
		}
		c := exec.Command(pact, args...)
		c.Stdin = &in
		var stdout, stderr bytes.Buffer
		c.Stdout, c.Stderr = &stdout, &stderr
		start := time.Now()
		if err := c.Run(); err != nil {
			return 0, fmt.Errorf("pact chat: %v\n%s", err, tail(stderr.String()))
		}
		if got := bytes.Count(stdout.Bytes(), []byte("\n")); got < to-from+1 {
			return 0, fmt.Errorf("pact chat printed %d lines for %d turns", got, to-from+1)
		}
		return time.Since(start).Seconds(), nil
	}
	early, err := feed(1, 500, true)
	if err != nil {
		return nil, err
	}
	if _, err := feed(501, 2500, false); err != nil {
		return nil, err
	}
	late, err := feed(2501, 3000, false)
	if err != nil {
		return nil, err
	}
	return []row{{name: "9. pact chat line mode, turns 2,501–3,000 vs 1–500", value: fmt.Sprintf("%.2f s vs %.2f s", late, early), ratio: late / early, target: 1.25}}, nil
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}
