package e2e

import (
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/pact-cli/pact/demoprovider"
)

// `pact send` on a full disk: PACT_HOME on a 1 MiB tmpfs, messages of
// 16 KB until a send fails. The failure says the disk is full and exits
// non-zero; the database still passes PRAGMA integrity_check and holds
// every turn of every send that succeeded; after room is made (the tmpfs
// grown), sending works again. Mounting needs root (CI runs as root);
// elsewhere it is skipped.
func TestDurability_FullDiskFailsCleanlyAndKeepsWhatWasThere(t *testing.T) {
	t.Parallel()
	d := newDemoEnv(t, demoprovider.Config{}, nil)
	small := t.TempDir()
	if err := syscall.Mount("tmpfs", small, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("cannot mount a small tmpfs here (%v); needs root", err)
	}
	t.Cleanup(func() { syscall.Unmount(small, syscall.MNT_DETACH) })
	if out, err := exec.Command("cp", "-a", d.home+"/.", small).CombinedOutput(); err != nil {
		t.Fatalf("copying PACT_HOME: %v\n%s", err, out)
	}
	d.home = small
	text := strings.Repeat("a long message about order A-88213 ", 460) // ~16 KB
	stored := 0
	var failed result
	for i := 0; i < 200; i++ {
		r := d.run("send", d.brand.SiteURL, fmt.Sprint(i, text), "--json")
		if r.code != 0 {
			failed = r
			break
		}
		stored++
	}
	if failed.code == 0 {
		t.Fatal("200 messages of 16 KB fitted in 1 MiB")
	}
	if !strings.Contains(failed.stdout+failed.stderr, "full") {
		t.Errorf("the failure does not say the disk is full (exit %d):\n%s%s", failed.code, failed.stdout, failed.stderr)
	}
	// Make room, then check what is there and that pact works again.
	if err := syscall.Mount("tmpfs", small, "tmpfs", syscall.MS_REMOUNT, "size=8m"); err != nil {
		t.Fatalf("growing the tmpfs: %v", err)
	}
	all := d.loadAll(t) // integrity_check included
	turns := 0
	for _, ts := range all {
		for _, tu := range ts {
			if tu.Role == "user" && strings.HasSuffix(tu.Text, text) {
				turns++
			}
		}
	}
	if turns != stored {
		t.Fatalf("%d messages stored, %d sends had succeeded", turns, stored)
	}
	if r := d.run("send", d.brand.SiteURL, "still there?", "--json"); r.code != 0 {
		t.Fatalf("a send after making room: exit %d\n%s", r.code, r.stderr)
	}
	t.Logf("%d sends fitted; the next one failed with: %s", stored, strings.TrimSpace(failed.stdout+failed.stderr))
}
