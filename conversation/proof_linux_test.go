package conversation

import (
	"context"
	"errors"
	"net/http/cookiejar"
	"strings"
	"syscall"
	"testing"

	"github.com/pact-cli/pact/demoprovider"
	"github.com/pact-cli/pact/store"
)

// PACT §5.6: on a PACT_HOME that can only be read, a message under the
// User's delegation is refused before it is sent (its receipt could not be
// kept): the Brand's agent never runs. An identity-only message still goes
// (no receipt is at stake). Mounting needs root (CI runs as root).
func TestSection5_6_DelegatedSendRefusedWhenTheReceiptCannotBeKept(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=8m"); err != nil {
		t.Skipf("cannot mount a small tmpfs here (%v); needs root", err)
	}
	defer syscall.Unmount(dir, syscall.MNT_DETACH)
	e := newEnvIn(t, demoprovider.Config{}, dir)
	s := e.open(e.brands[0].SiteURL)
	jar, _ := cookiejar.New(nil)
	e.login(s, jar, "orders:read")
	e.send(s, "show my orders")
	e.send(e.open(e.brands[1].SiteURL), "hello") // identity only
	e.opts.Backend.Close()                       // the WAL stays, as when pact exits
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		t.Skipf("cannot remount read-only: %v", err)
	}
	e.opts = NewOptions(e.p, e.hc)
	ro := e.open(e.brands[0].SiteURL)
	runs := e.srv.AgentRuns()
	_, err := ro.Send(context.Background(), "show my orders")
	if !errors.Is(err, ErrProofNotKept) || !errors.Is(err, store.ErrCannotWrite) || !strings.Contains(err.Error(), "nothing was sent") {
		t.Fatalf("a delegated send on a read-only home: %v", err)
	}
	if n := e.srv.AgentRuns(); n != runs {
		t.Fatalf("the Brand's agent ran %d times for a refused send", n-runs)
	}
	// The other Brand, no delegation: it goes (and saving says why it fails).
	other := e.open(e.brands[1].SiteURL)
	if _, err := other.Send(context.Background(), "hello"); errors.Is(err, ErrProofNotKept) {
		t.Fatalf("an identity-only send was refused: %v", err)
	}
	if n := e.srv.AgentRuns(); n != runs+1 {
		t.Fatalf("the identity-only send did not reach the Brand (%d runs)", n-runs)
	}
}
