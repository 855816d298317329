package receipts

import (
	"context"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"

	"github.com/pact-cli/pact/jwks"
)

// Issue 31 item 6, review: a receipt put back by `pact restore` carries no
// verdict. A backup can hold a receipt signed by a stranger's key, kept
// beside it, under the Brand's own jwks_uri, marked verified; the restore
// marks every receipt restored (store.Restore), and then: list and show
// say "restored, not re-checked", never verified; --offline does not take
// the key beside it as proof (and leaves it restored); an online check
// that cannot reach the Brand's keys leaves it restored; an online check
// against the Brand's published keys archives pact's own verdict: the
// Brand's own receipt verified, the stranger's rejected.
func TestIssue31_6_RestoredReceiptIsNotVerifiedUntilCheckedOnline(t *testing.T) {
	ctx := context.Background()
	brand := newKey(t, jose.ES256, "k1")
	stranger := newKey(t, jose.ES256, "k1") // the Brand's kid, another key
	js := newJWKSServer(t, brand)
	other := newJWKSServer(t, stranger)
	a := newArchive(t)
	own, err := Verify(ctx, js.cache(), receipt(t, brand, claims(nil)), expectFor(js))
	if err != nil {
		t.Fatal(err)
	}
	forged, err := Verify(ctx, other.cache(), receipt(t, stranger, claims(func(c map[string]any) {
		c["actions"] = []any{map[string]any{"tool": "issue_refund", "amount": "900 EUR"}}
	})), expectFor(other))
	if err != nil {
		t.Fatal(err)
	}
	forged.Expect.JWKSURI = expectFor(js).JWKSURI // the Brand's jwks_uri, the stranger's key
	for _, r := range []*Result{own, forged} {
		if _, err := a.Put(r); err != nil {
			t.Fatal(err)
		}
	}
	if e, _ := a.Get(forged.ID); !e.Verified {
		t.Fatal("the forged row is not marked verified: the test shows nothing")
	}
	// What store.Restore does to every receipt of the file.
	damage(t, a, `UPDATE receipts SET verified = 0, restored = 1, problems = '[]'`)

	restored := func(when string) {
		t.Helper()
		items, err := a.List("")
		if err != nil || len(items) != 2 {
			t.Fatalf("%s: list %+v %v", when, items, err)
		}
		for _, it := range items {
			if it.Verified || !it.Restored || len(it.Problems) != 1 || it.Problems[0] != RestoredProblem {
				t.Errorf("%s: listed %s verified %v restored %v problems %q", when, ShortID(it.ID), it.Verified, it.Restored, it.Problems)
			}
			e, err := a.Get(it.ID)
			if err != nil || e.Verified || !e.Restored || e.Item().Verified || !e.Item().Restored {
				t.Errorf("%s: shown %s: verified %v, restored %v (%v)", when, ShortID(it.ID), e != nil && e.Verified, e != nil && e.Restored, err)
			}
		}
	}
	restored("after the restore")

	a.Keys = js.cache() // there to be used, were --offline to go online
	checks, err := a.VerifyAll(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range checks {
		if c.Verified || !c.Unchecked || !c.Restored || !strings.Contains(strings.Join(c.Problems, " "), "--offline takes no backup's word") {
			t.Errorf("--offline: %+v", c)
		}
	}
	restored("after --offline")

	a.Keys = jwks.NewCache(other.srv.Client())
	down := newJWKSServer(t)
	down.srv.Close()
	damage(t, a, `UPDATE receipts SET expect = replace(expect, ?, ?)`, js.srv.URL, down.srv.URL)
	for _, c := range a.VerifyIDs(ctx, []string{own.ID, forged.ID}, true) {
		if c.Verified || !c.Unchecked || !c.Restored {
			t.Errorf("online, the Brand's keys unreachable: %+v", c)
		}
	}
	restored("after an online check that could not reach the Brand's keys")
	damage(t, a, `UPDATE receipts SET expect = replace(expect, ?, ?)`, down.srv.URL, js.srv.URL)

	a.Keys = js.cache()
	for _, c := range a.VerifyIDs(ctx, []string{own.ID, forged.ID}, true) {
		switch c.ID {
		case own.ID:
			if !c.Verified || c.Restored || c.Unchecked {
				t.Errorf("the Brand's own receipt, online: %+v", c)
			}
		case forged.ID:
			if c.Verified || c.Restored || c.Unchecked || len(c.Problems) == 0 {
				t.Errorf("the stranger's receipt, online: %+v", c)
			}
		}
	}
	if e, _ := a.Get(own.ID); !e.Verified || e.Restored {
		t.Errorf("the Brand's own receipt is not archived verified after the online check: %v", e.Problems)
	}
	if e, _ := a.Get(forged.ID); e.Verified || e.Restored {
		t.Errorf("the stranger's receipt is not archived rejected after the online check: verified %v, restored %v", e.Verified, e.Restored)
	}
}
