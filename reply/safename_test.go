package reply

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// Issue 31 item 18: a long file name from a Brand was cut at 200 bytes,
// inside a UTF-8 character (an invalid name) and without its extension
// (a PDF saved as a file no program opens). It is cut on a character
// boundary, its extension kept, and saving it works.
func TestIssue31_18_LongFileNamesAreCutOnACharacterAndKeepTheirExtension(t *testing.T) {
	for _, tc := range []struct{ name, ext string }{
		{strings.Repeat("é", 150) + ".pdf", ".pdf"},         // 2-byte characters: byte 200 is mid-character at an odd cut
		{"x" + strings.Repeat("日本", 80) + ".tar.gz", ".gz"}, // 3-byte characters
		{strings.Repeat("a", 199) + "€€€.json", ".json"},
		{strings.Repeat("🙂", 70) + ".png", ".png"}, // 4-byte characters
	} {
		got := SafeName(tc.name, 0)
		if !utf8.ValidString(got) || len(got) > 200 || !strings.HasSuffix(got, tc.ext) {
			t.Errorf("SafeName(%d-byte %q…) = %q (%d bytes, valid UTF-8: %v), want ≤ 200 bytes ending in %s",
				len(tc.name), tc.name[:12], got, len(got), utf8.ValidString(got), tc.ext)
			continue
		}
		if stem := strings.TrimSuffix(got, tc.ext); len(stem) < 150 {
			t.Errorf("SafeName kept only %d bytes of the name: %q", len(stem), got)
		}
		dir := t.TempDir()
		path, err := WriteNew(dir, got, []byte("x"), 2)
		if err != nil {
			t.Fatal(err)
		}
		again, err := WriteNew(dir, got, []byte("x"), 2)
		if err != nil || !strings.HasSuffix(again, " (2)"+tc.ext) {
			t.Fatalf("a second copy: %q, %v", again, err)
		}
		if _, err := os.Stat(filepath.Join(dir, filepath.Base(path))); err != nil {
			t.Fatal(err)
		}
	}
	// An "extension" that is most of the name is not one: cut as a whole.
	long := "report." + strings.Repeat("ü", 150)
	if got := SafeName(long, 0); !utf8.ValidString(got) || len(got) > 200 || !strings.HasPrefix(got, "report.") {
		t.Errorf("SafeName(%q…) = %q", long[:12], got)
	}
}
