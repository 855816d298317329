package receipts

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// Issue 9 (time), PACT §5.6: a receipt whose ts lies beyond the allowed
// skew in the future is not verified, and problems says why; a ts within
// the skew still verifies.
func TestSection5_6_FutureTimestampBeyondSkewNotVerified(t *testing.T) {
	k := newKey(t, jose.ES256, "k1")
	js := newJWKSServer(t, k)
	future := time.Now().UTC().AddDate(1, 0, 0).Format(time.RFC3339)
	res, err := Verify(context.Background(), js.cache(), receipt(t, k, claims(func(c map[string]any) { c["ts"] = future })), expectFor(js))
	if err == nil || res.Verified() {
		t.Fatal("a receipt from a year ahead was verified")
	}
	if !strings.Contains(strings.Join(res.Problems, "; "), "in the future, beyond the allowed clock skew") {
		t.Fatalf("problems = %v", res.Problems)
	}
	near := time.Now().UTC().Add(10 * time.Second).Format(time.RFC3339)
	res, err = Verify(context.Background(), js.cache(), receipt(t, k, claims(func(c map[string]any) { c["ts"] = near })), expectFor(js))
	if err != nil || !res.Verified() {
		t.Fatalf("ts 10 s ahead (within skew): %v", err)
	}
}

// PACT §5.6: a receipt records a turn under a grant, so its ts cannot be
// before the grant was issued: a ts in 2020 under a grant issued now is
// not verified, and problems says why; a ts after the issue verifies.
func TestSection5_6_TimestampBeforeTheGrantWasIssuedNotVerified(t *testing.T) {
	k := newKey(t, jose.ES256, "k1")
	js := newJWKSServer(t, k)
	exp := expectFor(js)
	issued := time.Now().UTC().Add(-time.Hour)
	exp.GrantIssuedAt = &issued
	res, err := Verify(context.Background(), js.cache(), receipt(t, k, claims(func(c map[string]any) { c["ts"] = "2020-01-01T00:00:00Z" })), exp)
	if err == nil || res.Verified() {
		t.Fatal("a receipt from 2020 verified under a grant issued an hour ago")
	}
	if !strings.Contains(strings.Join(res.Problems, "; "), "before the grant was issued") {
		t.Fatalf("problems = %v", res.Problems)
	}
	now := time.Now().UTC().Format(time.RFC3339)
	if res, err := Verify(context.Background(), js.cache(), receipt(t, k, claims(func(c map[string]any) { c["ts"] = now })), exp); err != nil || !res.Verified() {
		t.Fatalf("a ts after the grant was issued: %v", err)
	}
}
