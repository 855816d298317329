// Package reply shows an agent's reply (the parts of an A2A Message, PACT
// §4.2) to people: text parts as Markdown on a colour terminal (Markdown)
// or as plain text; data parts as indented JSON; file parts as their name,
// media type and size, which Save can write to a folder. Nothing is
// dropped, and nothing here queries the terminal.
package reply

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/rivo/uniseg"
)

// StyleEnv names the environment variable that picks the Markdown theme
// (ThemeNamed): "dark", "light" or "plain" ("ascii" and "notty" are
// "plain"). Unset or unknown: "dark". The theme is never guessed by
// querying the terminal's background colour.
const StyleEnv = "PACT_MARKDOWN_STYLE"

// Options say how to render.
type Options struct {
	// Markdown renders text parts as Markdown with colours and styles:
	// only for a terminal with colour on (not NO_COLOR, not a pipe).
	Markdown bool
	// Width is the wrap width of Markdown in columns; 0 = 80.
	Width int
	// Style names the theme (ThemeNamed); "" = $PACT_MARKDOWN_STYLE, else
	// "dark".
	Style string
	// Clean makes remote text safe for a terminal (escape sequences shown,
	// not run); nil = keep the text as received (a pipe, a file).
	Clean func(string) string
}

// Render returns parts for people, each part separated by a blank line,
// without a trailing newline.
//
//   - text: as is, or rendered as Markdown when o.Markdown;
//   - data: "data:" and the value as JSON indented by two spaces;
//   - file: "file NAME (MEDIA TYPE, SIZE)" for inline bytes, "file NAME
//     (MEDIA TYPE) at URL" for a link.
//
// Markdown is drawn by Markdown (this package), which sanitises every
// piece of text it draws whatever Clean is.
func Render(parts []*a2a.Part, o Options) string {
	clean := o.Clean
	if clean == nil {
		clean = func(s string) string { return s }
	}
	var out []string
	for i, p := range parts {
		if p == nil {
			continue
		}
		switch c := p.Content.(type) {
		case a2a.Text:
			text := clean(string(c))
			if o.Markdown {
				text = Markdown(text, o.width(), o.theme())
			}
			out = append(out, text)
		case a2a.Data:
			b, err := json.MarshalIndent(c.Value, "  ", "  ")
			if err != nil {
				b = []byte(fmt.Sprintf("%v", c.Value))
			}
			out = append(out, "data:\n  "+clean(string(b)))
		case a2a.Raw:
			out = append(out, fmt.Sprintf("file %s (%s, %s)", clean(displayName(p, i)), clean(mediaType(p)), Size(int64(len(c)))))
		case a2a.URL:
			out = append(out, fmt.Sprintf("file %s (%s) at %s", clean(displayName(p, i)), clean(mediaType(p)), clean(string(c))))
		}
	}
	return strings.Join(out, "\n\n")
}

func (o Options) width() int {
	if o.Width <= 0 {
		return 80
	}
	return o.Width
}

func (o Options) theme() Theme {
	if o.Style != "" {
		return ThemeNamed(o.Style)
	}
	return ThemeNamed(os.Getenv(StyleEnv))
}

// HasFiles reports whether parts hold a file part.
func HasFiles(parts []*a2a.Part) bool {
	for _, p := range parts {
		if p == nil {
			continue
		}
		switch p.Content.(type) {
		case a2a.Raw, a2a.URL:
			return true
		}
	}
	return false
}

// Saved is a file part written by Save.
type Saved struct {
	Name string // the part's file name as shown
	Path string // where it was written
	Size int64
}

// Save writes the inline file parts (bytes) to dir, creating it (0700),
// each as a new file (0600, created exclusively) named after the part's
// file name reduced to a safe base name (no folders, no leading dot); an
// existing file is never overwritten: "name (2).ext" and so on. File parts
// that are links are not downloaded. Errors name the file.
func Save(parts []*a2a.Part, dir string) ([]Saved, error) {
	var saved []Saved
	for i, p := range parts {
		if p == nil {
			continue
		}
		raw, ok := p.Content.(a2a.Raw)
		if !ok {
			continue
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return saved, fmt.Errorf("creating %s: %w", dir, err)
		}
		path, err := WriteNew(dir, SafeName(p.Filename, i), raw, 2)
		if err != nil {
			return saved, err
		}
		saved = append(saved, Saved{Name: displayName(p, i), Path: path, Size: int64(len(raw))})
	}
	return saved, nil
}

// WriteNew writes data to a new file dir/name, or dir/"name (n).ext" for
// the first n from firstCopy on whose file does not exist yet (created
// exclusively, so an existing file is never replaced), and returns its
// path. A failed write leaves no partial file.
func WriteNew(dir, name string, data []byte, firstCopy int) (string, error) {
	ext := filepath.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	for n := firstCopy - 1; n < 1000; n++ {
		candidate := name
		if n >= firstCopy {
			candidate = fmt.Sprintf("%s (%d)%s", stem, n, ext)
		}
		path := filepath.Join(dir, candidate)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("saving %s: %w", path, err)
		}
		_, err = f.Write(data)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(path)
			return "", fmt.Errorf("saving %s: %w", path, err)
		}
		return path, nil
	}
	return "", fmt.Errorf("no free file name for %s in %s", name, dir)
}

// maxName is the longest file name SafeName gives, in bytes (file
// systems take 255; WriteNew may add " (999)").
const maxName = 200

// maxExt is the longest extension SafeName keeps when it shortens a name;
// a longer "extension" is part of the name.
const maxExt = 16

// SafeName reduces a remote file name to a base name made of printable
// characters, without path separators or a leading dot, of at most 200
// bytes: a longer one is cut between two characters (grapheme clusters, so
// never inside a UTF-8 sequence or an accent), keeping its extension (up
// to 16 bytes: ".pdf", ".json"). "" or nothing left gives "file-N".
func SafeName(name string, i int) string {
	name = strings.ReplaceAll(name, "\\", "/")
	if j := strings.LastIndex(name, "/"); j >= 0 {
		name = name[j+1:]
	}
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || !unicode.IsPrint(r) || r == ':' {
			return '_'
		}
		return r
	}, name)
	name = strings.TrimLeft(strings.TrimSpace(strings.ToValidUTF8(name, "_")), ".")
	if len(name) > maxName {
		ext := filepath.Ext(name)
		if len(ext) > maxExt || ext == name {
			ext = ""
		}
		name = cutBytes(strings.TrimSuffix(name, ext), maxName-len(ext)) + ext
	}
	if name == "" {
		return fmt.Sprintf("file-%d", i+1)
	}
	return name
}

// cutBytes is the longest prefix of s of at most n bytes that ends between
// two grapheme clusters.
func cutBytes(s string, n int) string {
	end := 0
	g := uniseg.NewGraphemes(s)
	for g.Next() {
		_, to := g.Positions()
		if to > n {
			break
		}
		end = to
	}
	return s[:end]
}

func displayName(p *a2a.Part, i int) string {
	if p.Filename != "" {
		return p.Filename
	}
	return fmt.Sprintf("file-%d", i+1)
}

func mediaType(p *a2a.Part) string {
	if p.MediaType != "" {
		return p.MediaType
	}
	return "unknown type"
}

// Size is n bytes in words: "512 B", "1.5 KiB", "3.2 MiB".
func Size(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
}
