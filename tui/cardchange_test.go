package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

func cardPanel() *cardChangeModel {
	return &cardChangeModel{st: newStyles(true), keys: defaultKeys(), width: 100, c: CardChange{
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

// typeIn feeds the panel the key presses of text, one per rune ("\r" is Enter), as
// bubbletea v2 delivers a burst, and reports whether it quit and whether it accepted.
func typeIn(m *cardChangeModel, keys ...string) (quit bool) {
	for _, k := range keys {
		if _, cmd := m.Update(press(k)); cmd != nil {
			return true
		}
	}
	return false
}

func runes(s string) []string {
	var out []string
	for _, r := range s {
		switch r {
		case '\r':
			out = append(out, "enter")
		default:
			out = append(out, string(r))
		}
	}
	return out
}

// The answer is a line: y or n then Enter. Esc and Ctrl+C quit at once.
func TestCardChangePanel_YThenEnterTrustsNThenEnterQuits(t *testing.T) {
	for _, tc := range []struct {
		keys []string
		want bool
	}{
		{runes("y\r"), true},
		{runes("Y\r"), true},
		{runes("yes\r"), true},
		{runes("n\r"), false},
		{runes("No\r"), false},
		{[]string{"esc"}, false},
		{[]string{"ctrl+c"}, false},
		{append(runes("x"), "backspace", "y", "enter"), true},
	} {
		m := cardPanel()
		if !typeIn(m, tc.keys...) || m.accepted != tc.want {
			t.Errorf("%q: accepted %v; want accepted %v and quit", tc.keys, m.accepted, tc.want)
		}
	}
}

// A lone key press never decides: text typed in one burst by someone who thought they were
// in the chat fills the answer line, and Enter on it asks again. "my order" has a y, "/login"
// an n; neither accepts nor quits.
func TestCardChangePanel_TypedTextNeverDecides(t *testing.T) {
	for _, text := range []string{"y", "n", "my order", "/login", "my order\r", "/login\r", "yy\r", "nope\r", "y n\r"} {
		m := cardPanel()
		if typeIn(m, runes(text)...) || m.accepted {
			t.Errorf("%q decided (accepted %v)", text, m.accepted)
		}
	}
	m := cardPanel()
	typeIn(m, runes("my order\r")...)
	if v := ansi.Strip(m.render()); !strings.Contains(v, "Answer y or n, then press Enter.") {
		t.Errorf("no hint after an answer that is not y or n:\n%s", v)
	}
	if _, cmd := m.Update(tea.PasteMsg{Content: "y\r"}); cmd != nil || m.accepted {
		t.Error("pasted text answered")
	}
	if !typeIn(m, runes("y\r")...) || !m.accepted {
		t.Error("y then Enter after a wrong answer did not accept")
	}
}

// At 80 and 40 columns every value is readable in full (stacked and wrapped when narrow),
// and no line is wider than the terminal (in a window tall enough for all of it).
func TestCardChangePanel_NarrowTerminalsShowEveryValueInFull(t *testing.T) {
	old := "http://127.0.0.1:41234/a2a/brands/example-co-support"
	cur := "http://127.0.0.1:45678/a2a/brands/example-co-support"
	k1, k2 := "key NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs", "key 0pLq3sVgS1d8m2K6Y9xWc4tRu7eHf5jNbA1zQoPiL0k"
	for _, w := range []int{80, 40, 24} {
		m := &cardChangeModel{st: newStyles(true), keys: defaultKeys(), width: w, height: 100, c: CardChange{
			Brand: "http://127.0.0.1:39999", Changes: []string{"another Provider", "another interface URL", "signed by another key"},
			Rows: [][3]string{{"provider", "http://127.0.0.1:41234", "http://127.0.0.1:45678"}, {"interface", old, cur}, {"signed by", k1, k2}},
		}}
		v := ansi.Strip(m.render())
		joined := ""
		for _, l := range strings.Split(v, "\n") {
			if n := ansi.StringWidth(l); n > w {
				t.Errorf("width %d: line of %d cells %q", w, n, l)
			}
			joined += strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(l), "accepted"), "now"))
		}
		flat := strings.ReplaceAll(joined, " ", "")
		for _, want := range []string{old, cur, k1, k2, "http://127.0.0.1:45678", "Trustthenewcardandcontinue?", "Typeyandpress"} {
			if !strings.Contains(flat, strings.ReplaceAll(want, " ", "")) {
				t.Errorf("width %d: %q is not shown in full:\n%s", w, want, v)
			}
		}
		if strings.Contains(v, "…") {
			t.Errorf("width %d: something was cut:\n%s", w, v)
		}
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

// Hostile re-review: a newline in the card's name must not push a fake
// "signed by … ✓" onto a header line of its own.
func TestHeader_NameWithNewlineStaysOnOneLine(t *testing.T) {
	st := newStyles(true)
	lines := renderHeader(&st, Header{BrandName: "Hostile Co.\nsigned by bank.example ✓", BrandDomain: "x.example", Signature: "unsigned"}, time.Now(), 120)
	got := ansi.Strip(lines[0])
	if strings.Contains(got, "\n") || !strings.Contains(got, `Hostile Co.\nsigned by bank.example ✓`) {
		t.Errorf("header line %q", got)
	}
}

// The panel fits the window's height: the question and the answer line stay at the
// bottom, the comparison scrolls with PgUp/PgDn and arrows between "more above/below"
// marks, and scrolled through it shows every value in full.
func TestCardChangePanel_FitsTheHeightAndScrolls(t *testing.T) {
	old := "http://127.0.0.1:41234/a2a/brands/example-co-support"
	cur := "http://127.0.0.1:45678/a2a/brands/example-co-support"
	k1, k2 := "key NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs", "key 0pLq3sVgS1d8m2K6Y9xWc4tRu7eHf5jNbA1zQoPiL0k"
	for _, size := range [][2]int{{40, 24}, {40, 12}, {24, 8}} {
		m := &cardChangeModel{st: newStyles(true), keys: defaultKeys(), c: CardChange{
			Brand: "http://127.0.0.1:39999", Changes: []string{"another Provider", "another interface URL", "signed by another key"},
			Rows: [][3]string{{"provider", "http://127.0.0.1:41234", "http://127.0.0.1:45678"}, {"interface", old, cur}, {"signed by", k1, k2}},
		}}
		m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		seen := map[string]bool{}
		for i := 0; i < 30; i++ {
			v := ansi.Strip(m.render())
			lines := strings.Split(v, "\n")
			if len(lines) > size[1] {
				t.Fatalf("%dx%d: %d rows:\n%s", size[0], size[1], len(lines), v)
			}
			if !strings.Contains(v, "Trust the new card") || !strings.HasPrefix(lines[len(lines)-1], "> ") {
				t.Fatalf("%dx%d: the question or the answer line is off screen:\n%s", size[0], size[1], v)
			}
			if i == 0 && !strings.Contains(v, "more below · PgDn") {
				t.Fatalf("%dx%d: no mark for what is below:\n%s", size[0], size[1], v)
			}
			for _, l := range lines {
				seen[strings.Join(strings.Fields(l), " ")] = true
			}
			if !strings.Contains(v, "more below") {
				if !strings.Contains(v, "more above · PgUp") {
					t.Fatalf("%dx%d: scrolled down without a mark above:\n%s", size[0], size[1], v)
				}
				break
			}
			if i%2 == 0 {
				m.Update(press("pgdown"))
			} else {
				m.Update(press("down"))
			}
		}
		all := strings.ReplaceAll(strings.Join(func() []string {
			var ks []string
			for k := range seen {
				ks = append(ks, k)
			}
			return ks
		}(), "|"), " ", "")
		for _, want := range []string{"another interface URL", "accepted", "Nothing has been sent"} {
			if !strings.Contains(all, strings.ReplaceAll(want, " ", "")) {
				t.Errorf("%dx%d: %q never shown while scrolling", size[0], size[1], want)
			}
		}
		for range 30 {
			m.Update(press("pgup"))
			m.render()
		}
		if v := ansi.Strip(m.render()); strings.Contains(v, "more above") || !strings.Contains(v, "The Agent Card of") {
			t.Errorf("%dx%d: PgUp did not return to the top:\n%s", size[0], size[1], v)
		}
		if typeIn(m, runes("y\r")...); !m.accepted {
			t.Errorf("%dx%d: y then Enter did not accept", size[0], size[1])
		}
	}
}
