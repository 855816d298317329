package server

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/secrets"
	"github.com/pact-cli/pact/store"
)

// replicas makes n Servers on n handles of one database (as n replicas
// share one PostgreSQL), with one identity, on the real clock.
func replicas(t *testing.T, n int) []*Server {
	t.Helper()
	home := t.TempDir()
	dirs := store.Dirs{Config: filepath.Join(home, "config"), Data: filepath.Join(home, "data")}
	sec, _ := secrets.Open("file", dirs.Data, 0)
	p := &profile.Profile{Name: "serve", Dirs: dirs, Secrets: sec}
	if _, err := p.Init("https://pa.example", "", "ES256", false); err != nil {
		t.Fatal(err)
	}
	id, err := NewIdentity(p, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []*Server
	for range n {
		st, err := OpenStore(context.Background(), filepath.Join(home, "serve.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		s, err := New(Options{Settings: Settings{}.WithDefaults(""), Identity: id, Store: st, Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// TestIssue30_LeaseHeldByOneReplicaRenewedReleased: a lease one replica
// holds is refused to another, and told whose it is; it is renewed in
// the background past its first expiry, so that the other still cannot
// take it; released, the other takes it at once with the next token.
func TestIssue30_LeaseHeldByOneReplicaRenewedReleased(t *testing.T) {
	rs := replicas(t, 2)
	a, b := rs[0], rs[1]
	if a.Replica() == b.Replica() || a.Replica() == "" {
		t.Fatalf("replica names %q and %q", a.Replica(), b.Replica())
	}
	ctx := context.Background()
	const name, ttl = "turn/u_a/m-1", 2 * time.Second
	held, first, err := a.Hold(ctx, name, ttl)
	if err != nil {
		t.Fatal(err)
	}
	_, cur, err := b.Hold(ctx, name, ttl)
	if !errors.Is(err, store.ErrLeaseHeld) || !strings.HasPrefix(cur.Holder, a.Replica()+"/") {
		t.Fatalf("another replica took a held lease: %+v %v", cur, err)
	}
	// Past its first expiry, renewed: still a's.
	deadline := time.Now().Add(30 * time.Second)
	for {
		l, _, err := a.Store().LeaseOf(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if time.Now().After(first.Expires) && l.Expires.After(first.Expires) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the lease was not renewed past its first expiry %s: %+v", first.Expires, l)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, cur, err := b.Hold(ctx, name, ttl); !errors.Is(err, store.ErrLeaseHeld) {
		t.Fatalf("a renewed lease was taken past its first expiry: %+v %v", cur, err)
	}
	if held.Context().Err() != nil || held.Lease().Token != first.Token {
		t.Fatalf("the holder's lease: %v, token %d", held.Context().Err(), held.Lease().Token)
	}
	if err := held.Release(); err != nil {
		t.Fatal(err)
	}
	if held.Context().Err() == nil {
		t.Fatal("a released lease's context goes on")
	}
	hb, l, err := b.Hold(ctx, name, ttl)
	if err != nil || l.Token != first.Token+1 {
		t.Fatalf("after release: %+v %v", l, err)
	}
	hb.Release()
}

// TestIssue30_LeaseLostEndsTheHoldersWork: when another holder takes a
// replica's lease over (it expired while the replica stalled), the
// replica's next renewal finds it lost and ends the work done under it.
func TestIssue30_LeaseLostEndsTheHoldersWork(t *testing.T) {
	a := replicas(t, 1)[0]
	ctx := context.Background()
	const name, ttl = "login/u_a/l-1", 600 * time.Millisecond
	held, l, err := a.Hold(ctx, name, ttl)
	if err != nil {
		t.Fatal(err)
	}
	// Another holder takes it over, as after its expiry.
	if err := a.Store().ReleaseLease(ctx, l); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Store().AcquireLease(ctx, name, "elsewhere/1", time.Now(), time.Minute); err != nil {
		t.Fatal(err)
	}
	select {
	case <-held.Context().Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the work under a lost lease went on")
	}
	if cause := context.Cause(held.Context()); !errors.Is(cause, ErrLeaseLost) {
		t.Fatalf("cause %v", cause)
	}
	if err := held.Release(); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("releasing a lost lease: %v", err)
	}
	if cur, _, _ := a.Store().LeaseOf(ctx, name); cur.Holder != "elsewhere/1" {
		t.Fatalf("the new holder's lease was touched: %+v", cur)
	}
}
