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
change are not rewritten. See "Publishing your identity" in the README.`,
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
			a.io.Eprintf("%s wrote the static site of profile %q to %s\n\nUpload it so that each file answers at its URL:\n", st.Success.Render("✓"), p.Name, args[0])
			w := 0
			for _, f := range files {
				w = max(w, len(f.Rel))
			}
			for _, f := range files {
				where := f.URL + "  " + st.Faint.Render("Content-Type: "+f.ContentType)
				if f.URL == "" {
					where = st.Faint.Render("(GitHub Pages only: makes it publish the .well-known folder)")
				}
				a.io.Eprintf("  %-*s  →  %s\n", w, f.Rel, where)
			}
			a.io.Eprintf("\nThen check it as a Provider would: %s\n", profile.Command(p.Name, "doctor"))
			return nil
		},
	}
}
