package discovery

import (
	"context"
	"testing"
)

// One card state (issue 20): once a command has seen a changed card, a
// command holding the earlier card (still fresh in its cache) stops too,
// until the User accepts a card; doctor's and MCP's Judge agree.
func TestPin_ChangedCardSeenStopsEveryCommandUntilAccepted(t *testing.T) {
	p := pins(t)
	accepted := pinCard(t, "https://prov.example/a2a/b1", "K1")
	check(t, p, accepted)
	changed(t, second(check(t, p, pinCard(t, "https://evil.example/a2a/b1", "K1"))), "another Provider")
	// The earlier card, as a cache still holds it: stopped, by the change seen.
	ce := changed(t, second(check(t, p, accepted)), "another Provider")
	if ce.New.ProviderOrigin != "https://evil.example" {
		t.Fatalf("the change seen is not the one shown: %+v", ce.New)
	}
	j, err := Judge(context.Background(), p, accepted, t0)
	if err != nil || !j.Seen || len(j.Changes) == 0 {
		t.Fatalf("Judge of the earlier card: %+v %v", j, err)
	}
	// Accepting a card (here the one accepted before) ends it.
	if _, _, err := Trust(context.Background(), p, accepted, t0); err != nil {
		t.Fatal(err)
	}
	if st, err := check(t, p, accepted); err != nil || st != PinSame {
		t.Fatalf("after accepting: %v, %v", st, err)
	}
}
