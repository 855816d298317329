package receipts

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/go-jose/go-jose/v4"

	"github.com/pact-cli/pact/store"
)

// benchSet is 10,000 receipts signed with one ES256 key and archived once,
// shared by both benchmarks so they work on the same JWSs.
var benchSet struct {
	once sync.Once
	dir  string
	jwss []string
	key  jose.JSONWebKey
	err  error
	db   *store.DB
}

func setupBench(b *testing.B) {
	benchSet.once.Do(func() {
		k := newKey(b, jose.ES256, "k1")
		benchSet.key = k.jwk.Public()
		dir, err := os.MkdirTemp("", "pact-receipts-bench")
		if err != nil {
			benchSet.err = err
			return
		}
		benchSet.dir = dir
		db, err := store.Open(context.Background(), filepath.Join(dir, "pact.db"))
		if err != nil {
			benchSet.err = err
			return
		}
		benchSet.db = db
		a := &Archive{DB: db.ForUser(store.LocalUser)}
		exp := Expect{PA: paIssuer, Brand: iface, GrantID: "a2agrant_1", User: "jane-4471", Scopes: []string{"orders:read", "orders:cancel"}, JWKSURI: "http://127.0.0.1:1/jwks.json"}
		for i := 0; i < 10000; i++ {
			rc := receipt(b, k, claims(func(c map[string]any) { c["ts"] = fmt.Sprintf("2026-09-30T12:%02d:%02dZ", i/60%60, i%60); c["n"] = i }))
			res, err := VerifyOffline(rc, &benchSet.key, exp)
			if err != nil {
				benchSet.err = err
				return
			}
			if _, err := a.Put(res); err != nil {
				benchSet.err = err
				return
			}
			benchSet.jwss = append(benchSet.jwss, rc.JWS)
		}
	})
	if benchSet.err != nil {
		b.Fatal(benchSet.err)
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if benchSet.db != nil {
		benchSet.db.Close()
	}
	if benchSet.dir != "" {
		os.RemoveAll(benchSet.dir)
	}
	os.Exit(code)
}

// BenchmarkVerifyAll10000 re-verifies a 10,000-receipt archive offline:
// read each file, decode it, verify the JWS with the archived key, check
// the claims against the archived expectation.
func BenchmarkVerifyAll10000(b *testing.B) {
	setupBench(b)
	a := &Archive{DB: benchSet.db.ForUser(store.LocalUser)}
	b.ResetTimer()
	for b.Loop() {
		checks, err := a.VerifyAll(context.Background(), false)
		if err != nil || len(checks) != 10000 {
			b.Fatal(len(checks), err)
		}
		for _, c := range checks {
			if !c.Verified {
				b.Fatal(c.Problems)
			}
		}
	}
}

// BenchmarkPlainGoJoseLoop10000 is the baseline: parse and verify the same
// 10,000 JWSs from memory with go-jose, one after another.
func BenchmarkPlainGoJoseLoop10000(b *testing.B) {
	setupBench(b)
	b.ResetTimer()
	for b.Loop() {
		for _, s := range benchSet.jwss {
			obj, err := jose.ParseSignedCompact(s, []jose.SignatureAlgorithm{jose.ES256})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := obj.Verify(benchSet.key.Key); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// testDB is a fresh database in a temporary folder, closed at the end.
func testDB(t testing.TB) *store.DB {
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "pact.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
