//go:build unix

package conversation

import (
	"context"
	"errors"
	"io/fs"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pact-cli/pact/demoprovider"
	"github.com/pact-cli/pact/store"
)

// PACT §5.6, without root: on a PACT_HOME this user may only read (its
// folders and files without write permission, as a copy from a backup
// may be), a message under the User's delegation is refused before it is
// sent, and the Brand's agent never runs; an identity-only message still
// goes. (TestSection5_6_DelegatedSendRefusedWhenTheReceiptCannotBeKept is
// the same with a read-only mount, which needs root; root ignores
// permissions, so this one runs for everyone else.)
func TestSection5_6_DelegatedSendRefusedOnAHomeThatCanOnlyBeRead(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may write whatever the permissions say; the read-only mount test covers root")
	}
	dir := t.TempDir()
	e := newEnvIn(t, demoprovider.Config{}, dir)
	s := e.open(e.brands[0].SiteURL)
	jar, _ := cookiejar.New(nil)
	e.login(s, jar, "orders:read")
	e.send(s, "show my orders")
	e.send(e.open(e.brands[1].SiteURL), "hello") // identity only
	e.opts.Backend.Close()

	// Take write permission away from every folder and file under the home,
	// and give it back for t.TempDir's clean-up.
	var paths []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			paths = append(paths, p)
		}
		return nil
	})
	modes := map[string]fs.FileMode{}
	for _, p := range paths {
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&fs.ModeSymlink != 0 {
			continue
		}
		modes[p] = fi.Mode().Perm()
		if err := os.Chmod(p, fi.Mode().Perm()&^0o222); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for p, m := range modes {
			os.Chmod(p, m)
		}
	})
	if f, err := os.OpenFile(filepath.Join(dir, "probe"), os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
		f.Close()
		t.Skip("this user may still write in a folder without write permission")
	}

	e.opts = NewOptions(e.p, e.hc)
	ro := e.open(e.brands[0].SiteURL)
	runs := e.srv.AgentRuns()
	_, err := ro.Send(context.Background(), "show my orders")
	if !errors.Is(err, ErrProofNotKept) || !errors.Is(err, store.ErrCannotWrite) || !strings.Contains(err.Error(), "nothing was sent") {
		t.Fatalf("a delegated send on a home that can only be read: %v", err)
	}
	if n := e.srv.AgentRuns(); n != runs {
		t.Fatalf("the Brand's agent ran %d times for a refused send", n-runs)
	}
	other := e.open(e.brands[1].SiteURL)
	if _, err := other.Send(context.Background(), "hello"); errors.Is(err, ErrProofNotKept) {
		t.Fatalf("an identity-only send was refused: %v", err)
	}
	if n := e.srv.AgentRuns(); n != runs+1 {
		t.Fatalf("the identity-only send did not reach the Brand (%d runs)", n-runs)
	}
}
