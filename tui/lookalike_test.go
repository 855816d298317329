package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// Issue 18: the chat header flags a name pact warned about (a look-alike
// of a Brand the User accepted elsewhere), shows its invisible characters,
// and says nothing for a plain name.
func TestHeaderFlagsALookAlikeName(t *testing.T) {
	st := newStyles(true)
	now := time.Now()
	got := ansi.Strip(renderHeader(&st, Header{BrandName: "Ex\u0430mple\u200b Bank", BrandDomain: "evil.example",
		NameWarnings: []string{"the name looks like that of the Brand at bank.example"}}, now, 120)[0])
	if !strings.Contains(got, "⚠ suspect name") || !strings.Contains(got, `\u200b`) {
		t.Fatalf("header = %q", got)
	}
	if got := ansi.Strip(renderHeader(&st, Header{BrandName: "Example Bank", BrandDomain: "bank.example"}, now, 120)[0]); strings.Contains(got, "suspect") {
		t.Fatalf("a plain name is flagged: %q", got)
	}
}
