package store

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyTree copies the fixture folder src into dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestImportFiles_PreviousRelease opens the profile of a state written by
// the previous release (testdata/v0-release: `pact demo` run by the file
// store): every conversation, turn, receipt (verified and rejected) and
// grant is in the database, the old files are kept aside in
// imported-before-db/, and opening again imports nothing twice.
func TestImportFiles_PreviousRelease(t *testing.T) {
	home := t.TempDir()
	copyTree(t, "testdata/v0-release", home)
	dirs := Dirs{Config: filepath.Join(home, "config"), Data: filepath.Join(home, "data")}
	dataDir := dirs.ProfileDataDir("demo")
	ctx := context.Background()
	// The pins file a build between the releases kept for all profiles.
	os.WriteFile(filepath.Join(dirs.Data, "pins.json"), []byte(`{"pins":{"https://b.example/.well-known/agent-card.json":`+
		`{"brand":"https://b.example/.well-known/agent-card.json","providerOrigin":"https://p.example","interfaceUrl":"https://p.example/a2a/1","keyThumbprint":"tp","pinnedAt":"2026-11-30T10:00:00Z"}}}`), 0o600)

	var idx struct {
		Current       map[string]string          `json:"current"`
		Conversations map[string]json.RawMessage `json:"conversations"`
	}
	b, _ := os.ReadFile(filepath.Join(dataDir, "conversations", "index.json"))
	json.Unmarshal(b, &idx)
	var rec struct {
		InterfaceURL string `json:"interfaceUrl"`
		ContextID    string `json:"contextId"`
		Turns        []struct {
			MessageID string `json:"messageId"`
			Text      string `json:"text"`
		} `json:"turns"`
	}
	for key := range idx.Conversations {
		b, _ := os.ReadFile(filepath.Join(dataDir, "conversations", key+".json"))
		json.Unmarshal(b, &rec)
	}
	if len(rec.Turns) == 0 {
		t.Fatal("fixture has no turns")
	}

	db := ProfileDB(dirs, "demo")
	defer db.Close()
	turns, err := local(db).Turns(ctx, rec.InterfaceURL, rec.ContextID)
	if err != nil || len(turns) != len(rec.Turns) {
		t.Fatalf("imported %d turns, the file had %d (%v)", len(turns), len(rec.Turns), err)
	}
	for i := range turns {
		if turns[i].MessageID != rec.Turns[i].MessageID || turns[i].Text != rec.Turns[i].Text {
			t.Fatalf("turn %d: %+v, file had %+v", i, turns[i], rec.Turns[i])
		}
	}
	for brand := range idx.Current {
		cur, ok, _ := local(db).CurrentConversation(ctx, brand)
		if !ok || cur.ContextID != rec.ContextID || cur.BrandName == "" {
			t.Fatalf("current conversation of %s not imported: %+v", brand, cur)
		}
	}
	verified, rejected := 0, 0
	local(db).EachReceipt(ctx, ReceiptFilter{Full: true}, func(r Receipt) error {
		if r.Verified {
			verified++
			if len(r.JWK) == 0 || r.JWKThumbprint == "" || r.Brand == "" || r.TS == "" {
				t.Errorf("verified receipt %s imported without its key or claims: %+v", r.ID, r)
			}
		} else {
			rejected++
			if len(r.Problems) == 0 {
				t.Errorf("rejected receipt %s imported without its problems", r.ID)
			}
		}
		return nil
	})
	if verified != 3 || rejected != 1 {
		t.Fatalf("imported %d verified and %d rejected receipts, want 3 and 1", verified, rejected)
	}
	g, ok, _ := local(db).Grant(ctx, "http://127.0.0.1:45477/a2a/01JEXAMPLECO")
	if !ok || !strings.Contains(string(g), "a2agrant_j0QN4ZmijOfy2TM23e2efg") || !strings.Contains(string(g), "metadataUrl") {
		t.Fatalf("grant not imported: %s", g)
	}
	report, _ := db.ImportReport(ctx)
	if !strings.Contains(report, `"problems":null`) && !strings.Contains(report, `"problems":[]`) {
		t.Errorf("import report: %s", report)
	}
	if p, ok, _ := local(db).Pin(ctx, "https://b.example/.well-known/agent-card.json"); !ok || p.KeyThumbprint != "tp" || p.PinnedAt.IsZero() {
		t.Errorf("pin not imported: %+v", p)
	}
	if _, err := os.Stat(filepath.Join(dirs.Data, "pins.json")); err != nil {
		t.Error("pins.json (shared by the profiles) was moved")
	}
	// The old files are kept aside, not deleted.
	for _, name := range []string{"conversations/index.json", "grants.json", "receipts/verified"} {
		if _, err := os.Stat(filepath.Join(dataDir, ImportedDir, name)); err != nil {
			t.Errorf("%s not kept aside: %v", name, err)
		}
		if _, err := os.Stat(filepath.Join(dataDir, name)); err == nil {
			t.Errorf("%s left in place", name)
		}
	}
	db.Close()
	// Opening again imports nothing twice, even if the files came back.
	copyTree(t, "testdata/v0-release", home)
	db2 := ProfileDB(dirs, "demo")
	defer db2.Close()
	if n, _ := local(db2).ReceiptCount(ctx); n != 4 {
		t.Fatalf("%d receipts after a second open, want 4", n)
	}
	if turns, _ := local(db2).Turns(ctx, rec.InterfaceURL, rec.ContextID); len(turns) != len(rec.Turns) {
		t.Fatalf("%d turns after a second open", len(turns))
	}
}

