package discovery

import (
	"context"
	"errors"
	"net/http"
	"testing"
)

type noNetwork struct{}

func (noNetwork) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("no network in fuzzing")
}

// FuzzA2A_8_4_Verify: any card bytes are either verified, reported unsigned
// or refused with a reason; never a panic, and never "verified" without a
// key that verified.
func FuzzA2A_8_4_Verify(f *testing.F) {
	f.Add([]byte(`{"name":"x"}`))
	f.Add([]byte(`{"signatures":[{"protected":"eyJhbGciOiJFUzI1NiIsImtpZCI6ImsiLCJqa3UiOiJodHRwczovL2IuZXhhbXBsZS9rIn0","signature":"AAAA"}]}`))
	f.Add([]byte(`{"signatures":{}}`))
	f.Add([]byte(`{"a":1e400,"signatures":[]}`))
	hc := &http.Client{Transport: noNetwork{}}
	f.Fuzz(func(t *testing.T, data []byte) {
		sig, err := Verify(context.Background(), hc, "https://b.example/.well-known/agent-card.json", data)
		if sig == nil {
			t.Fatal("nil result")
		}
		if sig.Verified && (err != nil || len(sig.Thumbprints) == 0) {
			t.Fatalf("verified without a key: %+v %v", sig, err)
		}
		if err == nil && sig.Signed && !sig.Verified {
			t.Fatalf("a signed card that did not verify was accepted: %+v", sig)
		}
	})
}
