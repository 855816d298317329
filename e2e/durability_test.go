package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/demoprovider"
	"github.com/pact-cli/pact/store"
)

// openDB opens the profile's database as pact does, fails the test unless
// it passes PRAGMA integrity_check, and closes it at the end of the test.
func (d *demoEnv) openDB(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(d.home, "data", "profiles", "default", store.DBFileName))
	if err != nil {
		t.Fatalf("the database does not open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.IntegrityCheck(context.Background()); err != nil {
		t.Fatal(err)
	}
	return db
}

// loadAll checks the database's integrity, loads every conversation and
// its turns, failing the test on any error, and checks `pact conversations
// --json` parses.
func (d *demoEnv) loadAll(t *testing.T) map[string][]conversation.Turn {
	t.Helper()
	db := d.openDB(t)
	defer db.Close()
	st := conversation.NewStore(db.ForUser(store.LocalUser))
	sums, err := st.List()
	if err != nil {
		t.Fatalf("conversation index does not load: %v", err)
	}
	out := map[string][]conversation.Turn{}
	for _, s := range sums {
		turns, err := st.Turns(s.InterfaceURL, s.ContextID)
		if err != nil {
			t.Fatalf("conversation %s does not load: %v", s.ContextID, err)
		}
		out[s.ContextID] = turns
	}
	r := d.run("conversations", "--json")
	var list []conversation.Summary
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &list) != nil || len(list) != len(sums) {
		t.Fatalf("pact conversations --json: exit %d, %d vs %d entries\n%s\n%s", r.code, len(list), len(sums), r.stdout, r.stderr)
	}
	return out
}

// 20 `pact send` processes at once into one conversation, sharing one
// profile: every one succeeds, every message and reply is stored exactly
// once in that conversation, and the database passes its integrity check
// and `pact conversations --json` still loads.
func TestDurability_TwentyConcurrentSends(t *testing.T) {
	t.Parallel()
	d := newDemoEnv(t, demoprovider.Config{}, nil)
	concurrentSends(t, d, d.loadAll)
}

// concurrentSends runs 20 `pact send` at once into one conversation and
// checks, with the history load reads, that every message and reply is
// stored exactly once, in that conversation.
func concurrentSends(t *testing.T, d *demoEnv, load func(*testing.T) map[string][]conversation.Turn) {
	base := parseSend(t, d.run("send", d.brand.SiteURL, "hello", "--json"))
	const n = 20
	results := make([]result, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			results[i] = d.run("send", d.brand.SiteURL, fmt.Sprintf("message %d about A-88213", i), "--json")
		}(i)
	}
	wg.Wait()
	outs := make([]sendOut, n)
	for i, r := range results {
		outs[i] = parseSend(t, r)
	}
	all := load(t)
	for i, o := range outs {
		turns, ok := all[o.ContextID]
		if !ok {
			t.Errorf("send %d: context %s not stored", i, o.ContextID)
			continue
		}
		var user, agent int
		for _, tu := range turns {
			switch {
			case tu.MessageID == o.MessageID && tu.Role == "user":
				user++
			case tu.MessageID == o.Reply.Message.MessageID && tu.Role == "agent":
				agent++
			}
		}
		if user != 1 || agent != 1 {
			t.Errorf("send %d (%s): stored %d user and %d agent turns, want 1 and 1", i, o.MessageID, user, agent)
		}
	}
	for i, o := range outs {
		if o.ContextID != base.ContextID {
			t.Errorf("send %d went to context %s, not the conversation %s", i, o.ContextID, base.ContextID)
		}
	}
	if len(all) != 1 || len(all[base.ContextID]) != 2+2*n {
		t.Errorf("%d conversations, %d turns in %s; want 1 and %d", len(all), len(all[base.ContextID]), base.ContextID, 2+2*n)
	}
	if runs := d.prov.AgentRuns(); runs != n+1 {
		t.Errorf("agent ran %d times for %d messages", runs, n+1)
	}
}

// hookBin is pact built with the pact_store_testhook tag: with
// PACT_STORE_TEST_HOLD_MS set it says on stderr when it is inside the
// write transaction that stores a send, and holds it open that long.
var hookBin = sync.OnceValues(func() (string, error) {
	// Beside the binary TestMain built, so that TestMain removes it too.
	bin := filepath.Join(filepath.Dir(pactBin), binName(runtime.GOOS, "pact-store-testhook"))
	out, err := exec.Command("go", "build", "-tags", "pact_store_testhook", "-o", bin, "github.com/pact-cli/pact/cmd/pact").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("building pact with the store test hook: %v\n%s", err, out)
	}
	return bin, nil
})

// `pact send` killed with SIGKILL 30 times while it is inside the database
// write that stores the turns (the test build says when it is, and holds
// the transaction open): every kill happens mid-write, the database always
// passes PRAGMA integrity_check, the turns stored before are intact, only
// the turn in flight is lost, and a normal send works afterwards (no stale
// lock).
func TestDurability_SIGKILLMidWrite(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the kill is told from other exits by its POSIX signal, which Windows does not report")
	}
	if testing.Short() {
		t.Skip("30 killed processes")
	}
	t.Parallel() // then build: the other tests run meanwhile
	bin, err := hookBin()
	if err != nil {
		t.Fatal(err)
	}
	d := newDemoEnv(t, demoprovider.Config{}, nil)
	base := parseSend(t, d.run("send", d.brand.SiteURL, "hello", "--json"))
	earlier := d.loadAll(t)[base.ContextID]
	if len(earlier) != 2 {
		t.Fatalf("baseline conversation has %d turns, want 2", len(earlier))
	}
	const kills = 30
	midWrite := 0
	for i := 0; i < kills; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		c := d.cmd(ctx, "send", d.brand.SiteURL, fmt.Sprintf("kill me %d", i), "--json")
		c.Path = bin
		c.Env = append(c.Env, "PACT_STORE_TEST_HOLD_MS=20000")
		stderr, _ := c.StderrPipe()
		if err := c.Start(); err != nil {
			cancel()
			t.Fatal(err)
		}
		in := make(chan bool, 1)
		go func() {
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
				if strings.Contains(sc.Text(), "pact-store-test: in a write transaction") {
					in <- true
					io.Copy(io.Discard, stderr)
					return
				}
			}
			in <- false
		}()
		inWrite := <-in
		c.Process.Signal(syscall.SIGKILL)
		err := c.Wait()
		cancel()
		var ee *exec.ExitError
		if inWrite && errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL {
			midWrite++
		}
		turns := d.loadAll(t)[base.ContextID]
		if len(turns) != len(earlier) {
			t.Fatalf("kill %d: the conversation has %d turns, want the %d stored before (the turn in flight must be lost whole)", i, len(turns), len(earlier))
		}
		for j := range earlier {
			if turns[j].MessageID != earlier[j].MessageID || turns[j].Text != earlier[j].Text || turns[j].Role != earlier[j].Role {
				t.Fatalf("kill %d: turn %d changed: %+v → %+v", i, j, earlier[j], turns[j])
			}
		}
	}
	if midWrite != kills {
		t.Fatalf("%d of %d kills happened inside the database write, want all", midWrite, kills)
	}
	after := parseSend(t, d.run("send", d.brand.SiteURL, "still there?", "--json"))
	if after.ContextID != base.ContextID {
		t.Fatalf("the conversation moved on to %s", after.ContextID)
	}
	if turns := d.loadAll(t)[base.ContextID]; len(turns) != len(earlier)+2 {
		t.Fatalf("after the kills a send stored %d turns, want %d", len(turns), len(earlier)+2)
	}
}
