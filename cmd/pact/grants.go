package main

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/discovery"
	"github.com/pact-cli/pact/profile"
)

type grantJSON struct {
	Brand        string    `json:"brand"` // card URL
	BrandName    string    `json:"brandName"`
	InterfaceURL string    `json:"interfaceUrl"`
	Scopes       []string  `json:"scopes"`
	GrantID      string    `json:"grantId"`
	ExpiresAt    time.Time `json:"expiresAt"`
	Refreshable  bool      `json:"refreshable"`
	// Dead and DeadSince: refused and not refreshable; identity only
	// until `pact login` (see delegation.Grant.MarkDead).
	Dead      bool       `json:"dead"`
	DeadSince *time.Time `json:"deadSince,omitempty"`
}

func newGrantsCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "grants",
		Short: "List stored delegation grants: brand, scopes, expiry, grant id",
		Args:  exactArgs(0, "grants takes no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := a.sessionOptions()
			if err != nil {
				return err
			}
			list, err := conversation.ListGrants(opts)
			if err != nil {
				return err
			}
			ix := a.brandIndex(opts)
			out := []grantJSON{}
			for _, g := range list {
				ref, _ := ix.lookup(g.InterfaceURL)
				out = append(out, grantJSON{g.Brand, ref.Name, g.InterfaceURL, nonNil(g.Scopes), g.GrantID, g.ExpiresAt, g.Refreshable, g.Dead, g.DeadSince})
			}
			sort.Slice(out, func(i, j int) bool { return out[i].Brand < out[j].Brand })
			if a.json {
				return a.printJSON(out)
			}
			if len(out) == 0 {
				a.io.Eprintf("No delegation grants. Give one with: pact login BRAND --scope ID\n")
				return nil
			}
			rows := [][]string{{"BRAND", "SCOPES", "EXPIRES", "GRANT"}}
			var relogin []string
			for _, g := range out {
				exp := g.ExpiresAt.Local().Format(humanTime)
				if g.Refreshable {
					exp += " (refreshable)"
				}
				label := brandLabel(g.BrandName, g.Brand, g.InterfaceURL)
				if g.Dead {
					exp = "dead"
					if g.DeadSince != nil {
						exp += " since " + g.DeadSince.Local().Format(humanTime)
					}
					exp += " (the Brand no longer accepts it; run pact login again)"
					login := []string{"login", discovery.BrandArg(g.Brand)}
					for _, sc := range g.Scopes {
						login = append(login, "--scope", sc)
					}
					relogin = append(relogin, fmt.Sprintf("to delegate to %s again: %s", line(label), line(profile.CommandWords(opts.Profile.Name, login...))))
				}
				rows = append(rows, []string{label, strings.Join(g.Scopes, " "), exp, g.GrantID})
			}
			a.io.Table(a.io.Out, rows)
			for _, l := range relogin {
				a.io.Eprintf("%s %s\n", a.io.ErrStyles().Warning.Render("!"), l)
			}
			return nil
		},
	}
}
