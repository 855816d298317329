package main

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// `pact conversations search`: the MESSAGE column keeps the match in view.
func TestSearchSnippetKeepsTheMatchInView(t *testing.T) {
	text := "Thanks for waiting. I checked order A-10001 for you: it is being processed and has not shipped yet; it should leave the warehouse tomorrow."
	got := snippet(text, []string{"SHIPPED"}, 70)
	if !strings.Contains(got, "shipped") || !strings.HasPrefix(got, "…") || !strings.HasSuffix(got, "…") || utf8.RuneCountInString(got) != 70 {
		t.Fatalf("snippet = %q (%d characters)", got, utf8.RuneCountInString(got))
	}
	if got := snippet(text, []string{"thanks"}, 70); !strings.HasPrefix(got, "Thanks") || !strings.HasSuffix(got, "…") || utf8.RuneCountInString(got) != 70 {
		t.Fatalf("match at the start: %q", got)
	}
	if got := snippet(text, []string{"tomorrow."}, 70); !strings.HasPrefix(got, "…") || !strings.HasSuffix(got, "tomorrow.") || utf8.RuneCountInString(got) != 70 {
		t.Fatalf("match at the end: %q", got)
	}
	if got := snippet("short text", []string{"text"}, 70); got != "short text" {
		t.Fatalf("short: %q", got)
	}
	if got := snippet(text, []string{"absent"}, 70); got != oneLine(text, 70) {
		t.Fatalf("no match: %q", got)
	}
}
