package storetest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pact-cli/pact/store"
)

// The state of pact serve itself (store.ServerState): a backend that holds
// a server implements it, and these behaviours are what the server relies
// on across its replicas.

// serverState is b's store.ServerState; a backend without it fails.
func serverState(t testing.TB, h Harness, b store.Backend) store.ServerState {
	t.Helper()
	s, ok := b.(store.ServerState)
	if !ok {
		t.Fatalf("%s: %T does not implement store.ServerState: it cannot hold a pact serve", h.Name, b)
	}
	return s
}

var serverT0 = time.Unix(1_790_000_000, 0).UTC()

func addServerUser(t testing.TB, s store.ServerState, id, name string) {
	t.Helper()
	must(t, s.AddServerUser(context.Background(), store.ServerUser{ID: id, Name: name, Created: serverT0}))
}

// ServerEnrolmentCodeUsedOnceEvenWhenRaced: of sixteen enrolments racing
// with one code through two handles of the database (as two replicas
// would), exactly one wins; a code past its expiry and an unknown code are
// refused alike.
func ServerEnrolmentCodeUsedOnceEvenWhenRaced(t *testing.T, h Harness) {
	ctx := context.Background()
	b, addr := open(t, h)
	s1, s2 := serverState(t, h, b), serverState(t, h, reopen(t, h, addr))
	addServerUser(t, s1, "u_a", "alice")
	must(t, s1.AddEnrolmentCode(ctx, store.EnrolmentCode{Hash: "h1", UserID: "u_a", Created: serverT0, Expires: serverT0.Add(15 * time.Minute), CreatedBy: "operator"}))
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins, refused := 0, 0
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := s1
			if i%2 == 1 {
				s = s2
			}
			u, d, err := s.Enrol(ctx, "h1", serverT0.Add(time.Minute), store.ServerDevice{ID: "d_" + string(rune('a'+i)), Name: "x", KID: "k", JWK: "{}", Created: serverT0})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil && u.Name == "alice" && d.UserID == "u_a":
				wins++
			case errors.Is(err, store.ErrCodeRefused):
				refused++
			default:
				t.Errorf("%s: enrol: %v", h.Name, err)
			}
		}()
	}
	wg.Wait()
	if wins != 1 || refused != 15 {
		t.Fatalf("%s: %d enrolments won, %d refused; want 1 and 15", h.Name, wins, refused)
	}
	must(t, s1.AddEnrolmentCode(ctx, store.EnrolmentCode{Hash: "h2", UserID: "u_a", Created: serverT0, Expires: serverT0.Add(15 * time.Minute), CreatedBy: "operator"}))
	if _, _, err := s1.Enrol(ctx, "h2", serverT0.Add(15*time.Minute), store.ServerDevice{ID: "d_late", Created: serverT0}); !errors.Is(err, store.ErrCodeRefused) {
		t.Fatalf("%s: a code at its expiry: %v", h.Name, err)
	}
	if _, _, err := s1.Enrol(ctx, "nope", serverT0, store.ServerDevice{ID: "d_x", Created: serverT0}); !errors.Is(err, store.ErrCodeRefused) {
		t.Fatalf("%s: an unknown code: %v", h.Name, err)
	}
	if ds, _ := s2.Devices(ctx, "u_a"); len(ds) != 1 {
		t.Fatalf("%s: %d devices, want 1", h.Name, len(ds))
	}
}

