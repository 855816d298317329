package discovery

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

// The extended card is checked as the public card is (A2A §8.4 against the
// Brand's own keys), and beyond: same interface, and signed when the
// public card is.
func TestCheckExtended(t *testing.T) {
	s := newSite(t)
	k := ecKey(t)
	raw := baseCard(t)
	s.set(sign(t, raw, k, "k1", s.jku()), pub(t, k, "k1", "ES256"))
	ctx := context.Background()
	public, err := Fetch(ctx, sigClient(), s.cardURL())
	if err != nil || !public.Signature.Verified {
		t.Fatalf("public card: %v %+v", err, public)
	}
	ext, err := CheckExtended(ctx, sigClient(), public, sign(t, raw, k, "k1", s.jku()))
	if err != nil || !ext.Signature.Verified || ext.InterfaceURL != public.InterfaceURL {
		t.Fatalf("a signed extended card: %v", err)
	}
	var bad *InvalidCardError
	for name, c := range map[string]struct {
		raw  []byte
		want string
	}{
		"unsigned":        {raw, "not"},
		"tampered":        {bytes.Replace(sign(t, raw, k, "k1", s.jku()), []byte(`"name":`), []byte(`"name":"X","x":`), 1), "signature"},
		"other interface": {sign(t, bytes.ReplaceAll(raw, []byte(public.InterfaceURL), []byte(public.InterfaceURL+"/evil")), k, "k1", s.jku()), "another interface"},
	} {
		_, err := CheckExtended(ctx, sigClient(), public, c.raw)
		if !errors.As(err, &bad) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want an InvalidCardError about %q", name, err, c.want)
		}
	}
}

// Skills gives each skill the scopes its securityRequirements name;
// SkillScopeIDs keeps only those the delegation scheme declares.
func TestSkillScopes(t *testing.T) {
	m := loadCard(t)
	m["skills"] = []any{
		map[string]any{"id": "a", "name": "A", "tags": []any{}},
		map[string]any{"id": "b", "name": "B", "tags": []any{}, "securityRequirements": []any{
			map[string]any{"schemes": map[string]any{"userDelegation": map[string]any{"list": []any{"orders:read", "zz:undeclared"}}}},
		}},
	}
	c, err := parseMap(t, m)
	if err != nil {
		t.Fatal(err)
	}
	sk := c.Skills()
	if len(sk) != 2 || len(sk[0].Scopes) != 0 || strings.Join(sk[1].Scopes, ",") != "orders:read,zz:undeclared" {
		t.Fatalf("skills = %+v", sk)
	}
	if c.Delegation == nil {
		t.Fatal("the test card offers no delegation")
	}
	if got := strings.Join(c.SkillScopeIDs(), ","); got != "orders:read" {
		t.Errorf("SkillScopeIDs = %q", got)
	}
}
