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
	if err := p.UnsafeClaimsWithoutVerification(&c); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSection3_2_AheadNeverHandsOutATokenTwice(t *testing.T) {
	k, err := Generate(ES256, 0)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New("https://pa.example.com", k, nil)
	if err != nil {
		t.Fatal(err)
	}
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

// staleBound is the oldest a token minted ahead may be when it is handed
// out, fixed here from §3.2's numbers rather than read from the code: the
// token lives 120 s and a Provider allows 30 s of clock skew, so a token a
// quarter of its life old (30 s) is already too old to hand out. The test
// does not move when DefaultMaxAge does.
const staleBound = 30 * time.Second

func newTestAhead(t *testing.T) (*Ahead, func(time.Duration), func() time.Time) {
	t.Helper()
	k, err := Generate(ES256, 0)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	s, err := New("https://pa.example.com", k, clock)
	if err != nil {
		t.Fatal(err)
	}
	return s.Ahead("aud", "sub"), advance, clock
}

// waitReady waits until a token minted ahead is ready.
func waitReady(t *testing.T, a *Ahead) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(a.ready) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no token was minted ahead")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestSection3_2_AheadDropsStaleTokens(t *testing.T) {
	a, advance, clock := newTestAhead(t)
	if _, err := a.Token(); err != nil { // starts minting one ahead
		t.Fatal(err)
	}
	waitReady(t, a)
	advance(staleBound)
	tok, err := a.Token()
	if err != nil {
		t.Fatal(err)
	}
	if c := claimsOf(t, tok); c.IssuedAt != clock().Unix() {
		t.Fatalf("a token minted %ds before was handed out (it must be younger than %s)", clock().Unix()-c.IssuedAt, staleBound)
	}
}

// The cache does serve a fresh token minted ahead (so the test above is
// about age, not about a cache that never serves), and MaxAge is honoured.
func TestSection3_2_AheadServesFreshTokensAndHonoursMaxAge(t *testing.T) {
	a, advance, clock := newTestAhead(t)
	if _, err := a.Token(); err != nil {
		t.Fatal(err)
	}
	waitReady(t, a)
	minted := clock().Unix()
	advance(time.Second)
	tok, err := a.Token()
	if err != nil {
		t.Fatal(err)
	}
	if c := claimsOf(t, tok); c.IssuedAt != minted {
		t.Fatalf("the token minted ahead 1 s before was not used (iat %d, minted %d)", c.IssuedAt, minted)
	}

	a.MaxAge = 5 * time.Second
	waitReady(t, a)
	advance(5 * time.Second)
	tok, err = a.Token()
	if err != nil {
		t.Fatal(err)
	}
	if c := claimsOf(t, tok); c.IssuedAt != clock().Unix() {
		t.Fatalf("MaxAge 5s: a token %ds old was handed out", clock().Unix()-c.IssuedAt)
	}
}
