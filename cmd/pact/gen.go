package main

//go:generate go run . __gen --markdown ../../docs/reference --man ../../docs/man

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/pact-cli/pact/iostreams"
)

// newGenCmd is the hidden `pact __gen`: it writes the Markdown command
// reference, the man pages (section 1) and the shell completion scripts.
// `go generate ./cmd/pact` refreshes docs/; the release (.goreleaser.yaml)
// runs it for the man pages and completions it ships.
func newGenCmd(a *app) *cobra.Command {
	var markdown, man, completions, date string
	cmd := &cobra.Command{
		Use:    "__gen [--markdown DIR] [--man DIR] [--completions DIR]",
		Short:  "Generate the command reference, man pages and shell completions",
		Hidden: true,
		Args:   exactArgs(0, "__gen takes no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if markdown == "" && man == "" && completions == "" {
				return usageError{fmt.Errorf("name at least one of --markdown, --man, --completions")}
			}
			// A snapshot outside a git checkout has no commit date (a
			// negative timestamp): the man pages are then dated today.
			if sec, err := strconv.ParseInt(date, 10, 64); err == nil && sec > 0 {
				os.Setenv("SOURCE_DATE_EPOCH", date)
			}
			jobs := []struct {
				dir string
				gen func() (map[string][]byte, error)
			}{{markdown, genMarkdown}, {man, genMan}, {completions, genCompletions}}
			for _, j := range jobs {
				if j.dir == "" {
					continue
				}
				got, err := j.gen()
				if err != nil {
					return err
				}
				if err := syncDir(j.dir, got); err != nil {
					return err
				}
				a.io.Eprintf("%s: %d files\n", j.dir, len(got))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&markdown, "markdown", "", "write the Markdown command reference into DIR")
	cmd.Flags().StringVar(&man, "man", "", "write man pages (section 1) into DIR")
	cmd.Flags().StringVar(&completions, "completions", "", "write bash, zsh, fish and PowerShell completion scripts into DIR")
	cmd.Flags().StringVar(&date, "date", "", "date of the man pages, in seconds since 1970 (default SOURCE_DATE_EPOCH, else now)")
	return cmd
}

// docsRoot is a fresh command tree whose help text does not depend on the
// environment of the machine that generates the docs.
func docsRoot() *cobra.Command {
	io, _, _, _ := iostreams.Test()
	root := newRootCmd(&app{io: io})
	root.DisableAutoGenTag = true
	return root
}

// genCompletions renders the scripts cobra's `pact completion SHELL` prints.
func genCompletions() (map[string][]byte, error) {
	root := docsRoot()
	out := map[string][]byte{}
	for name, gen := range map[string]func(*bytes.Buffer) error{
		"pact.bash": func(b *bytes.Buffer) error { return root.GenBashCompletionV2(b, true) },
		"_pact":     func(b *bytes.Buffer) error { return root.GenZshCompletion(b) },
		"pact.fish": func(b *bytes.Buffer) error { return root.GenFishCompletion(b, true) },
		"pact.ps1":  func(b *bytes.Buffer) error { return root.GenPowerShellCompletionWithDesc(b) },
	} {
		var b bytes.Buffer
		if err := gen(&b); err != nil {
			return nil, err
		}
		out[name] = b.Bytes()
	}
	return out, nil
}

// genInto runs gen on a temporary folder and returns what it wrote.
func genInto(gen func(dir string) error) (map[string][]byte, error) {
	tmp, err := os.MkdirTemp("", "pact-gen-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if err := gen(tmp); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(tmp, e.Name()))
		if err != nil {
			return nil, err
		}
		out[e.Name()] = b
	}
	return out, nil
}

// manDate matches the date field of a man page's .TH line.
//
// Compiled on first use, not at package init: every pact process pays for
// package init (issue 21).
var manDate = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^(\.TH "[^"]*" "[^"]*" )"[^"]*"`) })

// normalizeDoc drops what may change between two runs on the same source.
func normalizeDoc(b []byte) []byte { return manDate().ReplaceAll(b, []byte(`$1""`)) }

// syncDir writes files into dir: new or changed files are written (a file
// differing only in its man page date is left alone) and generated pages
// that are no longer generated (pact*.md, pact*.1) are removed.
func syncDir(dir string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	old, _ := os.ReadDir(dir)
	for _, e := range old {
		if _, keep := files[e.Name()]; !keep && isGenerated(e.Name()) {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	for name, b := range files {
		p := filepath.Join(dir, name)
		if cur, err := os.ReadFile(p); err == nil && bytes.Equal(normalizeDoc(cur), normalizeDoc(b)) {
			continue
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// staleDocs compares dir with files and lists what differs (ignoring man
// page dates): missing, changed and extra files.
func staleDocs(dir string, files map[string][]byte) []string {
	var stale []string
	for name, b := range files {
		cur, err := os.ReadFile(filepath.Join(dir, name))
		switch {
		case err != nil:
			stale = append(stale, name+" (missing)")
		case !bytes.Equal(normalizeDoc(cur), normalizeDoc(b)):
			stale = append(stale, name+" (changed)")
		}
	}
	old, _ := os.ReadDir(dir)
	for _, e := range old {
		if _, ok := files[e.Name()]; !ok && isGenerated(e.Name()) {
			stale = append(stale, e.Name()+" (no longer generated)")
		}
	}
	return stale
}

// isGenerated says whether a file name is one genMarkdown or genMan writes.
func isGenerated(name string) bool {
	return strings.HasPrefix(name, "pact") && (strings.HasSuffix(name, ".md") || strings.HasSuffix(name, ".1"))
}
