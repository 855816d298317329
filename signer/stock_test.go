package signer

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Tokens minted ahead by one process are taken by others, each at most
// once, even when many take at the same moment.
func TestSection3_2_StockHandsOutEachTokenOnce(t *testing.T) {
	s, _, _ := heldSigner(t, ES256)
	d := &StockDir{Dir: filepath.Join(t.TempDir(), "ahead")}
	if n, err := d.Fill(s, "aud", "sub", 16); err != nil || n != 16 {
		t.Fatalf("Fill = %d, %v", n, err)
	}
	var mu sync.Mutex
	seen := map[string]bool{}
	var wg sync.WaitGroup
	var got atomic.Int32
	for i := 0; i < 24; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tok, ok := d.Take(s.KID(), s.Issuer(), "aud", "sub")
			if !ok {
				return
			}
			got.Add(1)
			mu.Lock()
			defer mu.Unlock()
			if seen[tok] {
				t.Errorf("token handed out twice")
			}
			seen[tok] = true
		}()
	}
	wg.Wait()
	if got.Load() != 16 {
		t.Fatalf("%d tokens taken, want the 16 minted", got.Load())
	}
	for tok := range seen {
		if c := claimsOf(t, tok); c.Audience != "aud" || c.Subject != "sub" {
			t.Fatalf("claims %+v", c)
		}
	}
}

// A token is only taken for exactly its kid, iss, aud and sub, and only
// while younger than MaxAge; stale ones are removed.
func TestSection3_2_StockMatchesClaimsAndDropsStaleTokens(t *testing.T) {
	s, _, _ := heldSigner(t, ES256)
	now := time.Unix(1_800_000_000, 0)
	d := &StockDir{Dir: filepath.Join(t.TempDir(), "ahead"), Now: func() time.Time { return now }}
	if err := d.Put(s.KID(), s.Issuer(), "aud", "sub", now, "tok-1"); err != nil {
		t.Fatal(err)
	}
	for _, c := range [][4]string{{"other-kid", s.Issuer(), "aud", "sub"}, {s.KID(), "https://other", "aud", "sub"}, {s.KID(), s.Issuer(), "aud2", "sub"}, {s.KID(), s.Issuer(), "aud", "sub2"}} {
		if _, ok := d.Take(c[0], c[1], c[2], c[3]); ok {
			t.Fatalf("taken for %v", c)
		}
	}
	now = now.Add(StockMaxAge)
	if _, ok := d.Take(s.KID(), s.Issuer(), "aud", "sub"); ok {
		t.Fatal("a stale token was handed out")
	}
	if ents, _ := os.ReadDir(d.Dir); len(ents) != 0 {
		t.Fatalf("stale token left in the stock: %v", ents)
	}
}

// Files are 0600 in a 0700 folder.
func TestStockFilesArePrivate(t *testing.T) {
	d := &StockDir{Dir: filepath.Join(t.TempDir(), "ahead")}
	if err := d.Put("kid", "iss", "aud", "sub", time.Now(), "tok"); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(d.Dir); fi.Mode().Perm() != 0o700 {
		t.Errorf("folder mode %v", fi.Mode().Perm())
	}
	ents, _ := os.ReadDir(d.Dir)
	for _, e := range ents {
		if fi, _ := e.Info(); fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v", e.Name(), fi.Mode().Perm())
		}
	}
}

// Take asks for a refill when the stock runs low, and a Signer with a
// stock hands out the stocked token without signing.
func TestSection3_2_AheadTakesFromTheStockFirst(t *testing.T) {
	s, _, o := heldSigner(t, ES256)
	var refills atomic.Int32
	d := &StockDir{Dir: filepath.Join(t.TempDir(), "ahead"), Refill: func(kid, aud string) { refills.Add(1) }}
	if _, err := d.Fill(s, "aud", "sub", 1); err != nil {
		t.Fatal(err)
	}
	s.WithStock(d)
	before := o.calls.Load()
	tok, err := s.Ahead("aud", "sub").Token()
	if err != nil || tok == "" {
		t.Fatal(err)
	}
	if o.calls.Load() != before {
		t.Fatal("the key signed although a token was in the stock")
	}
	if refills.Load() != 1 {
		t.Fatalf("refills = %d, want 1 (the stock ran empty)", refills.Load())
	}
	// Empty: Ahead signs on the spot.
	if _, err := s.Ahead("aud", "sub").Token(); err != nil || o.calls.Load() == before {
		t.Fatalf("no token signed on the spot: %v", err)
	}
}

// A refill process keeps the stock topped up, deeper while tokens are
// taken quickly; it stops when another key becomes the active one, and
// on the first signature that fails.
func TestSection3_2_KeepFilledFollowsDemandAndStops(t *testing.T) {
	s, _, o := heldSigner(t, ES256)
	d := &StockDir{Dir: filepath.Join(t.TempDir(), "ahead")}
	rounds, most := 0, 0
	err := d.KeepFilled(s, "aud", "sub", 0, time.Hour, time.Hour, func() bool {
		rounds++
		if n := d.Count(s.KID(), s.Issuer(), "aud", "sub"); n > most {
			most = n
		}
		for i := 0; i < 12; i++ { // sends in a burst
			d.Take(s.KID(), s.Issuer(), "aud", "sub")
		}
		return rounds < 6
	})
	if err != nil {
		t.Fatal(err)
	}
	if most != StockBurstDepth {
		t.Fatalf("the stock held at most %d tokens during a burst, want it to grow to %d", most, StockBurstDepth)
	}

	// The key signs with another key now: the refill stops with the error.
	other, _ := Generate(ES256, 0)
	o.signWith = other
	d2 := &StockDir{Dir: filepath.Join(t.TempDir(), "ahead")}
	err = d2.KeepFilled(s, "aud", "sub", 0, time.Hour, time.Hour, func() bool { return true })
	if !errors.Is(err, ErrKeyMismatch) {
		t.Fatalf("KeepFilled = %v, want ErrKeyMismatch", err)
	}
	if n := d2.Count(s.KID(), s.Issuer(), "aud", "sub"); n != 0 {
		t.Fatalf("%d tokens stocked by a key that is not the published one", n)
	}
}
