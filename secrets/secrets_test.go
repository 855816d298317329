package secrets

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/zalando/go-keyring"
)

func TestFileStore_RoundTripAndMode(t *testing.T) {
	dir := t.TempDir()
	s, err := Open("file", dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get("p/x"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("want ErrNotFound, got %v", err)
	}
	if err := s.Set("p/x", "v1"); err != nil {
		t.Fatal(err)
	}
	if v, err := s.Get("p/x"); v != "v1" || err != nil {
		t.Fatalf("Get = %q, %v", v, err)
	}
	fi, err := os.Stat(s.(*fileStore).Path())
	if err != nil || !isPrivate(fi) {
		t.Fatalf("secrets file mode = %v (%v), want 0600", fi.Mode(), err)
	}
	if err := s.Set("p/y", "v2"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete("p/x"); err != nil {
		t.Fatal(err)
	}
	// A delete rewrites the file: still 0600, never world-readable.
	fi, err = os.Stat(s.(*fileStore).Path())
	if err != nil || !isPrivate(fi) {
		t.Fatalf("secrets file mode after a delete = %v (%v), want 0600", fi.Mode(), err)
	}
	if v, err := s.Get("p/y"); v != "v2" || err != nil {
		t.Fatalf("the other secret after a delete: %q, %v", v, err)
	}
	if err := s.Delete("p/x"); err != nil {
		t.Fatalf("deleting an absent key: %v", err)
	}
	if _, err := s.Get("p/x"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
}

func TestOpen_UnknownBackend(t *testing.T) {
	if _, err := Open("vault", "", 0); err == nil || !strings.Contains(err.Error(), "PACT_KEYRING") {
		t.Fatalf("got %v", err)
	}
}

func TestOSStore_MockRoundTrip(t *testing.T) {
	keyring.MockInit()
	s, _ := Open("os", "", 0)
	if err := s.Set("p/key/k1", "secret"); err != nil {
		t.Fatal(err)
	}
	if v, err := s.Get("p/key/k1"); v != "secret" || err != nil {
		t.Fatalf("Get = %q, %v", v, err)
	}
	if _, err := s.Get("p/none"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("want ErrNotFound, got %v", err)
	}
	if err := s.Set("p/big", strings.Repeat("x", MaxTotal+1)); err == nil {
		t.Fatal("oversize value accepted")
	}
}

func TestOSStore_FailureNamesFileBackend(t *testing.T) {
	keyring.MockInitWithError(errors.New("org.freedesktop.DBus.Error.ServiceUnknown: The name org.freedesktop.secrets was not provided"))
	defer keyring.MockInit()
	s, _ := Open("os", "", 0)
	_, err := s.Get("p/key/k1")
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "PACT_KEYRING=file") {
		t.Fatalf("want ErrUnavailable naming PACT_KEYRING=file, got %v", err)
	}
}

// TestOSStore_RealSecretService stores and reads a secret through the real
// OS keyring: the Secret Service on Linux, the keychain on macOS, the
// Credential Manager on Windows (go-keyring picks it by platform). The
// switch is PACT_TEST_REAL_KEYRING=1: .ci/run sets it after starting
// gnome-keyring inside dbus-run-session, and .github/workflows/ci.yml on
// macOS (with an unlocked keychain of its own) and Windows; elsewhere the
// test is skipped.
func TestOSStore_RealSecretService(t *testing.T) {
	if os.Getenv("PACT_TEST_REAL_KEYRING") != "1" {
		t.Skip("set PACT_TEST_REAL_KEYRING=1 with an unlocked OS keyring (Secret Service, keychain, Credential Manager) to run")
	}
	s, _ := Open("os", "", 0)
	key := "pact-test/real-keyring"
	defer s.Delete(key)
	if err := s.Set(key, "value-from-test"); err != nil {
		t.Fatal(err)
	}
	if v, err := s.Get(key); err != nil || v != "value-from-test" {
		t.Fatalf("Get = %q, %v", v, err)
	}
	if err := s.Delete(key); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(key); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
}

// A delete is the first write of a fresh file keyring (logout before any
// login, a retire in a new profile): the file it creates is 0600 too.
func TestFileStore_DeleteFirstCreatesAPrivateFile(t *testing.T) {
	dir := t.TempDir()
	s, err := Open("file", dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Delete("p/none"); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(s.(*fileStore).Path())
	if err != nil {
		t.Fatalf("the delete wrote no file: %v", err)
	}
	if !isPrivate(fi) {
		t.Fatalf("secrets file created by a delete has mode %v, want 0600", fi.Mode().Perm())
	}
	if err := s.Set("p/x", "v"); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(s.(*fileStore).Path()); err != nil || !isPrivate(fi) {
		t.Fatalf("after a set: %v, %v", fi.Mode(), err)
	}
}

// Trust finding 7: every backend has the same limit, MaxTotal: a value the
// file keyring takes, the OS keyring takes too, and one over it is refused
// by both with ErrTooLarge before anything is written.
func TestMaxTotal_SameLimitInEveryBackend(t *testing.T) {
	keyring.MockInit()
	osS, _ := Open("os", "", 0)
	fileS, _ := Open("file", t.TempDir(), 0)
	for _, s := range []Store{osS, fileS} {
		if err := s.Set("p/fits", strings.Repeat("y", MaxTotal)); err != nil {
			t.Errorf("%s: a value of exactly MaxTotal refused: %v", s.Kind(), err)
		}
		err := s.Set("p/over", strings.Repeat("x", MaxTotal+1))
		if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "64 KiB") {
			t.Errorf("%s: oversize value: %v, want ErrTooLarge", s.Kind(), err)
		}
		if _, err := s.Get("p/over"); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: the oversize value was written: %v", s.Kind(), err)
		}
	}
}
