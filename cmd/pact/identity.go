package main

import (
	"fmt"

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
	// The active key's place (added in the fourth round): keyUri is its
	// URI ("keyring:", "pkcs11:…", "awskms:…"), keyLocation the place in
	// words (the keyring or file, the token and object, the KMS key's
	// ARN), keyArn a KMS key's ARN. keyStorage stays the secret store of
	// the profile's other secrets (os or file).
	KeyURI      string `json:"keyUri"`
	KeyLocation string `json:"keyLocation"`
	KeyARN      string `json:"keyArn"`
	held        bool
}

func (a *app) identity(p *profile.Profile, c *profile.Config) identityJSON {
	out := identityJSON{Profile: p.Name, Issuer: c.Issuer, JWKSURI: c.JWKSURI, KeyStorage: p.Secrets.Kind(), Providers: c.Providers}
	if k := c.Active(); k != nil {
		out.KID, out.Alg = k.KID, k.Alg
		out.KeyURI, out.KeyLocation, out.KeyARN, out.held = k.KeyURI().String(), p.Where(*k), k.KeyARN, k.KeyURI().Held()
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
	if id.held {
		rows[len(rows)-1] = []string{"signing key at", id.KeyLocation}
		rows = append(rows, []string{"secrets in", where})
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
	var issuer, jwksURI, alg, keyring, keyURI string
	var force bool
	var srv initServerFlags
	cmd := &cobra.Command{
		Use:   "init --issuer URL [--alg ES256|RS256] [--jwks-uri URL] [--keyring os|file] [--key URI] [--force] | init --server URL --code CODE",
		Short: "Create this profile's identity: a signing key and a pairwise-sub secret",
		Long: `Create the profile's identity: a signing key kept in the OS keyring
(or a 0600 file with --keyring file or PACT_KEYRING=file) and a secret from
which a different, stable, anonymous sub is derived for each Provider. The
profile records where its secrets live; later runs use that without
PACT_KEYRING (move them with ` + "`pact keyring move --to file|os`" + `).

--key puts the signing key where it signs but never leaves:

  --key 'pkcs11:token=LABEL;object=LABEL'   a PKCS#11 token (YubiKey, smart card, HSM): the key
                                            there, or a new one made there (pact built with pkcs11;
                                            module from PACT_PKCS11_MODULE or ?module-path=…;
                                            PIN from PACT_PKCS11_PIN, ` + "`pact key pin`" + `, or asked)
  --key awskms:alias/NAME                   AWS KMS (key id, ARN or alias): the key there, or a new
                                            ECC_NIST_P256 SIGN_VERIFY key with that alias
  --key awskms:                             a new AWS KMS key

See "Keys in hardware or a KMS" in the README.

Running it again keeps the key (use --force to replace it). It prints the
registration a Provider needs: issuer and jwks_uri.

With --server URL --code CODE instead, this device joins a pact server
(pact serve) as one of your devices: it makes a device key in the keyring
(or file), enrols it with the one-time code, and records a server profile.
The server's identity then speaks to Brands for you.`,
		Args: exactArgs(0, "init takes no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if srv.server != "" || srv.code != "" {
				return a.runInitServer(cmd, srv, issuer != "", keyring, force)
			}
			if issuer == "" {
				return usageError{fmt.Errorf("--issuer is required, for example: pact init --issuer https://pa.example.com")}
			}
			if alg != "ES256" && alg != "RS256" {
				return usageError{fmt.Errorf("--alg must be ES256 or RS256, not %q", alg)}
			}
			if keyring != "" {
				var err error
				if keyring, err = keyringValue(keyring, fmt.Sprintf("--keyring %q", keyring)); err != nil {
					return err
				}
			}
			// Everything given is checked before anything is said or
			// written (the note below, the secret store, profile.json).
			if err := profile.CheckIssuer(issuer); err != nil {
				return fmt.Errorf("--issuer: %w", err)
			}
			if jwksURI != "" {
				if err := profile.CheckIssuer(jwksURI); err != nil {
					return fmt.Errorf("--jwks-uri: %w", err)
				}
			}
			a.keyringFlag = keyring
			a.initFlags = []string{"--issuer", issuer}
			if cmd.Flags().Changed("alg") {
				a.initFlags = append(a.initFlags, "--alg", alg)
			}
			if jwksURI != "" {
				a.initFlags = append(a.initFlags, "--jwks-uri", jwksURI)
			}
			p, err := a.prof()
			if err != nil {
				return err
			}
			if p.Secrets.Kind() == "file" && !a.json {
				a.io.Eprintf("note: secrets are stored in %s (recorded in the profile)\n", p.Secrets.Where())
			}
			// No spinner: a PKCS#11 token may ask for its PIN on the terminal.
			res, err := p.InitKey(issuer, jwksURI, alg, keyURI, force)
			if err != nil {
				return err
			}
			id := a.identity(p, res.Config)
			if a.json {
				return a.printJSON(id)
			}
			st := a.io.ErrStyles()
			if res.Created && id.held {
				a.io.Eprintf("%s the %s signing key %s is at %s: it signs there and never leaves\n", st.Success.Render("✓"), id.Alg, id.KID, id.KeyLocation)
			} else if res.Created {
				a.io.Eprintf("%s created a new %s signing key %s\n", st.Success.Render("✓"), id.Alg, id.KID)
			} else {
				a.io.Eprintf("%s kept the existing key %s (use --force to replace it)\n", st.Success.Render("✓"), id.KID)
			}
			if res.PreviousIssuer != "" {
				a.io.Eprintf("%s the issuer changed from %s to %s: Providers match it exactly, so register again with each of them\n",
					st.Warning.Render("!"), res.PreviousIssuer, id.Issuer)
			}
			a.printIdentity(id, p.Secrets.Where())
			cmdFor := func(args string) string { return profile.Command(p.Name, args) }
			hints := [][2]string{
				{cmdFor("jwks export DIR"), "# a static site to upload to your issuer (README: Publishing your identity)"},
				{cmdFor("jwks serve"), "# or serve your keys from this machine"},
				{cmdFor("provider add URL --audience AUDIENCE"), "# with the audience the Provider assigns you"},
				{cmdFor("doctor"), "# checks it all, as a Provider sees it"},
			}
			w := 0
			for _, h := range hints {
				w = max(w, len(h[0]))
			}
			a.io.Eprintf("\nPublish your keys and give the Provider your issuer and jwks_uri:\n")
			for _, h := range hints {
				a.io.Eprintf("  %-*s  %s\n", w, h[0], st.Faint.Render(h[1]))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&issuer, "issuer", "", "your issuer URL: it goes in iss and is client_id (https, or http on loopback)")
	f.StringVar(&jwksURI, "jwks-uri", "", "where your JWKS is published (default {issuer}/.well-known/jwks.json)")
	f.StringVar(&alg, "alg", "ES256", "signing algorithm: ES256 or RS256")
	f.BoolVar(&force, "force", false, "replace the signing key")
	f.StringVar(&keyring, "keyring", "", "where to keep this profile's secrets: os or file (default PACT_KEYRING, else os); recorded in the profile")
	f.StringVar(&keyURI, "key", "", "where the signing key lives: keyring: (default), pkcs11:token=…;object=…, or awskms:KEY (see --help)")
	f.StringVar(&srv.server, "server", "", "enrol this device with a pact server at URL instead (with --code)")
	f.StringVar(&srv.code, "code", "", "the one-time enrolment code for --server")
	f.StringVar(&srv.name, "device-name", "", "this device's name at the server (default: the host name)")
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
			if c.Server != nil {
				return a.printServerProfile(p, c)
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
