package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/delegation"
	"github.com/pact-cli/pact/discovery"
)

func newLogoutCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:               "logout BRAND",
		Short:             "Forget a Brand's delegation token",
		Args:              exactArgs(1, "logout needs a BRAND"),
		ValidArgsFunction: a.completeBrands,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := a.sessionOptions()
			if err != nil {
				return err
			}
			// The grant is found offline by card URL or interface URL; if
			// neither matches, the card is fetched to learn its interface
			// URL (the brand may have been named another way at login).
			arg := strings.TrimRight(args[0], "/")
			cardURL, cerr := discovery.CardURL(args[0])
			ref, _ := a.brandIndex(opts).lookup(cardURL) // before the grant is forgotten
			n, err := conversation.ForgetBrand(opts, cardURL, arg)
			if err != nil {
				return err
			}
			if n == 0 && cerr == nil {
				if card, ferr := discovery.Fetch(cmd.Context(), a.httpClient(), cardURL); ferr == nil {
					if n, err = conversation.ForgetBrand(opts, card.URL, card.InterfaceURL); err != nil {
						return err
					}
				}
			}
			if n == 0 {
				return explained{fmt.Sprintf("no delegation is stored for %s (see `pact grants`)", args[0]), delegation.ErrNoGrant}
			}
			if a.json {
				return a.printJSON(map[string]any{"brand": cardURL, "brandName": ref.Name, "removed": n})
			}
			a.io.Eprintf("%s forgot the delegation token for %s\n", a.io.ErrStyles().Success.Render("✓"), args[0])
			return nil
		},
	}
}
