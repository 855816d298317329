package reply

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

func parts() []*a2a.Part {
	return []*a2a.Part{
		a2a.NewTextPart("# Order A-1\n\nYour order **has shipped**.\n\n- headphones\n- `tracking` soon"),
		a2a.NewDataPart(map[string]any{"order": "A-1", "total": 42}),
		{Content: a2a.Raw([]byte("%PDF-1.7 hi")), Filename: "invoice.pdf", MediaType: "application/pdf"},
		{Content: a2a.URL("https://brand.example/p.png"), Filename: "photo.png", MediaType: "image/png"},
	}
}

// §4.2: every part of a reply is shown; plain text keeps the agent's text
// exactly (a pipe, NO_COLOR).
func TestSection4_2_PlainShowsEveryPart(t *testing.T) {
	got := Render(parts(), Options{})
	for _, want := range []string{
		"# Order A-1\n\nYour order **has shipped**.",
		"data:\n  {\n    \"order\": \"A-1\",\n    \"total\": 42\n  }",
		"file invoice.pdf (application/pdf, 11 B)",
		"file photo.png (image/png) at https://brand.example/p.png",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("plain rendering lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "\x1b") {
		t.Errorf("plain rendering has escape sequences: %q", got)
	}
}

// On a colour terminal the text is rendered as Markdown: styled, without
// the Markdown markers.
func TestMarkdownOnAColourTerminal(t *testing.T) {
	got := Render(parts()[:1], Options{Markdown: true, Width: 60, Style: "dark"})
	if !strings.Contains(got, "\x1b[") {
		t.Errorf("no styling: %q", got)
	}
	if strings.Contains(got, "**has shipped**") || !strings.Contains(got, "has shipped") {
		t.Errorf("Markdown not rendered: %q", got)
	}
	// An unknown style falls back to dark rather than failing or asking
	// the terminal.
	t.Setenv(StyleEnv, "no-such-style")
	if got2 := Render(parts()[:1], Options{Markdown: true, Width: 60}); got2 != got {
		t.Errorf("unknown style did not fall back to dark")
	}
}

// Remote text goes through Clean before any rendering.
func TestCleanIsApplied(t *testing.T) {
	p := []*a2a.Part{a2a.NewTextPart("hi\x1b]52;c;ZXZpbA==\x07"), {Content: a2a.Raw([]byte("x")), Filename: "a\x1b[2J.txt"}}
	clean := func(s string) string {
		return strings.ReplaceAll(strings.ReplaceAll(s, "\x1b", "\\x1b"), "\x07", "\\x07")
	}
	for _, md := range []bool{false, true} {
		if got := Render(p, Options{Markdown: md, Clean: clean}); strings.ContainsAny(got, "\x07") || strings.Contains(got, "\x1b]52") || strings.Contains(got, "\x1b[2J") {
			t.Errorf("markdown=%v: raw control bytes reached the output: %q", md, got)
		}
	}
}

// Save writes inline files under safe names, never overwriting, never
// outside the folder; links are not downloaded.
func TestSaveFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	ps := append(parts(), &a2a.Part{Content: a2a.Raw([]byte("evil")), Filename: "../../.bashrc"}, &a2a.Part{Content: a2a.Raw([]byte("anon"))})
	saved, err := Save(ps, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(saved) != 3 {
		t.Fatalf("saved %d files, want 3: %+v", len(saved), saved)
	}
	want := map[string]string{"invoice.pdf": "%PDF-1.7 hi", "bashrc": "evil", "file-6": "anon"}
	for name, content := range want {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(b) != content {
			t.Errorf("%s = %q, %v", name, b, err)
		}
	}
	again, err := Save(ps[2:3], dir)
	if err != nil || len(again) != 1 || filepath.Base(again[0].Path) != "invoice (2).pdf" {
		t.Fatalf("second save = %+v, %v", again, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "invoice.pdf")); string(b) != "%PDF-1.7 hi" {
		t.Error("the first file was overwritten")
	}
	entries, _ := os.ReadDir(filepath.Dir(dir))
	if len(entries) != 1 {
		t.Errorf("files written outside the folder: %v", entries)
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1536: "1.5 KiB", 3 << 20: "3.0 MiB"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}
