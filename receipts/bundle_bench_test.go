package receipts

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/pact-cli/pact/store"
)

// bundleBench is one bundle of PACT_BENCH_BUNDLE (default 100,000)
// ES256 receipts, built once and shared by the import benchmark and its
// baseline so both work on the same lines.
var bundleBench struct {
	once sync.Once
	data []byte
	n    int
}

func setupBundleBench(b *testing.B) {
	bundleBench.once.Do(func() {
		n := 100_000
		if v, err := strconv.Atoi(os.Getenv("PACT_BENCH_BUNDLE")); err == nil && v > 0 {
			n = v
		}
		k := newKey(b, jose.ES256, "k1")
		signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: k.jwk}, nil)
		if err != nil {
			b.Fatal(err)
		}
		pub, _ := json.Marshal(k.jwk.Public())
		var buf bytes.Buffer
		at := time.Date(2026, 9, 30, 12, 0, 0, 0, time.UTC)
		for i := range n {
			payload, _ := json.Marshal(claims(func(c map[string]any) {
				c["n"] = i
				c["ts"] = at.Add(time.Duration(i) * time.Second).Format(time.RFC3339)
			}))
			obj, err := signer.Sign(payload)
			if err != nil {
				b.Fatal(err)
			}
			jws, _ := obj.CompactSerialize()
			WriteBundleRecord(&buf, BundleRecord{JWS: jws, JWK: pub, JWKSURI: "https://brand.example/jwks.json"})
		}
		bundleBench.data, bundleBench.n = buf.Bytes(), n
	})
}

// BenchmarkBundleImport100k imports the bundle into an empty archive, as
// `pact receipts import` does: every line verified with its jwk (in
// parallel), every verified receipt archived. Reports receipts/s.
func BenchmarkBundleImport100k(b *testing.B) {
	setupBundleBench(b)
	for b.Loop() {
		b.StopTimer()
		a := &Archive{DB: testDB(b).ForUser(store.LocalUser)}
		batch := a.NewBatch(1000)
		b.StartTimer()
		start := time.Now()
		n := 0
		err := VerifyBundle(bytes.NewReader(bundleBench.data), func(c BundleCheck, r *Result) error {
			if !c.Verified {
				b.Fatal(c.Problems)
			}
			n++
			return batch.Add(r)
		})
		if err == nil {
			err = batch.Flush()
		}
		if err != nil || n != bundleBench.n {
			b.Fatal(n, err)
		}
		b.ReportMetric(float64(n)/time.Since(start).Seconds(), "receipts/s")
	}
}

// BenchmarkBundleVerify100k is `pact receipts verify --bundle`: the same
// verification without archiving. Reports receipts/s.
func BenchmarkBundleVerify100k(b *testing.B) {
	setupBundleBench(b)
	for b.Loop() {
		start := time.Now()
		n := 0
		err := VerifyBundle(bytes.NewReader(bundleBench.data), func(c BundleCheck, _ *Result) error {
			if !c.Verified {
				b.Fatal(c.Problems)
			}
			n++
			return nil
		})
		if err != nil || n != bundleBench.n {
			b.Fatal(n, err)
		}
		b.ReportMetric(float64(n)/time.Since(start).Seconds(), "receipts/s")
	}
}

// BenchmarkBundlePlainGoJoseLoop100k is the baseline: the docs/json.md
// recipe, one line after another: decode the line, parse the JWS, verify
// it with the line's jwk. Reports receipts/s.
func BenchmarkBundlePlainGoJoseLoop100k(b *testing.B) {
	setupBundleBench(b)
	for b.Loop() {
		start := time.Now()
		sc := bufio.NewScanner(bytes.NewReader(bundleBench.data))
		sc.Buffer(nil, 1<<20)
		n := 0
		for sc.Scan() {
			var line struct {
				JWS string          `json:"jws"`
				JWK jose.JSONWebKey `json:"jwk"`
			}
			if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
				b.Fatal(err)
			}
			sig, err := jose.ParseSignedCompact(line.JWS, []jose.SignatureAlgorithm{jose.ES256, jose.RS256})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := sig.Verify(&line.JWK); err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != bundleBench.n {
			b.Fatal(n)
		}
		b.ReportMetric(float64(n)/time.Since(start).Seconds(), "receipts/s")
	}
}
