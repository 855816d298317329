package store

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func openServerTest(t *testing.T) *ServerDB {
	t.Helper()
	s, err := OpenServerDB(context.Background(), filepath.Join(t.TempDir(), "serve.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

var st0 = time.Unix(1_790_000_000, 0).UTC()

func seedUser(t *testing.T, s *ServerDB, id, name string) {
	t.Helper()
	if err := s.AddUser(context.Background(), ServerUser{ID: id, Name: name, Created: st0}); err != nil {
		t.Fatal(err)
	}
}

// TestServerDB_EnrolmentCodeIsUsedOnceEvenWhenRaced: of many enrolments
// with one code at the same moment exactly one wins; an expired code and an
// unknown one are refused alike.
func TestServerDB_EnrolmentCodeIsUsedOnceEvenWhenRaced(t *testing.T) {
	ctx := context.Background()
	s := openServerTest(t)
	seedUser(t, s, "u_a", "alice")
	if err := s.AddEnrolmentCode(ctx, EnrolmentCode{Hash: "h1", UserID: "u_a", Created: st0, Expires: st0.Add(15 * time.Minute), CreatedBy: "operator"}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins, refused := 0, 0
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			u, _, err := s.Enrol(ctx, "h1", st0.Add(time.Minute), ServerDevice{ID: "d_" + string(rune('a'+i)), Name: "x", KID: "k", JWK: "{}", Created: st0})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil && u.Name == "alice":
				wins++
			case errors.Is(err, ErrCodeRefused):
				refused++
			default:
				t.Errorf("enrol: %v", err)
			}
		}()
	}
	wg.Wait()
	if wins != 1 || refused != 7 {
		t.Fatalf("%d enrolments won, %d refused; want 1 and 7", wins, refused)
	}
	s.AddEnrolmentCode(ctx, EnrolmentCode{Hash: "h2", UserID: "u_a", Created: st0, Expires: st0.Add(15 * time.Minute), CreatedBy: "operator"})
	if _, _, err := s.Enrol(ctx, "h2", st0.Add(15*time.Minute), ServerDevice{ID: "d_late", Created: st0}); !errors.Is(err, ErrCodeRefused) {
		t.Fatalf("expired code: %v", err)
	}
	if _, _, err := s.Enrol(ctx, "nope", st0, ServerDevice{ID: "d_x", Created: st0}); !errors.Is(err, ErrCodeRefused) {
		t.Fatalf("unknown code: %v", err)
	}
	if ds, _ := s.Devices(ctx, "u_a"); len(ds) != 1 {
		t.Fatalf("%d devices, want 1", len(ds))
	}
}

func TestServerDB_ReplayRateAndRevocation(t *testing.T) {
	ctx := context.Background()
	s := openServerTest(t)
	seedUser(t, s, "u_a", "alice")
	seedUser(t, s, "u_b", "bob")
	if err := s.AddUser(ctx, ServerUser{ID: "u_c", Name: "alice", Created: st0}); !errors.Is(err, ErrNameTaken) {
		t.Fatalf("duplicate name: %v", err)
	}
	s.AddEnrolmentCode(ctx, EnrolmentCode{Hash: "h", UserID: "u_a", Created: st0, Expires: st0.Add(time.Hour), CreatedBy: "operator"})
	if _, _, err := s.Enrol(ctx, "h", st0, ServerDevice{ID: "d_1", Name: "laptop", KID: "k", JWK: "{}", Created: st0}); err != nil {
		t.Fatal(err)
	}
	w := st0.Truncate(time.Minute)
	for i := 1; i <= 3; i++ {
		n, err := s.Admit(ctx, "d_1", "jti-"+string(rune('0'+i)), st0.Add(time.Minute), w, st0)
		if err != nil || n != i {
			t.Fatalf("admit %d: count %d, %v", i, n, err)
		}
	}
	if _, err := s.Admit(ctx, "d_1", "jti-1", st0.Add(time.Minute), w, st0); !errors.Is(err, ErrReplay) {
		t.Fatalf("replayed jti: %v", err)
	}
	if n, _ := s.Admit(ctx, "d_1", "jti-9", st0.Add(time.Minute), w.Add(time.Minute), st0); n != 1 {
		t.Fatalf("a new window counts from 1, got %d", n)
	}
	if d, _ := s.Device(ctx, "d_1"); d.LastSeen == nil {
		t.Fatal("last seen not recorded")
	}
	// Another User's device is not found, as a device that does not exist.
	if _, err := s.RevokeDevice(ctx, "u_b", "d_1", st0); !errors.Is(err, ErrServerNotFound) {
		t.Fatalf("revoking another User's device: %v", err)
	}
	if d, _ := s.Device(ctx, "d_1"); d.Revoked != nil {
		t.Fatal("another User revoked the device")
	}
	d, err := s.RevokeDevice(ctx, "u_a", "d_1", st0.Add(time.Second))
	if err != nil || d.Revoked == nil {
		t.Fatalf("revoke: %+v %v", d, err)
	}
	if err := s.Purge(ctx, st0.Add(2*time.Minute), w.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Admit(ctx, "d_1", "jti-1", st0.Add(time.Hour), w, st0); err != nil {
		t.Fatalf("a purged jti (expired) is forgotten: %v", err)
	}
	if err := s.RemoveUser(ctx, "u_a"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Device(ctx, "d_1"); !errors.Is(err, ErrServerNotFound) {
		t.Fatalf("a removed User's device remains: %v", err)
	}
	if err := s.Ready(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestServerDB_Registrations(t *testing.T) {
	ctx := context.Background()
	s := openServerTest(t)
	s.PutRegistration(ctx, ServerRegistration{URL: "https://p.example", Audience: "a1", Added: st0})
	s.PutRegistration(ctx, ServerRegistration{URL: "https://p.example", Audience: "a2", Added: st0})
	rs, _ := s.Registrations(ctx)
	if len(rs) != 1 || rs[0].Audience != "a2" {
		t.Fatalf("%+v", rs)
	}
	if err := s.RemoveRegistration(ctx, "https://q.example"); !errors.Is(err, ErrServerNotFound) {
		t.Fatal(err)
	}
	if err := s.RemoveRegistration(ctx, "https://p.example"); err != nil {
		t.Fatal(err)
	}
}
