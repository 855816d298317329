package main

import (
	"github.com/spf13/cobra"

	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/publish"
)

func newJWKSExportCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "export DIR",
		Short: "Write a static site with your public keys, to upload to your issuer's host",
		Long: `Write what Providers fetch to verify you as static files:

  DIR/.well-known/openid-configuration   {"issuer", "jwks_uri"}
  DIR/.well-known/jwks.json              every published key (active, staged,
                                         not yet retired), public members only
  DIR/.nojekyll                          lets GitHub Pages publish .well-known

Upload DIR so that it answers at your issuer. Run it again after
` + "`pact key rotate`" + ` and ` + "`pact key retire`" + `, and upload again. Files that did not
change are not rewritten (shown as unchanged). See "Publishing your identity" in the README.`,
		Args: exactArgs(1, "jwks export needs the folder to write the site into"),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, c, err := a.loadProfile()
			if err != nil {
				return err
			}
			files, err := publish.Export(args[0], c)
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(map[string]any{"dir": args[0], "issuer": c.Issuer, "jwks_uri": c.JWKSURI, "files": files})
			}
			st := a.io.ErrStyles()
			changed := 0
			for _, f := range files {
				if f.Changed {
					changed++
				}
			}
			if changed == 0 {
				a.io.Eprintf("%s the static site of profile %q in %s is unchanged: nothing new to upload\n\nIf it is not uploaded yet, each file must answer at its URL:\n",
					st.Success.Render("✓"), p.Name, args[0])
			} else {
				a.io.Eprintf("%s wrote the static site of profile %q to %s (%d of %d files changed)\n\nUpload it so that each file answers at its URL:\n",
					st.Success.Render("✓"), p.Name, args[0], changed, len(files))
			}
			rows := [][]string{{"  FILE", "URL", "CONTENT-TYPE", "THIS RUN"}}
			for _, f := range files {
				url, ctype, state := f.URL, f.ContentType, "unchanged"
				if f.URL == "" {
					url, ctype = "(GitHub Pages only)", "-"
				}
				if f.Changed {
					state = "written"
				}
				rows = append(rows, []string{"  " + f.Rel, url, ctype, state})
			}
			a.io.Table(a.io.ErrOut, rows)
			a.io.Eprintf("  %s\n", st.Faint.Render(".nojekyll makes GitHub Pages publish the .well-known folder; other hosts ignore it."))
			a.io.Eprintf("\nThen check it as a Provider would: %s\n", profile.Command(p.Name, "doctor"))
			return nil
		},
	}
}