// ServerTokenIDsOnceAndRateWindows: a device token's jti is admitted once
// (through any handle), forgotten once purged after it expired; each
// window counts a device's requests from 1; last seen is kept.
func ServerTokenIDsOnceAndRateWindows(t *testing.T, h Harness) {
	ctx := context.Background()
	b, addr := open(t, h)
	s1, s2 := serverState(t, h, b), serverState(t, h, reopen(t, h, addr))
	addServerUser(t, s1, "u_a", "alice")
	must(t, s1.AddEnrolmentCode(ctx, store.EnrolmentCode{Hash: "h", UserID: "u_a", Created: serverT0, Expires: serverT0.Add(time.Hour), CreatedBy: "operator"}))
	if _, _, err := s1.Enrol(ctx, "h", serverT0, store.ServerDevice{ID: "d_1", Name: "laptop", KID: "k", JWK: "{}", Created: serverT0}); err != nil {
		t.Fatal(err)
	}
	w := serverT0.Truncate(time.Minute)
	for i := 1; i <= 3; i++ {
		s := s1
		if i == 2 {
			s = s2
		}
		n, err := s.Admit(ctx, "d_1", "jti-"+string(rune('0'+i)), serverT0.Add(time.Minute), w, serverT0)
		if err != nil || n != i {
			t.Fatalf("%s: request %d: count %d, %v", h.Name, i, n, err)
		}
	}
	if _, err := s2.Admit(ctx, "d_1", "jti-1", serverT0.Add(time.Minute), w, serverT0); !errors.Is(err, store.ErrReplay) {
		t.Fatalf("%s: a jti used before, through another handle: %v", h.Name, err)
	}
	if n, _ := s1.Admit(ctx, "d_1", "jti-9", serverT0.Add(time.Minute), w.Add(time.Minute), serverT0); n != 1 {
		t.Fatalf("%s: a new window counts from 1, got %d", h.Name, n)
	}
	if d, _ := s1.Device(ctx, "d_1"); d.LastSeen == nil {
		t.Fatalf("%s: last seen not kept", h.Name)
	}
	must(t, s1.PurgeServer(ctx, serverT0.Add(2*time.Minute), w.Add(time.Minute)))
	if _, err := s1.Admit(ctx, "d_1", "jti-1", serverT0.Add(time.Hour), w, serverT0); err != nil {
		t.Fatalf("%s: an expired jti, purged, is forgotten: %v", h.Name, err)
	}
	must(t, s1.ServerReady(ctx))
}

