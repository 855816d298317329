package storetest

import (
	"context"
	"errors"
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
