package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/demoprovider"
)

func (d *demoEnv) store() *conversation.Store {
	return conversation.NewStore(filepath.Join(d.home, "data", "profiles", "default", "conversations"))
}

// loadAll loads the index and every conversation record, failing the test
// on any unreadable file, and checks `pact conversations --json` parses.
func (d *demoEnv) loadAll(t *testing.T) map[string][]conversation.Turn {
	t.Helper()
	st := d.store()
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

// 20 `pact send` processes at once to one Brand, sharing one profile: every
// one succeeds, every message and reply is stored exactly once, and the
// store and `pact conversations --json` still load.
func TestDurability_TwentyConcurrentSends(t *testing.T) {
	t.Parallel()
	d := newDemoEnv(t, demoprovider.Config{}, nil)
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
	all := d.loadAll(t)
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
	total := 0
	for _, turns := range all {
		total += len(turns)
	}
	if total != 2*n {
		t.Errorf("%d turns stored in %d conversations, want %d", total, len(all), 2*n)
	}
	if runs := d.prov.AgentRuns(); runs != n {
		t.Errorf("agent ran %d times for %d messages", runs, n)
	}
}

// `pact send` killed with SIGKILL at random points (about 30 times, from
// start-up to after the reply): the store always loads, the turns stored
// before are intact, and a normal send works afterwards (no stale lock).
func TestDurability_SIGKILLWhileSending(t *testing.T) {
	if testing.Short() {
		t.Skip("30 killed processes")
	}
	t.Parallel()
	d := newDemoEnv(t, demoprovider.Config{}, nil)
	base := parseSend(t, d.run("send", d.brand.SiteURL, "hello", "--json"))
	start := time.Now()
	parseSend(t, d.run("send", d.brand.SiteURL, "status of A-88213?", "--json"))
	typical := time.Since(start)
	earlier := d.loadAll(t)[base.ContextID]
	if len(earlier) != 4 {
		t.Fatalf("baseline conversation has %d turns, want 4", len(earlier))
	}
	rng := rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))
	killed := 0
	for i := 0; i < 30; i++ {
		delay := time.Duration(rng.Int64N(int64(typical) * 6 / 5))
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		c := d.cmd(ctx, "send", d.brand.SiteURL, fmt.Sprintf("kill me %d", i), "--json")
		if err := c.Start(); err != nil {
			cancel()
			t.Fatal(err)
		}
		time.Sleep(delay)
		c.Process.Signal(syscall.SIGKILL)
		if err := c.Wait(); err != nil {
			killed++ // it died of the signal rather than finishing
		}
		cancel()
		now := d.loadAll(t)
		turns := now[base.ContextID]
		if len(turns) < len(earlier) {
			t.Fatalf("kill %d (after %s): the conversation lost turns: %d < %d", i, delay, len(turns), len(earlier))
		}
		for j := range earlier {
			if turns[j].MessageID != earlier[j].MessageID || turns[j].Text != earlier[j].Text || turns[j].Role != earlier[j].Role {
				t.Fatalf("kill %d (after %s): turn %d changed: %+v → %+v", i, delay, j, earlier[j], turns[j])
			}
		}
	}
	t.Logf("typical send %s; %d of 30 processes died of SIGKILL, the rest had finished", typical.Round(time.Millisecond), killed)
	after := parseSend(t, d.run("send", d.brand.SiteURL, "still there?", "--json"))
	if after.ContextID != base.ContextID {
		t.Logf("the conversation moved on to %s", after.ContextID)
	}
	d.loadAll(t)
}