// ServerDevicesBelongToTheirUser: a User cannot revoke another User's
// device (not found, as a device that does not exist, and left as it
// was); names are unique; removing a User removes their devices.
func ServerDevicesBelongToTheirUser(t *testing.T, h Harness) {
	ctx := context.Background()
	b, _ := open(t, h)
	s := serverState(t, h, b)
	addServerUser(t, s, "u_a", "alice")
	addServerUser(t, s, "u_b", "bob")
	if err := s.AddServerUser(ctx, store.ServerUser{ID: "u_c", Name: "alice", Created: serverT0}); !errors.Is(err, store.ErrNameTaken) {
		t.Fatalf("%s: a second alice: %v", h.Name, err)
	}
	if u, err := s.ServerUser(ctx, "bob"); err != nil || u.ID != "u_b" {
		t.Fatalf("%s: by name: %+v %v", h.Name, u, err)
	}
	if u, err := s.ServerUser(ctx, "u_b"); err != nil || u.Name != "bob" {
		t.Fatalf("%s: by id: %+v %v", h.Name, u, err)
	}
	must(t, s.AddEnrolmentCode(ctx, store.EnrolmentCode{Hash: "h", UserID: "u_a", Created: serverT0, Expires: serverT0.Add(time.Hour), CreatedBy: "operator"}))
	if _, _, err := s.Enrol(ctx, "h", serverT0, store.ServerDevice{ID: "d_1", Name: "laptop", KID: "k", JWK: "{}", Created: serverT0}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RevokeDevice(ctx, "u_b", "d_1", serverT0); !errors.Is(err, store.ErrServerNotFound) {
		t.Fatalf("%s: bob revoking alice's device: %v", h.Name, err)
	}
	if d, _ := s.Device(ctx, "d_1"); d.Revoked != nil {
		t.Fatalf("%s: bob revoked alice's device", h.Name)
	}
	if ds, _ := s.Devices(ctx, "u_b"); len(ds) != 0 {
		t.Fatalf("%s: bob lists %+v", h.Name, ds)
	}
	d, err := s.RevokeDevice(ctx, "u_a", "d_1", serverT0.Add(time.Second))
	if err != nil || d.Revoked == nil {
		t.Fatalf("%s: revoke: %+v %v", h.Name, d, err)
	}
	must(t, s.RemoveServerUser(ctx, "u_a"))
	if _, err := s.Device(ctx, "d_1"); !errors.Is(err, store.ErrServerNotFound) {
		t.Fatalf("%s: a removed User's device remains: %v", h.Name, err)
	}
	if err := s.RemoveServerUser(ctx, "u_a"); !errors.Is(err, store.ErrServerNotFound) {
		t.Fatalf("%s: removing twice: %v", h.Name, err)
	}
}

// ServerRegistrationsKeptReplacedRemoved: one registration per URL.
func ServerRegistrationsKeptReplacedRemoved(t *testing.T, h Harness) {
	ctx := context.Background()
	b, _ := open(t, h)
	s := serverState(t, h, b)
	must(t, s.PutRegistration(ctx, store.ServerRegistration{URL: "https://p.example", Audience: "a1", Added: serverT0}))
	must(t, s.PutRegistration(ctx, store.ServerRegistration{URL: "https://p.example", Audience: "a2", Added: serverT0}))
	rs, err := s.Registrations(ctx)
	if err != nil || len(rs) != 1 || rs[0].Audience != "a2" {
		t.Fatalf("%s: %+v %v", h.Name, rs, err)
	}
	if err := s.RemoveRegistration(ctx, "https://q.example"); !errors.Is(err, store.ErrServerNotFound) {
		t.Fatalf("%s: removing an unknown one: %v", h.Name, err)
	}
	must(t, s.RemoveRegistration(ctx, "https://p.example"))
}

// ServerLeaseAcquireRenewReleaseSteal: a lease is held by one holder
// until it expires (another, or the same holder again, is refused and
// told who holds it until when), renewed by its holder, released at once;
// an expired lease is taken over through another handle (as another
// replica would) with the next token, after which its old holder can
// neither renew nor release it; an expired lease no one took is still
// renewed; released and expired leases are purged after a day.
func ServerLeaseAcquireRenewReleaseSteal(t *testing.T, h Harness) {
	ctx := context.Background()
	b, addr := open(t, h)
	s1, s2 := serverState(t, h, b), serverState(t, h, reopen(t, h, addr))
	const name, ttl = "turn/u_a/m-1", 30 * time.Second
	for _, bad := range []struct {
		name, holder string
		ttl          time.Duration
	}{{"", "r1", ttl}, {name, "", ttl}, {name, "r1", 0}} {
		if _, err := s1.AcquireLease(ctx, bad.name, bad.holder, serverT0, bad.ttl); err == nil {
			t.Fatalf("%s: a lease %+v was taken", h.Name, bad)
		}
	}
	if _, ok, err := s1.LeaseOf(ctx, name); ok || err != nil {
		t.Fatalf("%s: a lease never taken: %v %v", h.Name, ok, err)
	}
	l1, err := s1.AcquireLease(ctx, name, "r1/a", serverT0, ttl)
	if err != nil || l1.Holder != "r1/a" || l1.Name != name || !l1.Expires.Equal(serverT0.Add(ttl)) || !l1.Acquired.Equal(serverT0) {
		t.Fatalf("%s: acquire: %+v %v", h.Name, l1, err)
	}
	for _, holder := range []string{"r2/a", "r1/a"} {
		held, err := s2.AcquireLease(ctx, name, holder, serverT0.Add(ttl-time.Nanosecond), ttl)
		if !errors.Is(err, store.ErrLeaseHeld) || held.Holder != "r1/a" || held.Token != l1.Token || !held.Expires.Equal(l1.Expires) {
			t.Fatalf("%s: %s acquiring a held lease: %+v %v", h.Name, holder, held, err)
		}
	}
	l1, err = s1.RenewLease(ctx, l1, serverT0.Add(20*time.Second), ttl)
	if err != nil || !l1.Expires.Equal(serverT0.Add(50*time.Second)) {
		t.Fatalf("%s: renew: %+v %v", h.Name, l1, err)
	}
	if _, err := s2.AcquireLease(ctx, name, "r2/a", serverT0.Add(40*time.Second), ttl); !errors.Is(err, store.ErrLeaseHeld) {
		t.Fatalf("%s: a renewed lease taken before its new expiry: %v", h.Name, err)
	}
	// Released: free at once, for the next holder with the next token.
	must(t, s1.ReleaseLease(ctx, l1))
	if err := s1.ReleaseLease(ctx, l1); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("%s: released twice: %v", h.Name, err)
	}
	if got, ok, _ := s2.LeaseOf(ctx, name); !ok || got.Holder != "" {
		t.Fatalf("%s: a released lease: %+v", h.Name, got)
	}
	l2, err := s2.AcquireLease(ctx, name, "r2/b", serverT0.Add(41*time.Second), ttl)
	if err != nil || l2.Token != l1.Token+1 {
		t.Fatalf("%s: acquire after release: %+v %v (before: token %d)", h.Name, l2, err, l1.Token)
	}
	if _, err := s1.RenewLease(ctx, l1, serverT0.Add(42*time.Second), ttl); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("%s: the released holder renewed: %v", h.Name, err)
	}
	// Expired (its holder died): taken over at its expiry, not before.
	if _, err := s1.AcquireLease(ctx, name, "r1/c", l2.Expires.Add(-time.Nanosecond), ttl); !errors.Is(err, store.ErrLeaseHeld) {
		t.Fatalf("%s: taken a nanosecond before expiry: %v", h.Name, err)
	}
	l3, err := s1.AcquireLease(ctx, name, "r1/c", l2.Expires, ttl)
	if err != nil || l3.Token != l2.Token+1 || l3.Holder != "r1/c" {
		t.Fatalf("%s: taking over an expired lease: %+v %v", h.Name, l3, err)
	}
	if _, err := s2.RenewLease(ctx, l2, l2.Expires.Add(time.Second), ttl); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("%s: the old holder renewed a lease taken over: %v", h.Name, err)
	}
	if err := s2.ReleaseLease(ctx, l2); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("%s: the old holder released a lease taken over: %v", h.Name, err)
	}
	if got, _, _ := s2.LeaseOf(ctx, name); got.Holder != "r1/c" || got.Token != l3.Token {
		t.Fatalf("%s: the old holder's calls changed the new holder's lease: %+v", h.Name, got)
	}
	// Expired but taken by no one: its holder may still renew it.
	l3, err = s1.RenewLease(ctx, l3, l3.Expires.Add(5*time.Second), ttl)
	if err != nil || l3.Token != l2.Token+1 {
		t.Fatalf("%s: renewing an expired lease no one took: %+v %v", h.Name, l3, err)
	}
	// Other names are other leases.
	if _, err := s2.AcquireLease(ctx, "turn/u_a/m-2", "r2/d", l3.Acquired, ttl); err != nil {
		t.Fatalf("%s: another name: %v", h.Name, err)
	}
	// Purged a day after it expired, not before.
	must(t, s1.PurgeServer(ctx, l3.Expires.Add(23*time.Hour), serverT0))
	if _, ok, _ := s1.LeaseOf(ctx, name); !ok {
		t.Fatalf("%s: a lease purged less than a day after it expired", h.Name)
	}
	must(t, s1.PurgeServer(ctx, l3.Expires.Add(25*time.Hour), serverT0))
	if _, ok, _ := s1.LeaseOf(ctx, name); ok {
		t.Fatalf("%s: a lease expired for a day is kept", h.Name)
	}
}

