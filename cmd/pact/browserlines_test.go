package main

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// A browser writing a 3,000-character line without a newline does not flood the login
// screen: each "browser:" line is cut to 200 characters with "…".
func TestBrowserLinesAreCut(t *testing.T) {
	var out bytes.Buffer
	b := &browserLines{w: &out}
	long := strings.Repeat("x", 3000)
	b.Write([]byte(long[:1500]))
	b.Write([]byte(long[1500:]))
	b.flush()
	b.Write([]byte("short line\n" + strings.Repeat("y", 250) + "\n"))
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("want 3 lines, got %q", lines)
	}
	for _, l := range []string{lines[0], lines[2]} {
		if n := utf8.RuneCountInString(strings.TrimPrefix(l, "browser: ")); n != maxBrowserLine || !strings.HasSuffix(l, "…") {
			t.Errorf("line of %d characters not cut with …: %q", n, l)
		}
	}
	if lines[1] != "browser: short line" {
		t.Errorf("short line changed: %q", lines[1])
	}
}
