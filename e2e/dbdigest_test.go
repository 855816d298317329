package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"testing"

	"github.com/pact-cli/pact/store"
)

// dbDigest hashes what a profile database holds: conversations with their
// turns, grants' metadata and receipts (not the card cache, which keeps
// public documents). ok is false when it holds none of these.
func dbDigest(t *testing.T, path string) (sum [32]byte, ok bool) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatalf("the database %s does not open: %v", path, err)
	}
	defer db.Close()
	var all []any
	convs, err := db.ForUser(store.LocalUser).Conversations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range convs {
		turns, err := db.ForUser(store.LocalUser).Turns(ctx, c.InterfaceURL, c.ContextID)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, c, turns)
	}
	grants, err := db.ForUser(store.LocalUser).Grants(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range grants {
		all = append(all, string(g))
	}
	err = db.ForUser(store.LocalUser).EachReceipt(ctx, store.ReceiptFilter{Full: true}, func(r store.Receipt) error {
		all = append(all, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) == 0 {
		return sum, false
	}
	b, _ := json.Marshal(all)
	return sha256.Sum256(b), true
}
