package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

func cardPanel() *cardChangeModel {
	return &cardChangeModel{st: newStyles(true), width: 100, c: CardChange{
		Brand:   "shop.example",
		Changes: []string{"another Provider"},
		Rows: [][3]string{
			{"provider", "https://prov.example", "https://evil.example\x1b[2J"},
			{"signed by", "key K1", "key K1"},
		},
	}}
}

func TestCardChangePanel_ShowsOldAndNewSideBySide(t *testing.T) {
	v := ansi.Strip(cardPanel().render())
	for _, want := range []string{"The Agent Card of shop.example changed", "another Provider", "Nothing has been sent",
		"accepted", "now", "≠ provider   https://prov.example  https://evil.example", "  signed by  key K1", "Trust the new card and continue?"} {
		if !strings.Contains(v, want) {
			t.Errorf("panel lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(cardPanel().render(), "\x1b[2J") {
		t.Error("a control sequence from the card reached the screen")
	}
	if strings.Count(v, "≠") != 1 {
		t.Errorf("want exactly the changed row marked:\n%s", v)
	}
}

func TestCardChangePanel_YTrustsOtherKeysQuit(t *testing.T) {
	for _, tc := range []struct {
		key  tea.KeyPressMsg
		want bool
	}{
		{press("y"), true},
		{press("Y"), true},
		{press("n"), false},
		{press("esc"), false},
		{press("ctrl+c"), false},
	} {
		key, want := tc.key, tc.want
		m := cardPanel()
		_, cmd := m.Update(key)
		if cmd == nil || m.accepted != want {
			t.Errorf("%q: accepted %v, quit %v; want accepted %v and quit", key.String(), m.accepted, cmd != nil, want)
		}
	}
	m := cardPanel()
	if _, cmd := m.Update(press("enter")); cmd != nil || m.accepted {
		t.Error("Enter answered the question; only y or n should")
	}
}

func TestHeader_ShowsSignature(t *testing.T) {
	st := newStyles(true)
	now := time.Now()
	for sig, want := range map[string]string{
		"signed by shop.example ✓": "Shop shop.example signed by shop.example ✓",
		"unsigned":                 "Shop shop.example unsigned",
	} {
		got := ansi.Strip(renderHeader(&st, Header{BrandName: "Shop", BrandDomain: "shop.example", Signature: sig}, now, 80)[0])
		if strings.TrimSpace(got) != want {
			t.Errorf("header line %q, want %q", got, want)
		}
	}
}
