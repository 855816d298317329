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
