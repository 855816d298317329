package tui

import (
	"context"
	"strings"
	"testing"
)

type skillFake struct {
	*fake
	ext chan struct{}
}

func (f *skillFake) Skills() []SkillScopes {
	return []SkillScopes{{Name: "Orders"}, {Name: "Your orders", Scopes: []string{"orders:read"}}, {Name: "Refunds", Scopes: []string{"refunds:issue", "not:on-card"}}}
}

func (f *skillFake) ExtendedCard(ctx context.Context) (string, bool, error) {
	<-f.ext
	return "extended card: what you may use\n  Orders: identity only", true, nil
}

// `/login` alone offers the scopes the card's skills need (only those the
// card declares), in the input, ready to send; `/card` shows the public
// card, then the extended card when it arrives.
func TestSlashLoginOffersSkillScopesAndCardFetchesExtended(t *testing.T) {
	f := &skillFake{fake: newFake(), ext: make(chan struct{})}
	h := newHarness(t, f, testOptions(), 100, 30)
	h.typeText("/login")
	h.key("enter")
	if got := h.m.c.in.value(); got != "/login orders:read refunds:issue" {
		t.Fatalf("input = %q, want the skills' declared scopes offered", got)
	}
	p := plain(h.view())
	if !strings.Contains(p, "Your orders: orders:read") || strings.Contains(p, "not:on-card") {
		t.Fatalf("offer:\n%s", p)
	}
	h.m.c.in.reset()
	h.typeText("/card")
	h.key("enter")
	if !strings.Contains(plain(h.view()), "Delegation: orders:read") {
		t.Fatalf("public card not shown:\n%s", plain(h.view()))
	}
	close(f.ext)
	h.until("the extended card", h.screenHas("what you may use"))
}
