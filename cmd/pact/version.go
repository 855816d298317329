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
			s := stamp()
			if a.json {
				return a.printJSON(map[string]any{"version": s.version, "commit": s.commit, "modified": s.modified, "date": s.date, "go": runtime.Version()})
			}
			c := s.commit
			if s.modified {
				c += " with uncommitted changes"
			}
			when := "built " + s.date
			if s.commitTime {
				when = "committed " + s.date
			}
			a.io.Printf("pact %s (commit %s, %s, %s)\n", s.version, c, when, runtime.Version())
			return nil
		},
	}
}
