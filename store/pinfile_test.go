package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func TestPinFile_RoundTripAndConcurrentWriters(t *testing.T) {
	f := PinFile{Path: filepath.Join(t.TempDir(), "pins.json")}
	ctx := context.Background()
	if _, ok, err := f.Pin(ctx, "b"); ok || err != nil {
		t.Fatalf("empty store: %v %v", ok, err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f.SetPin(ctx, Pin{Brand: fmt.Sprint("b", i), InterfaceURL: "https://p/a2a", PinnedAt: time.Unix(int64(i), 0).UTC()}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for i := range 8 {
		p, ok, err := f.Pin(ctx, fmt.Sprint("b", i))
		if err != nil || !ok || p.InterfaceURL != "https://p/a2a" || !p.PinnedAt.Equal(time.Unix(int64(i), 0)) {
			t.Fatalf("pin b%d: %+v %v %v (a concurrent writer lost it)", i, p, ok, err)
		}
	}
	if fi, err := os.Stat(f.Path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("pins file mode %v, %v", fi.Mode(), err)
	}
	if err := f.SetPin(ctx, Pin{}); err == nil {
		t.Fatal("a pin without a brand was stored")
	}
}

func TestPinFile_DamagedFileIsAnErrorNotAFreshStart(t *testing.T) {
	f := PinFile{Path: filepath.Join(t.TempDir(), "pins.json")}
	os.WriteFile(f.Path, []byte("{not json"), 0o600)
	if _, _, err := f.Pin(context.Background(), "b"); err == nil {
		t.Fatal("a damaged pins file read as empty: every Brand would be pinned afresh")
	}
	if err := f.SetPin(context.Background(), Pin{Brand: "b"}); err == nil {
		t.Fatal("a damaged pins file was overwritten")
	}
}