// TestImportFiles_FailureLeavesFilesInPlace: when the import cannot commit
// (the database cannot be written), the old files stay where they were
// and the next open tries again.
func TestImportFiles_FailureLeavesFilesInPlace(t *testing.T) {
	home := t.TempDir()
	copyTree(t, "testdata/v0-release", home)
	dirs := Dirs{Config: filepath.Join(home, "config"), Data: filepath.Join(home, "data")}
	dataDir := dirs.ProfileDataDir("demo")
	ctx := context.Background()
	// A damaged conversation file and an unreadable receipt are reported,
	// not fatal; a grants.json that is a folder makes nothing fail either.
	os.WriteFile(filepath.Join(dataDir, "conversations", "0000.json"), []byte("{torn"), 0o600)
	// Make the database path a folder: opening fails, nothing moves.
	os.MkdirAll(dirs.DBPath("demo"), 0o700)
	db := ProfileDB(dirs, "demo")
	if _, err := local(db).Turns(ctx, "x", "y"); err == nil {
		t.Fatal("opening a database that is a folder succeeded")
	}
	db.Close()
	if _, err := os.Stat(filepath.Join(dataDir, "conversations", "index.json")); err != nil {
		t.Fatal("the old files moved although nothing was imported")
	}
	os.Remove(dirs.DBPath("demo"))
	db = ProfileDB(dirs, "demo")
	defer db.Close()
	if n, err := local(db).ReceiptCount(ctx); err != nil || n != 4 {
		t.Fatalf("second try imported %d receipts (%v)", n, err)
	}
	report, _ := db.ImportReport(ctx)
	if !strings.Contains(report, "0000.json") {
		t.Errorf("the damaged file is not in the import report: %s", report)
	}
}

// TestImportFiles_LateFilesAreImportedAndSaid: files of the old layout
// written after the import (an earlier pact still running, a downgrade)
// are imported too (each item once, by its id) and said on stderr
// (TakeNotices), not only moved aside; a damaged file of the first import
// is said once too.
func TestImportFiles_LateFilesAreImportedAndSaid(t *testing.T) {
	home := t.TempDir()
	copyTree(t, "testdata/v0-release", home)
	dirs := Dirs{Config: filepath.Join(home, "config"), Data: filepath.Join(home, "data")}
	dataDir := dirs.ProfileDataDir("demo")
	ctx := context.Background()
	os.WriteFile(filepath.Join(dataDir, "conversations", "0000.json"), []byte("{torn"), 0o600)
	TakeNotices()
	db := ProfileDB(dirs, "demo")
	n0, err := local(db).ReceiptCount(ctx)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if n := TakeNotices(); len(n) != 1 || !strings.Contains(n[0], "0000.json") || !strings.Contains(n[0], ImportedDir) {
		t.Fatalf("notices after an import with a damaged file: %q", n)
	}
	// An earlier pact writes the old layout again: one more conversation
	// with two turns, and the receipts it archived (new ones and one the
	// database has).
	src := filepath.Join(dataDir, ImportedDir)
	copyTree(t, filepath.Join(src, "receipts"), filepath.Join(dataDir, "receipts"))
	os.MkdirAll(filepath.Join(dataDir, "conversations"), 0o700)
	os.WriteFile(filepath.Join(dataDir, "conversations", "late.json"), []byte(`{"brand":"https://b.example/.well-known/agent-card.json","interfaceUrl":"https://p.example/a2a/1","contextId":"ctx-late","state":"open","lastMessageAt":"2026-12-01T10:00:00Z",
		"turns":[{"messageId":"m1","role":"user","text":"late hello","at":"2026-12-01T10:00:00Z"},{"messageId":"m2","role":"agent","text":"late reply","at":"2026-12-01T10:00:01Z"}]}`), 0o600)
	for range 2 { // twice: the second open finds nothing new
		db = ProfileDB(dirs, "demo")
		turns, err := local(db).Turns(ctx, "https://p.example/a2a/1", "ctx-late")
		if err != nil || len(turns) != 2 || turns[1].Text != "late reply" {
			t.Fatalf("late turns = %+v, %v", turns, err)
		}
		if n, err := local(db).ReceiptCount(ctx); err != nil || n != n0 {
			t.Fatalf("receipts after the late import: %d, want %d (%v)", n, n0, err)
		}
		db.Close()
	}
	n := TakeNotices()
	if len(n) != 1 || !strings.Contains(n[0], "1 conversation (2 turns)") || !strings.Contains(n[0], "after this profile moved to its database") {
		t.Fatalf("notices after a late import: %q", n)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "conversations")); err == nil {
		t.Fatal("the late files were not moved aside")
	}
}