// leaseRounds is how many times each child process takes the lease in
// ServerLeaseOneHolderAcrossProcesses.
const leaseRounds = 12

// ServerLeaseOneHolderAcrossProcesses: four processes take one lease in
// turn, each round a read-modify-write of one value that nothing else
// protects (a User's note) while holding it: no update is lost, so no two
// processes ever held it at once; and every acquisition had its own token.
func ServerLeaseOneHolderAcrossProcesses(t *testing.T, h Harness) {
	const procs = 4
	b, addr := open(t, h)
	runChildren(t, "lease", addr, procs, func(i int) []string {
		return []string{writerEnv + "=" + fmt.Sprint("p", i)}
	})
	ctx := context.Background()
	v, _, err := b.ForUser(Alice).Note(ctx, "lease-count")
	must(t, err)
	if v != strconv.Itoa(procs*leaseRounds) {
		t.Fatalf("%s: the count kept under the lease is %q after %d processes added %d each: updates were lost, so two held it at once", h.Name, v, procs, leaseRounds)
	}
	l, ok, err := serverState(t, h, b).LeaseOf(ctx, "storetest/lease")
	if err != nil || !ok || l.Token != procs*leaseRounds || l.Holder != "" {
		t.Fatalf("%s: after %d acquisitions, released: %+v %v %v", h.Name, procs*leaseRounds, l, ok, err)
	}
}

