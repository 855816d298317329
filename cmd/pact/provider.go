package main

import (
	"github.com/spf13/cobra"

	"github.com/pact-cli/pact/httpx"
	"github.com/pact-cli/pact/profile"
)

func newProviderCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "provider", Short: "Manage Provider registrations (Provider URL → the audience it assigned you)"}
	var audience string
	add := &cobra.Command{
		Use:   "add URL --audience AUD",
		Short: "Record the audience a Provider assigned to this personal agent",
		Long: `Record a Provider registration. URL is the Provider's URL: every Brand
whose interface URL starts with it (scheme, host, port, then whole path
segments; the longest match wins) is reached with this audience. pact looks
once whether anything answers at URL and warns if nothing does; the Provider
is registered either way (it may not be running yet). Adding a URL already
registered replaces its audience and says so, old and new: a wrong audience
is refused on every send, and the refusal names the change.`,
		Args: exactArgs(1, "provider add needs the Provider URL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := a.prof()
			if err != nil {
				return err
			}
			reg, replaced, err := p.SetProvider(args[0], audience)
			if err != nil {
				return err
			}
			// A quick look whether anything answers there: a typo in the
			// URL shows now rather than at the first send. Only a warning:
			// registering a Provider that is not up yet (offline) is fine.
			unreachable := httpx.Probe(cmd.Context(), a.httpClient(), reg.URL)
			if a.json {
				if err := a.printJSON(reg); err != nil {
					return err
				}
			} else if replaced != "" {
				// Never silent: every PA JWT to this Provider's Brands
				// now carries the new audience, and a wrong one is
				// refused on every send.
				a.io.Eprintf("%s changed the audience of %s from %s to %s\n", a.io.ErrStyles().Warning.Render("!"), reg.URL, safe(replaced), safe(reg.Audience))
				a.io.Eprintf("  Every message to its Brands now carries %s; if the Provider did not assign it, put it back: %s\n",
					safe(reg.Audience), profile.CommandWords(a.profile, "provider", "add", reg.URL, "--audience", replaced))
			} else {
				a.io.Eprintf("%s registered %s with audience %s\n", a.io.ErrStyles().Success.Render("✓"), reg.URL, safe(reg.Audience))
			}
			if unreachable != nil {
				a.io.Eprintf("%s nothing answered at %s (%s); it is registered anyway: check the URL, unless the Provider is just not running yet\n",
					a.io.ErrStyles().Warning.Render("warning:"), reg.URL, safe(unreachable.Error()))
			}
			return nil
		},
	}
	add.Flags().StringVar(&audience, "audience", "", "the audience the Provider assigned (required)")
	list := &cobra.Command{
		Use:   "list",
		Short: "List Provider registrations",
		Args:  exactArgs(0, "provider list takes no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, c, err := a.loadProfile()
			if err != nil {
				return err
			}
			regs := c.Providers
			if regs == nil {
				regs = []profile.Registration{}
			}
			if a.json {
				return a.printJSON(regs)
			}
			if len(regs) == 0 {
				a.io.Eprintf("No Providers registered. Add one with: pact provider add URL --audience AUD\n")
				return nil
			}
			rows := [][]string{{"URL", "AUDIENCE"}}
			for _, r := range regs {
				rows = append(rows, []string{r.URL, r.Audience})
			}
			a.io.Table(a.io.Out, rows)
			return nil
		},
	}
	remove := &cobra.Command{
		Use:   "remove URL",
		Short: "Forget a Provider registration",
		Args:  exactArgs(1, "provider remove needs the Provider URL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := a.prof()
			if err != nil {
				return err
			}
			if err := p.RemoveProvider(args[0]); err != nil {
				return err
			}
			if a.json {
				return a.printJSON(map[string]any{"url": args[0], "removed": true})
			}
			a.io.Eprintf("%s removed %s\n", a.io.ErrStyles().Success.Render("✓"), args[0])
			return nil
		},
	}
	cmd.AddCommand(add, list, remove, newProviderCheckCmd(a))
	return cmd
}
