package signer

import (
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

func claimsOf(t *testing.T, tok string) Claims {
	t.Helper()
	p, err := jwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		t.Fatal(err)
	}
	var c Claims
	p.UnsafeClaimsWithoutVerification(&c)
	return c
}

func TestSection3_2_AheadNeverHandsOutATokenTwice(t *testing.T) {
	k, _ := Generate(ES256, 0)
	s, _ := New("https://pa.example.com", k, nil)
	a := s.Ahead("aud", "sub")
	var mu sync.Mutex
	seen := map[string]bool{}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 25; j++ {
				tok, err := a.Token()
				if err != nil {
					t.Error(err)
					return
				}
				jti := claimsOf(t, tok).ID
				mu.Lock()
				if seen[jti] {
					t.Errorf("token %s handed out twice", jti)
				}
				seen[jti] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) != 200 {
		t.Fatalf("%d distinct tokens, want 200", len(seen))
	}
}

func TestSection3_2_AheadDropsStaleTokens(t *testing.T) {
	k, _ := Generate(ES256, 0)
	now := time.Unix(1_800_000_000, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s, _ := New("https://pa.example.com", k, clock)
	a := s.Ahead("aud", "sub")
	a.Token() // starts minting one ahead
	deadline := time.Now().Add(2 * time.Second)
	for len(a.ready) == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	mu.Lock()
	now = now.Add(DefaultMaxAge + time.Second)
	mu.Unlock()
	tok, _ := a.Token()
	if c := claimsOf(t, tok); c.IssuedAt != now.Unix() {
		t.Fatalf("a token minted %ds before was handed out (max age %s)", now.Unix()-c.IssuedAt, DefaultMaxAge)
	}
}
