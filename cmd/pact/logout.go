package main

import (
	"github.com/spf13/cobra"
)

func newLogoutCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:               "logout BRAND",
		Short:             "Forget a Brand's delegation token",
		Args:              exactArgs(1, "logout needs a BRAND"),
		ValidArgsFunction: a.completeBrands,
		RunE: func(cmd *cobra.Command, args []string) error {
			ag, err := a.agent()
			if err != nil {
				return err
			}
			out, err := ag.Logout(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(map[string]any{"brand": out.CardURL, "brandName": out.Brand.Name, "removed": out.Removed})
			}
			a.io.Eprintf("%s forgot the delegation token for %s\n", a.io.ErrStyles().Success.Render("✓"), args[0])
			return nil
		},
	}
}
