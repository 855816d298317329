package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/pact-cli/pact/iostreams"
)

// Help is for people without the spec: no command's help text or flag
// description cites a § of it (those stay in code comments and docs/).
func TestHelpHasNoSpecSectionNumbers(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	root := newRootCmd(&app{io: ios})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for what, text := range map[string]string{"Short": c.Short, "Long": c.Long, "Example": c.Example} {
			if strings.Contains(text, "§") {
				t.Errorf("%s: %s cites a spec section: %q", c.CommandPath(), what, text)
			}
		}
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if strings.Contains(f.Usage, "§") {
				t.Errorf("%s --%s: usage cites a spec section: %q", c.CommandPath(), f.Name, f.Usage)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// Issue 31 item 17: every command's help has an Examples section (as every
// gh command has), and no example names a command that is not there.
func TestIssue31_17_EveryCommandHasExamples(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	root := newRootCmd(&app{io: ios})
	seen := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		path := strings.TrimPrefix(strings.TrimPrefix(c.CommandPath(), "pact"), " ")
		seen[path] = true
		if !c.Hidden && strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s: no Examples in its help", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	for path := range examples {
		if !seen[path] {
			t.Errorf("examples has %q, which is no command", path)
		}
	}
	var out strings.Builder
	c, _, _ := root.Find([]string{"send"})
	c.SetOut(&out)
	c.Help()
	if !strings.Contains(out.String(), "Examples:\n  $ pact send brand.example.com") {
		t.Errorf("pact send --help shows no Examples section:\n%s", out.String())
	}
}

// The examples run: each "$ pact …" line names a command that exists and
// only flags that command has (what follows a |, > or & is another
// program's).
func TestIssue31_17_ExamplesNameRealCommandsAndFlags(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	root := newRootCmd(&app{io: ios})
	for path, ex := range examples {
		for _, l := range strings.Split(ex, "\n") {
			i := strings.Index(l, "pact ")
			if !strings.HasPrefix(strings.TrimSpace(l), "$") || i < 0 {
				continue
			}
			words := shellWords(l[i+len("pact "):])
			c, _, err := root.Find(words)
			if err != nil || c == root && len(words) > 0 && !strings.HasPrefix(words[0], "-") {
				t.Errorf("examples[%q]: %q names no command (%v)", path, l, err)
				continue
			}
			for _, w := range words {
				if w == "--" {
					break
				}
				name, _, _ := strings.Cut(strings.TrimPrefix(w, "--"), "=")
				if strings.HasPrefix(w, "--") && lookupFlag(c, name) == nil {
					t.Errorf("examples[%q]: %q: %s has no flag --%s", path, l, c.CommandPath(), name)
				}
			}
		}
	}
}

// shellWords splits a command line as a shell would for these examples:
// blanks separate words, '…' and "…" quote, and it stops at |, > or &.
func shellWords(s string) []string {
	var out []string
	var cur strings.Builder
	in, quote := false, rune(0)
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		case r == '|' || r == '>' || r == '&':
			if in {
				out = append(out, cur.String())
			}
			return out
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}
