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
				return a.printJSON(map[string]string{"version": version, "commit": commit, "date": date, "go": runtime.Version()})
			}
			a.io.Printf("pact %s (commit %s, built %s, %s)\n", version, commit, date, runtime.Version())
			return nil
		},
	}
}
