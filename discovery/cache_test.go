package discovery

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
	"time"
)

func TestFreshness(t *testing.T) {
	for cc, want := range map[string]time.Duration{
		"public, max-age=300":       300 * time.Second,
		"max-age=60, no-store":      0,
		"no-cache":                  0,
		"private, max-age=60":       0,
		"":                          0,
		`max-age="30"`:              30 * time.Second,
		"max-age=-5":                0,
		"s-maxage=100, max-age=bad": 0,
	} {
		h := http.Header{}
		h.Set("Cache-Control", cc)
		if got := freshness(h); got != want {
			t.Errorf("freshness(%q) = %s, want %s", cc, got, want)
		}
	}
}

func TestCache_ReusesAFreshCardAndRefetchesAStaleOne(t *testing.T) {
	card, _ := os.ReadFile("testdata/card-delegated.json")
	var hits atomic.Int32
	cacheControl := "public, max-age=300"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Cache-Control", cacheControl)
		w.Write(card)
	}))
	defer srv.Close()
	now := time.Unix(1_800_000_000, 0)
	c := &Cache{Dir: t.TempDir(), Now: func() time.Time { return now }}
	ctx := context.Background()
	u := srv.URL + WellKnownPath
	for i, wantCached := range []bool{false, true, true} {
		got, cached, err := c.Fetch(ctx, client(), u)
		if err != nil || cached != wantCached || got.InterfaceURL != "https://provider.example.com/a2a/01J" || got.URL != u {
			t.Fatalf("fetch %d: cached=%v err=%v card=%+v", i, cached, err, got)
		}
	}
	if hits.Load() != 1 {
		t.Fatalf("server saw %d requests, want 1", hits.Load())
	}
	now = now.Add(301 * time.Second)
	if _, cached, _ := c.Fetch(ctx, client(), u); cached || hits.Load() != 2 {
		t.Fatalf("a stale card was reused (cached=%v, hits=%d)", cached, hits.Load())
	}
	c.Forget(u)
	cacheControl = "no-store"
	c.Fetch(ctx, client(), u)
	if _, cached, _ := c.Fetch(ctx, client(), u); cached || hits.Load() != 4 {
		t.Fatalf("a no-store card was kept (cached=%v, hits=%d)", cached, hits.Load())
	}
}
