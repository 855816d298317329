package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/pact-cli/pact/profile"
)

// identityJSON is the --json shape of init and whoami.
type identityJSON struct {
	Profile    string                 `json:"profile"`
	Issuer     string                 `json:"issuer"`
	JWKSURI    string                 `json:"jwks_uri"`
	KID        string                 `json:"kid"`
	Alg        string                 `json:"alg"`
	KeyStorage string                 `json:"keyStorage"`
	Providers  []profile.Registration `json:"providers"`
}

func (a *app) identity(p *profile.Profile, c *profile.Config) identityJSON {
	out := identityJSON{Profile: p.Name, Issuer: c.Issuer, JWKSURI: c.JWKSURI, KeyStorage: p.Secrets.Kind(), Providers: c.Providers}
	if k := c.Active(); k != nil {
		out.KID, out.Alg = k.KID, k.Alg
	}
	if out.Providers == nil {
		out.Providers = []profile.Registration{}
	}
	return out
}

func (a *app) printIdentity(id identityJSON, where string) {
	st := a.io.OutStyles()
	rows := [][]string{
		{"profile", id.Profile},
		{"issuer", id.Issuer},
		{"jwks_uri", id.JWKSURI},
		{"kid", id.KID},
		{"alg", id.Alg},
		{"keys stored in", where},
	}
	for _, r := range rows {
		a.io.Printf("%s %s\n", st.Faint.Render(fmt.Sprintf("%-15s", r[0])), r[1])
	}
	if len(id.Providers) == 0 {
		a.io.Printf("%s %s\n", st.Faint.Render(fmt.Sprintf("%-15s", "providers")), "none registered (pact provider add URL --audience AUD)")
	}
	for i, pr := range id.Providers {
		label := ""
		if i == 0 {
			label = "providers"
		}
		a.io.Printf("%s %s  audience %s\n", st.Faint.Render(fmt.Sprintf("%-15s", label)), pr.URL, pr.Audience)
	}
}

func newInitCmd(a *app) *cobra.Command {
	var issuer, jwksURI, alg string
	var force bool
	cmd := &cobra.Command{
		Use:   "init --issuer URL [--alg ES256|RS256] [--jwks-uri URL] [--force]",
		Short: "Create this profile's identity: a signing key and a pairwise-sub secret",
		Long: `Create the profile's identity (PACT §3.1): a signing key kept in the OS keyring
(or a 0600 file with PACT_KEYRING=file) and a secret from which a different,
stable, anonymous sub is derived for each Provider.

Running it again keeps the key (use --force to replace it). It prints the
registration a Provider needs: issuer and jwks_uri.`,
		Args: exactArgs(0, "init takes no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if issuer == "" {
				return usageError{fmt.Errorf("--issuer is required, for example: pact init --issuer https://pa.example.com")}
			}
			if alg != "ES256" && alg != "RS256" {
				return usageError{fmt.Errorf("--alg must be ES256 or RS256 (§3.2), not %q", alg)}
			}
			p, err := a.prof()
			if err != nil {
				return err
			}
			if p.Secrets.Kind() == "file" {
				a.io.Eprintf("note: PACT_KEYRING=file: secrets are stored in %s\n", p.Secrets.Where())
			}
			res, err := p.Init(issuer, jwksURI, alg, force)
			if err != nil {
				return err
			}
			id := a.identity(p, res.Config)
			if a.json {
				return a.printJSON(id)
			}
			st := a.io.ErrStyles()
			if res.Created {
				a.io.Eprintf("%s created a new %s signing key %s\n", st.Success.Render("✓"), id.Alg, id.KID)
			} else {
				a.io.Eprintf("%s kept the existing key %s (use --force to replace it)\n", st.Success.Render("✓"), id.KID)
			}
			if res.PreviousIssuer != "" {
				a.io.Eprintf("%s the issuer changed from %s to %s: Providers match it exactly, so register again with each of them\n",
					st.Warning.Render("!"), res.PreviousIssuer, id.Issuer)
			}
			a.printIdentity(id, p.Secrets.Where())
			a.io.Eprintf("\nGive the Provider your issuer and jwks_uri; it assigns you an audience. Then:\n  pact jwks serve            # publish your keys at the jwks_uri\n  pact provider add URL --audience AUDIENCE\n")
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&issuer, "issuer", "", "your issuer URL: it goes in iss and is client_id (https, or http on loopback)")
	f.StringVar(&jwksURI, "jwks-uri", "", "where your JWKS is published (default {issuer}/.well-known/jwks.json)")
	f.StringVar(&alg, "alg", "ES256", "signing algorithm: ES256 or RS256")
	f.BoolVar(&force, "force", false, "replace the signing key")
	return cmd
}

func newWhoamiCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "whoami",
		Short: "Show this profile's identity, keys' storage and registered Providers",
		Args:  exactArgs(0, "whoami takes no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, c, err := a.loadProfile()
			if err != nil {
				return err
			}
			id := a.identity(p, c)
			if a.json {
				return a.printJSON(id)
			}
			a.printIdentity(id, p.Secrets.Where())
			return nil
		},
	}
}

type keyJSON struct {
	KID     string    `json:"kid"`
	Alg     string    `json:"alg"`
	Active  bool      `json:"active"`
	Created time.Time `json:"created"`
}

func newKeyCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "key", Short: "List, rotate and retire signing keys"}
	list := &cobra.Command{
		Use:   "list",
		Short: "List signing keys (all are published in the JWKS)",
		Args:  exactArgs(0, "key list takes no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, c, err := a.loadProfile()
			if err != nil {
				return err
			}
			out := []keyJSON{}
			for _, k := range c.Keys {
				out = append(out, keyJSON{KID: k.KID, Alg: k.Alg, Active: k.Active, Created: k.Created})
			}
			if a.json {
				return a.printJSON(out)
			}
			rows := [][]string{{"KID", "ALG", "ACTIVE", "CREATED"}}
			for _, k := range out {
				active := ""
				if k.Active {
					active = "yes"
				}
				rows = append(rows, []string{k.KID, k.Alg, active, k.Created.Local().Format(humanTime)})
			}
			a.io.Table(a.io.Out, rows)
			return nil
		},
	}
	var alg string
	rotate := &cobra.Command{
		Use:   "rotate [--alg ES256|RS256]",
		Short: "Make a new active key; the old one stays published until retired",
		Args:  exactArgs(0, "key rotate takes no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if alg != "" && alg != "ES256" && alg != "RS256" {
				return usageError{fmt.Errorf("--alg must be ES256 or RS256, not %q", alg)}
			}
			p, err := a.prof()
			if err != nil {
				return err
			}
			var previous string
			if c, err := p.Load(); err == nil && c.Active() != nil {
				previous = c.Active().KID
			}
			k, err := p.Rotate(alg)
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(keyJSON{KID: k.KID, Alg: k.Alg, Active: true, Created: k.Created})
			}
			a.io.Eprintf("%s new active key %s (%s)\n", a.io.ErrStyles().Success.Render("✓"), k.KID, k.Alg)
			if previous != "" {
				// `--`: a kid may begin with "-".
				a.io.Eprintf("The previous key %s stays published until: pact key retire -- %s\n", previous, previous)
			}
			return nil
		},
	}
	rotate.Flags().StringVar(&alg, "alg", "", "algorithm of the new key (default: the current key's)")
	retire := &cobra.Command{
		Use:   "retire [--] KID",
		Short: "Stop publishing a key and delete its private half",
		Long: `Stop publishing a key and delete its private half. The active key cannot be
retired: rotate first.

A kid is random base64url, so it may begin with "-": pact takes such a kid as
the argument it is, and ` + "`pact key retire -- KID`" + ` always works.`,
		Args:              exactArgs(1, "key retire needs the kid to retire (see `pact key list`)"),
		ValidArgsFunction: a.completeKIDs,
		Annotations:       map[string]string{dashArgsAnnotation: "kid"},
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := a.prof()
			if err != nil {
				return err
			}
			if err := p.Retire(args[0]); err != nil {
				return err
			}
			if a.json {
				return a.printJSON(map[string]any{"kid": args[0], "retired": true})
			}
			a.io.Eprintf("%s retired key %s\n", a.io.ErrStyles().Success.Render("✓"), args[0])
			return nil
		},
	}
	cmd.AddCommand(list, rotate, retire)
	return cmd
}

func (a *app) completeKIDs(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	_, c, err := a.loadProfile()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, k := range c.Keys {
		out = append(out, k.KID)
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