// leaseChild is one process of ServerLeaseOneHolderAcrossProcesses.
func leaseChild(ctx context.Context, b store.Backend, who string) error {
	s, ok := b.(store.ServerState)
	if !ok {
		return fmt.Errorf("%T does not implement store.ServerState", b)
	}
	db := b.ForUser(Alice)
	for round := 0; round < leaseRounds; round++ {
		holder := fmt.Sprintf("%s/%d", who, round)
		var l store.Lease
		deadline := time.Now().Add(time.Minute)
		for {
			var err error
			l, err = s.AcquireLease(ctx, "storetest/lease", holder, time.Now(), 30*time.Second)
			if err == nil {
				break
			}
			if !errors.Is(err, store.ErrLeaseHeld) {
				return err
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("the lease was not free once in a minute (held: %+v)", l)
			}
			time.Sleep(time.Millisecond)
		}
		v, _, err := db.Note(ctx, "lease-count")
		if err != nil {
			return err
		}
		n, _ := strconv.Atoi(v)
		time.Sleep(2 * time.Millisecond) // widen the window a second holder would write in
		if err := db.SetNote(ctx, "lease-count", strconv.Itoa(n+1)); err != nil {
			return err
		}
		if err := s.ReleaseLease(ctx, l); err != nil {
			return fmt.Errorf("releasing %+v: %w", l, err)
		}
	}
	return nil
}

// ServerSharedValueFirstWins: of processes proposing values for one key
// at once (through two handles), every one is told the same value, the
// first recorded, and it stays.
func ServerSharedValueFirstWins(t *testing.T, h Harness) {
	ctx := context.Background()
	b, addr := open(t, h)
	s1, s2 := serverState(t, h, b), serverState(t, h, reopen(t, h, addr))
	var wg sync.WaitGroup
	got := make([]string, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := s1
			if i%2 == 1 {
				s = s2
			}
			v, err := s.SharedValue(ctx, "sub-check", fmt.Sprint("value-", i), serverT0)
			if err != nil {
				t.Errorf("%s: %v", h.Name, err)
			}
			got[i] = v
		}()
	}
	wg.Wait()
	for _, v := range got {
		if v != got[0] || !strings.HasPrefix(v, "value-") {
			t.Fatalf("%s: processes were told %q: not one value", h.Name, got)
		}
	}
	if v, err := s2.SharedValue(ctx, "sub-check", "later", serverT0.Add(time.Hour)); err != nil || v != got[0] {
		t.Fatalf("%s: a later proposal: %q %v (first %q)", h.Name, v, err, got[0])
	}
	if v, _ := s1.SharedValue(ctx, "issuer", "https://pa.example", serverT0); v != "https://pa.example" {
		t.Fatalf("%s: another key: %q", h.Name, v)
	}
}
