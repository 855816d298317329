package discovery

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pact-cli/pact/store"
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
	c := &Cache{DB: testDB(t).ForUser(store.LocalUser), Now: func() time.Time { return now }}
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

func testDB(t testing.TB) *store.DB {
	db, err := store.Open(context.Background(), t.TempDir()+"/pact.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestRFC9110_13_1_StaleCardRevalidatedAndKeptOn304: a stale card that came
// with an ETag and Last-Modified is asked for again with If-None-Match and
// If-Modified-Since; a 304 keeps it (fresh again for the new max-age), a
// 200 replaces it.
func TestRFC9110_13_1_StaleCardRevalidatedAndKeptOn304(t *testing.T) {
	card, _ := os.ReadFile("testdata/card-delegated.json")
	var hits, notModified atomic.Int32
	var gotINM, gotIMS atomic.Value
	etag := `"v1"`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		gotINM.Store(r.Header.Get("If-None-Match"))
		gotIMS.Store(r.Header.Get("If-Modified-Since"))
		w.Header().Set("Cache-Control", "max-age=60")
		w.Header().Set("ETag", etag)
		w.Header().Set("Last-Modified", "Mon, 30 Nov 2026 10:00:00 GMT")
		if r.Header.Get("If-None-Match") == etag {
			notModified.Add(1)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Write(card)
	}))
	defer srv.Close()
	now := time.Unix(1_800_000_000, 0)
	c := &Cache{DB: testDB(t).ForUser(store.LocalUser), Now: func() time.Time { return now }}
	ctx := context.Background()
	u := srv.URL + WellKnownPath
	if _, cached, err := c.Fetch(ctx, client(), u); err != nil || cached {
		t.Fatalf("first fetch: cached=%v %v", cached, err)
	}
	if gotINM.Load() != "" {
		t.Fatalf("first fetch sent If-None-Match %q", gotINM.Load())
	}
	now = now.Add(61 * time.Second)
	got, cached, err := c.Fetch(ctx, client(), u)
	if err != nil || !cached || got.InterfaceURL != "https://provider.example.com/a2a/01J" {
		t.Fatalf("revalidated fetch: cached=%v err=%v card=%+v", cached, err, got)
	}
	if gotINM.Load() != etag || gotIMS.Load() != "Mon, 30 Nov 2026 10:00:00 GMT" || notModified.Load() != 1 {
		t.Fatalf("revalidation sent If-None-Match %q, If-Modified-Since %q; 304s: %d", gotINM.Load(), gotIMS.Load(), notModified.Load())
	}
	// Fresh again after the 304: no request.
	if _, cached, _ := c.Fetch(ctx, client(), u); !cached || hits.Load() != 2 {
		t.Fatalf("after the 304 the card was not fresh (cached=%v hits=%d)", cached, hits.Load())
	}
	// The card changed: a 200 replaces it.
	now = now.Add(61 * time.Second)
	etag = `"v2"`
	if _, cached, err := c.Fetch(ctx, client(), u); err != nil || cached || hits.Load() != 3 {
		t.Fatalf("a changed card: cached=%v hits=%d %v", cached, hits.Load(), err)
	}
	kept, ok, _ := c.DB.Card(ctx, u)
	if !ok || kept.ETag != `"v2"` {
		t.Fatalf("kept ETag %q, want the new one", kept.ETag)
	}
}
