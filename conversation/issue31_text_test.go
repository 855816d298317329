package conversation

import (
	"context"
	"strings"
	"testing"
)

// Issue 31 (10): a name with invisible characters ("Exam\u00adple Bank") or with pact's own
// verdict words and marks ("… signed by 127.0.0.1:18791 ✓") gets a warning; a plain name
// none.
func TestIssue31_10_NameWarningsForHiddenCharactersAndVerdictWords(t *testing.T) {
	ctx := context.Background()
	for name, want := range map[string]string{
		"Exam\u00adple Bank":                         "invisible characters",
		"Example\ufe00\ufe01 Bank":                   "invisible characters",
		"Example Bank — signed by 127.0.0.1:18791 ✓": "pact uses for its own findings",
		"Example Bank (Verified)":                    "pact uses for its own findings",
		"Example Bank \u2714":                        "pact uses for its own findings",
		"Example Bank \u2764\ufe0f":                  "",
		"Example Co. Support":                        "",
	} {
		w := NameWarnings(ctx, Options{}, "https://evil.example/.well-known/agent-card.json", name)
		if got := strings.Join(w, "; "); want == "" && got != "" || want != "" && !strings.Contains(got, want) {
			t.Errorf("NameWarnings(%q) = %q, want %q", name, got, want)
		}
	}
}
