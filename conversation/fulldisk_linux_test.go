package conversation

import (
	"context"
	"errors"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/pact-cli/pact/demoprovider"
)

// TestSection5_6_FullDiskAfterADelegatedSendKeepsTheProof: the Brand has
// acted, then saving fails (a full disk): Send returns the reply with a
// *SaveError, and the receipt's JWS, so the caller can still print the
// proof of the action. Mounting needs root (CI runs as root); elsewhere it
// is skipped.
func TestSection5_6_FullDiskAfterADelegatedSendKeepsTheProof(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=2m"); err != nil {
		t.Skipf("cannot mount a small tmpfs here (%v); needs root", err)
	}
	defer syscall.Unmount(dir, syscall.MNT_DETACH)
	e := newEnvIn(t, demoprovider.Config{}, dir)
	s := e.open(e.brands[0].SiteURL)
	jar, _ := cookiejar.New(nil)
	e.login(s, jar, "orders:read")
	e.send(s, "show my orders")
	// Fill the disk.
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			break
		}
	}
	f.Close()
	r, err := s.Send(context.Background(), "show my orders")
	var se *SaveError
	if !errors.As(err, &se) {
		t.Fatalf("send on a full disk: %v", err)
	}
	if r == nil || strings.TrimSpace(r.Text()) == "" {
		t.Fatalf("the reply is lost: %+v", r)
	}
	if r.Receipt == nil || r.Receipt.JWS == "" || strings.Count(r.Receipt.JWS, ".") != 2 {
		t.Fatalf("the receipt's JWS is lost: %+v", r.Receipt)
	}
}
