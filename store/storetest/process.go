package storetest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pact-cli/pact/store"
)

// The suite's child processes: the test binary started again with
// childEnv naming what to do (Main runs it instead of the tests).
const (
	childEnv  = "PACT_STORETEST_CHILD"
	addrEnv   = "PACT_STORETEST_ADDR"
	writerEnv = "PACT_STORETEST_WRITER"
	writesEnv = "PACT_STORETEST_WRITES"
)

// Main runs the tests (m.Run), or, in a child process the suite started,
// what that child was started for. Call it from the TestMain of each
// backend's test package.
func Main(m *testing.M, h Harness) {
	if role := os.Getenv(childEnv); role != "" {
		if err := child(role, h); err != nil {
			fmt.Fprintf(os.Stderr, "storetest child %s: %v\n", role, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := m.Run()
	if h.Cleanup != nil {
		h.Cleanup()
	}
	os.Exit(code)
}

// child waits for the word to start on stdin (so that every child starts
// at once), then does its work.
func child(role string, h Harness) error {
	io.ReadAll(os.Stdin)
	ctx := context.Background()
	b, err := h.Open(ctx, os.Getenv(addrEnv))
	if err != nil {
		return err
	}
	defer b.Close()
	switch role {
	case "migrate":
		_, err := b.Check(ctx)
		return err
	case "write":
		w := os.Getenv(writerEnv)
		n, _ := strconv.Atoi(os.Getenv(writesEnv))
		db := b.ForUser(Alice)
		r := receipt(7, "https://p.example/a2a/A", true)
		for i := 0; i < n; i++ {
			id := fmt.Sprintf("%s-%03d", w, i)
			if err := db.RecordSend(ctx, store.Send{MessageID: id, Brand: card, InterfaceURL: iface, ContextID: "shared", Text: "q " + id, At: t0}); err != nil {
				return err
			}
			if err := db.AppendTurns(ctx, conv("shared", i),
				store.Turn{MessageID: id, Role: "user", Text: "q " + id, At: t0},
				store.Turn{MessageID: "r-" + id, Role: "agent", Text: "a " + id, At: t0}); err != nil {
				return err
			}
			if _, err := db.PutTurnReceipt(ctx, r, iface+" "+id); err != nil {
				return err
			}
			if err := db.SetSendState(ctx, id, store.SendDelivered, ""); err != nil {
				return err
			}
		}
		return nil
	}
	if role == "lease" {
		return leaseChild(ctx, b, os.Getenv(writerEnv))
	}
	return fmt.Errorf("unknown role %q", role)
}

// runChildren starts n children of role on the database at addr, lets
// them go at once, and fails the test unless every one succeeds.
func runChildren(t *testing.T, role, addr string, n int, env func(i int) []string) {
	t.Helper()
	type proc struct {
		cmd   *exec.Cmd
		start io.WriteCloser
		out   strings.Builder
	}
	procs := make([]*proc, n)
	for i := range procs {
		p := &proc{cmd: exec.Command(os.Args[0], "-test.run=^$")}
		p.cmd.Env = append(os.Environ(), childEnv+"="+role, addrEnv+"="+addr)
		if env != nil {
			p.cmd.Env = append(p.cmd.Env, env(i)...)
		}
		p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
		var err error
		if p.start, err = p.cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs[i] = p
	}
	for _, p := range procs {
		p.start.Close() // go
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i, p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			done := make(chan error, 1)
			go func() { done <- p.cmd.Wait() }()
			select {
			case errs[i] = <-done:
			case <-time.After(2 * time.Minute):
				p.cmd.Process.Kill()
				errs[i] = fmt.Errorf("still running after 2 minutes")
				<-done
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("process %d of %d (%s): %v\n%s", i+1, n, role, err, procs[i].out.String())
		}
	}
	if t.Failed() {
		t.FailNow()
	}
}

// ConcurrentWritersInSeveralProcessesLoseNothing: four processes append
// to one conversation, record and settle their sends, and archive one
// receipt for their turns, all at once: every turn and send is there, and
// the receipt counts every other turn as a replay (none lost to a race).
func ConcurrentWritersInSeveralProcessesLoseNothing(t *testing.T, h Harness) {
	const procs, writes = 4, 15
	b, addr := open(t, h)
	runChildren(t, "write", addr, procs, func(i int) []string {
		return []string{writerEnv + "=" + fmt.Sprint("w", i), writesEnv + "=" + fmt.Sprint(writes)}
	})
	ctx := context.Background()
	db := b.ForUser(Alice)
	ts, err := db.Turns(ctx, iface, "shared")
	must(t, err)
	if len(ts) != 2*procs*writes {
		t.Fatalf("%d turns after %d processes wrote %d each; want %d", len(ts), procs, 2*writes, 2*procs*writes)
	}
	seen := map[string]bool{}
	for _, tu := range ts {
		if seen[tu.Role+tu.MessageID] {
			t.Fatalf("turn %s stored twice", tu.MessageID)
		}
		seen[tu.Role+tu.MessageID] = true
	}
	if un, _ := db.Unanswered(ctx, card); len(un) != 0 {
		t.Fatalf("%d sends left unanswered", len(un))
	}
	for i := 0; i < procs; i++ {
		if st, _ := db.SendState(ctx, fmt.Sprintf("w%d-%03d", i, writes-1)); st != store.SendDelivered {
			t.Fatalf("send w%d's last: %q", i, st)
		}
	}
	var rs []store.Receipt
	must(t, db.EachReceipt(ctx, store.ReceiptFilter{}, func(r store.Receipt) error { rs = append(rs, r); return nil }))
	if len(rs) != 1 || rs[0].Replays != procs*writes-1 {
		t.Fatalf("the receipt of %d turns: %d rows, %d replays; want 1, %d", procs*writes, len(rs), rs[0].Replays, procs*writes-1)
	}
}

// TwoProcessesStartingAtOnceMigrateOnce: processes opening an empty
// database at the same moment all succeed (the schema is created once,
// under a lock), and the database is at this binary's version.
func TwoProcessesStartingAtOnceMigrateOnce(t *testing.T, h Harness) {
	addr := h.Empty(t)
	runChildren(t, "migrate", addr, 3, nil)
	b := reopen(t, h, addr)
	if _, err := b.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// NewerSchemaRefusedInOneSentence: a database whose schema is newer than
// this binary's is refused, untouched, with one sentence that says to
// upgrade pact.
func NewerSchemaRefusedInOneSentence(t *testing.T, h Harness) {
	_, addr := open(t, h)
	must(t, func() error {
		b, err := h.Open(context.Background(), addr)
		if err != nil {
			return err
		}
		defer b.Close()
		return b.ForUser(Alice).AppendTurns(context.Background(), conv("kept", 0), turns(0, 2)...)
	}())
	h.SetSchemaAhead(t, addr)
	b, err := h.Open(context.Background(), addr)
	opened := err == nil
	if opened {
		defer b.Close()
		_, err = b.ForUser(Alice).Conversations(context.Background())
	}
	if err == nil {
		t.Fatal("a database with a newer schema was used")
	}
	msg := err.Error()
	if !strings.Contains(msg, "newer") || !strings.Contains(msg, "upgrade pact") || strings.Contains(msg, "\n") ||
		strings.Count(strings.TrimSuffix(msg, "."), ". ") > 0 {
		t.Fatalf("the refusal is not one sentence saying to upgrade pact: %q", msg)
	}
	if !errors.Is(err, store.ErrNewerSchema) {
		t.Fatalf("the refusal does not match store.ErrNewerSchema (doctor's advice needs it): %v", err)
	}
	if opened {
		if _, err := b.Check(context.Background()); !errors.Is(err, store.ErrNewerSchema) {
			t.Fatalf("Check passed a database with a newer schema, or did not say why: %v", err)
		}
	}
}
