//go:build unix

package store

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// holdEnv names the data folder a helper process (this test binary run
// again) opens the database of profile "p" in, and holds until its stdin
// closes.
const holdEnv = "PACT_STORE_TEST_HOLD"

// A restore while another pact process has the database open (a chat,
// `pact mcp`) is refused and changes nothing: that process would go on
// writing to the database kept aside, and its turns and receipts would be
// missing from the restored one. Once it ends, the restore goes through.
func TestRestore_RefusedWhileAnotherProcessHasTheDatabaseOpen(t *testing.T) {
	if dir := os.Getenv(holdEnv); dir != "" {
		db := ProfileDB(Dirs{Config: filepath.Join(dir, "config"), Data: filepath.Join(dir, "data")}, "p")
		if _, err := local(db).ReceiptCount(context.Background()); err != nil {
			t.Fatal(err)
		}
		os.Stdout.WriteString("open\n")
		bufio.NewReader(os.Stdin).ReadString('\n') // until the parent closes it
		db.Close()
		return
	}
	home := t.TempDir()
	dirs := Dirs{Config: filepath.Join(home, "config"), Data: filepath.Join(home, "data")}
	ctx := context.Background()
	db := ProfileDB(dirs, "p")
	conv := Conversation{Brand: "card", InterfaceURL: "iface", ContextID: "c1", LastMessageAt: time.Now()}
	if err := local(db).AppendTurns(ctx, conv, Turn{MessageID: "m1", Role: "user", Text: "hello", At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	backup := filepath.Join(t.TempDir(), "backup.db")
	if _, err := db.Backup(ctx, backup, false); err != nil {
		t.Fatal(err)
	}
	db.Close()

	cmd := exec.Command(os.Args[0], "-test.run=^TestRestore_RefusedWhileAnotherProcessHasTheDatabaseOpen$")
	cmd.Env = append(os.Environ(), holdEnv+"="+home)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "open\n" {
		t.Fatalf("helper: %q %v", line, err)
	}
	_, err := Restore(ctx, dirs, "p", backup, RestoreChecks{})
	if !errors.Is(err, ErrInUse) {
		t.Fatalf("restore while another process has the database open: %v, want ErrInUse", err)
	}
	if m, _ := filepath.Glob(dirs.DBPath("p") + ".before-restore-*"); len(m) != 0 {
		t.Fatalf("a refused restore moved the database aside: %v", m)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper: %v", err)
	}
	if _, err := Restore(ctx, dirs, "p", backup, RestoreChecks{}); err != nil {
		t.Fatalf("restore once the other process ended: %v", err)
	}
}
