package main

import (
	"runtime"

	"github.com/spf13/cobra"
)

func newVersionCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  exactArgs(0, "version takes no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if a.json {
				return a.printJSON(map[string]any{"version": version, "commit": commit, "modified": modified, "date": date, "go": runtime.Version()})
			}
			c := commit
			if modified {
				c += " with uncommitted changes"
			}
			when := "built " + date
			if commitTime {
				when = "committed " + date
			}
			a.io.Printf("pact %s (commit %s, %s, %s)\n", version, c, when, runtime.Version())
			return nil
		},
	}
}
