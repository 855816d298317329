package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/pact-cli/pact/jwks"
	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/publish"
)

// errKeyNotLive: `pact key activate` refused a key the live jwks_uri does
// not serve (exit 1, KEY_NOT_LIVE).
var errKeyNotLive = errors.New("the key is not live at the jwks_uri")

// liveTimeout bounds the look at the live JWKS in `pact key list`.
const liveTimeout = 3 * time.Second

// keyCheckTimeout bounds `pact key activate`'s check that the key signs.
const keyCheckTimeout = 30 * time.Second

// keyJSON is one item of `pact key list --json` (and the answer of key
// rotate / key activate). Live is true or false when the jwks_uri was
// fetched, null when it could not be ("unknown").
type keyJSON struct {
	KID     string    `json:"kid"`
	Alg     string    `json:"alg"`
	State   string    `json:"state"` // active, staged or published
	Active  bool      `json:"active"`
	Created time.Time `json:"created"`
	Live    *bool     `json:"live"`
	// Where the private half lives (added in the fourth round): uri is
	// the key URI ("keyring:", "pkcs11:…", "awskms:…"), storage its kind
	// (os, file, pkcs11, awskms), location the place in words (the OS
	// keyring or file, the token and object, the KMS key's ARN), keyArn
	// a KMS key's ARN.
	URI      string `json:"uri"`
	Storage  string `json:"storage"`
	Location string `json:"location"`
	KeyARN   string `json:"keyArn"`
}

func keyOut(p *profile.Profile, k profile.KeyInfo, live *publish.Live) keyJSON {
	out := keyJSON{KID: k.KID, Alg: k.Alg, State: k.State(), Active: k.Active, Created: k.Created,
		URI: k.KeyURI().String(), Storage: p.Storage(k), Location: p.Where(k), KeyARN: k.KeyARN}
	if live != nil && live.JWKSErr == nil {
		has := live.Has(k) == nil
		out.Live = &has
	}
	return out
}

func newKeyCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "key",
		Short: "List, rotate, activate and retire signing keys",
		Long: `Rotate a signing key without an outage:

  pact key rotate                 # a new STAGED key: published, not signing yet
  pact jwks export DIR            # re-export and upload (or keep pact jwks serve running)
  pact key activate -- NEWKID     # signs from now on, once the live jwks_uri serves it
  pact key retire -- OLDKID       # later, once no token signed by it is in flight

Kids may start with "-": put "--" before them.`,
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List signing keys with their state and whether the live JWKS has them",
		Args:  exactArgs(0, "key list takes no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, c, err := a.loadProfile()
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), liveTimeout)
			sp := a.spinner("Looking at " + c.JWKSURI)
			live := publish.FetchJWKS(ctx, a.httpClient(), c)
			sp.Stop()
			cancel()
			out := []keyJSON{}
			for _, k := range c.Keys {
				out = append(out, keyOut(p, k, live))
			}
			if a.json {
				return a.printJSON(out)
			}
			st := a.io.OutStyles()
			rows := [][]string{{"KID", "ALG", "STATE", "LIVE", "CREATED", "WHERE"}}
			for _, k := range out {
				state := k.State
				switch k.State {
				case profile.StateActive:
					state = st.Success.Render(state)
				case profile.StateStaged:
					state = st.Warning.Render(state)
				}
				liveCol := st.Faint.Render("unknown")
				if k.Live != nil && *k.Live {
					liveCol = st.Success.Render("yes")
				} else if k.Live != nil {
					liveCol = st.Error.Render("no")
				}
				rows = append(rows, []string{k.KID, k.Alg, state, liveCol, k.Created.Local().Format(humanTime), k.Location})
			}
			a.io.Table(a.io.Out, rows)
			if live.JWKSErr != nil {
				a.io.Eprintf("%s live JWKS unknown: %v\n", a.io.ErrStyles().Faint.Render("·"), live.JWKSErr)
			}
			return nil
		},
	}
	var alg, keyURI string
	rotate := &cobra.Command{
		Use:   "rotate [--alg ES256|RS256] [--key URI]",
		Short: "Add a staged key: published at once, signing only after `pact key activate`; prints its kid",
		Long: `Add a staged key: published in your JWKS at once, signing only after
` + "`pact key activate`" + `. It prints the new kid.

The new key is made where the active key lives (the keyring or file; a new
object on the same PKCS#11 token; a new AWS KMS key), or where --key says:

  --key keyring:                               the profile's keyring (or its 0600 file)
  --key 'pkcs11:token=LABEL;object=LABEL'      a key on a PKCS#11 token: made there, or the one there
  --key awskms:alias/NAME                      an AWS KMS key: the one the alias names, or a new one with it
  --key awskms:                                a new AWS KMS key (ECC_NIST_P256, SIGN_VERIFY)

See "Keys in hardware or a KMS" in the README (the PIN, the IAM policy).`,
		Args: exactArgs(0, "key rotate takes no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if alg != "" && alg != "ES256" && alg != "RS256" {
				return usageError{fmt.Errorf("--alg must be ES256 or RS256, not %q", alg)}
			}
			p, err := a.prof()
			if err != nil {
				return err
			}
			k, err := p.RotateKey(alg, keyURI) // no spinner: a token may ask for its PIN
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(keyOut(p, k, nil))
			}
			// The kid alone on stdout (K=$(pact key rotate)); prose on stderr.
			a.io.Printf("%s\n", k.KID)
			st := a.io.ErrStyles()
			a.io.Eprintf("%s new staged key %s (%s, %s): the current key keeps signing until you activate it\n", st.Success.Render("✓"), k.KID, k.Alg, p.Where(k))
			a.io.Eprintf("Next:\n  %s   # then upload DIR (or keep `%s` running)\n  %s\n",
				profile.Command(p.Name, "jwks export DIR"), profile.Command(p.Name, "jwks serve"),
				profile.Command(p.Name, "key activate -- "+k.KID))
			return nil
		},
	}
	rotate.Flags().StringVar(&alg, "alg", "", "algorithm of the new key (default: the current key's; a key already on a token or in KMS has its own)")
	rotate.Flags().StringVar(&keyURI, "key", "", "where the new key lives: keyring:, pkcs11:…, awskms:… (default: where the active key lives)")
	var force bool
	activate := &cobra.Command{
		Use:   "activate [--force] -- KID",
		Short: "Sign with KID from now on, once the live jwks_uri serves it",
		Long: `Make KID the key that signs PA JWTs. pact first fetches your jwks_uri, as a
Provider would, and refuses unless it serves KID with the same public key:
a Provider that cannot find the kid refuses every request. --force
activates it anyway, with a warning when the jwks_uri does not serve it.
The previous key stays published until ` + "`pact key retire`" + `. Activating
the key that is already active changes nothing.`,
		Args:              exactArgs(1, "key activate needs the kid to activate (see `pact key list`)"),
		ValidArgsFunction: a.completeKIDs,
		Annotations:       map[string]string{dashArgsAnnotation: "kid"},
		RunE: func(cmd *cobra.Command, args []string) error {
			p, c, err := a.loadProfile()
			if err != nil {
				return err
			}
			kid := args[0]
			k := c.Key(kid)
			if k == nil {
				return explained{fmt.Sprintf("no key %q in profile %q (see `%s`)", kid, p.Name, profile.Command(p.Name, "key list")), profile.ErrNotFound}
			}
			st := a.io.ErrStyles()
			if k.Active {
				if a.json {
					return a.printJSON(keyOut(p, *k, nil))
				}
				a.io.Eprintf("%s key %s is already active: it signs your PA JWTs\n", st.Success.Render("✓"), kid)
				return nil
			}
			var previous string
			if old := c.Active(); old != nil {
				previous = old.KID
			}
			// The live jwks_uri, as a Provider fetches it: refused unless it
			// serves the key; with --force, looked at briefly to warn.
			ctx, cancel := cmd.Context(), context.CancelFunc(func() {})
			if force {
				ctx, cancel = context.WithTimeout(ctx, liveTimeout)
			}
			sp := a.spinner("Checking " + c.JWKSURI)
			live := publish.FetchJWKS(ctx, a.httpClient(), c)
			liveErr := live.Has(*k)
			sp.Stop()
			cancel()
			if liveErr != nil && !force {
				return explained{fmt.Sprintf(
					"not activating %s: %s\nProviders would refuse every PA JWT signed with it. Publish it first: run `%s` and upload, "+
						"or keep `%s` running; then run `%s` again (or add --force)",
					kid, sentence(liveErr.Error()), profile.Command(p.Name, "jwks export DIR"), profile.Command(p.Name, "jwks serve"),
					profile.Command(p.Name, "key activate -- "+kid)), errKeyNotLive}
			}
			// The key must be able to sign before it becomes the one that
			// signs: reachable, its public part the published one.
			kctx, kcancel := context.WithTimeout(cmd.Context(), keyCheckTimeout)
			err = p.CheckKey(kctx, c, *k) // no spinner: a token may ask for its PIN
			kcancel()
			if err != nil {
				return err
			}
			info, err := p.Activate(kid)
			if err != nil {
				return err
			}
			if liveErr != nil {
				// Forced: say it loudly, whatever the output format.
				found := "your jwks_uri " + c.JWKSURI + " does not serve it"
				if live.JWKSErr != nil {
					found = "pact could not check that your jwks_uri serves it"
				}
				a.io.Eprintf("%s key %s signs from now on, but %s (%s).\n"+
					"  Providers cannot verify your PA JWTs until the jwks_uri serves it: until then they refuse them.\n"+
					"  Publish it now (`%s` and upload, or keep `%s` running), then check with `%s`.\n",
					st.Warning.Render("!"), kid, found, safe(liveErr.Error()),
					profile.Command(p.Name, "jwks export DIR"), profile.Command(p.Name, "jwks serve"), profile.Command(p.Name, "doctor"))
			}
			if a.json {
				return a.printJSON(keyOut(p, info, live)) // live: false when the jwks_uri answered without it
			}
			if liveErr == nil {
				a.io.Eprintf("%s key %s signs from now on\n", st.Success.Render("✓"), kid)
			}
			if previous != "" {
				a.io.Eprintf("  The previous key %s stays published; once no token it signed is in flight: %s\n",
					previous, profile.Command(p.Name, "key retire -- "+previous))
			}
			return nil
		},
	}
	activate.Flags().BoolVar(&force, "force", false, "activate even when the live jwks_uri does not serve the key (warns)")
	retire := &cobra.Command{
		Use:               "retire -- KID",
		Short:             "Stop publishing a key and delete its private half from the keyring (never the active key; a token's or KMS key stays there)",
		Args:              exactArgs(1, "key retire needs the kid to retire (see `pact key list`)"),
		ValidArgsFunction: a.completeKIDs,
		Annotations:       map[string]string{dashArgsAnnotation: "kid"},
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := a.prof()
			if err != nil {
				return err
			}
			var k profile.KeyInfo
			if c, err := p.Load(); err == nil && c.Key(args[0]) != nil {
				k = *c.Key(args[0])
			}
			if err := p.Retire(args[0]); err != nil {
				return err
			}
			if a.json {
				return a.printJSON(map[string]any{"kid": args[0], "retired": true})
			}
			a.io.Eprintf("%s retired key %s; re-export or re-upload your JWKS so it is no longer published (pact serve and pact jwks serve stop serving it at once)\n", a.io.ErrStyles().Success.Render("✓"), args[0])
			a.io.Eprintf("  Providers may keep the key set they fetched for up to %s (the JWKS's Cache-Control: max-age=%d): until then a token it signed can still verify\n",
				humanDuration(jwks.CacheMaxAge), int(jwks.CacheMaxAge/time.Second))
			if k.KeyURI().Held() {
				a.io.Eprintf("  The key itself stays at %s: pact never destroys it. Once nothing else uses it, delete it there%s.\n", p.Where(k), deleteHint(k))
			}
			return nil
		},
	}
	cmd.AddCommand(list, rotate, activate, retire, newKeyPinCmd(a), newMintAheadCmd(a))
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

// humanDuration says a whole number of minutes in words ("5 minutes"),
// else Go's form ("90s").
func humanDuration(d time.Duration) string {
	if d >= time.Minute && d%time.Minute == 0 {
		if d == time.Minute {
			return "1 minute"
		}
		return fmt.Sprintf("%d minutes", int(d/time.Minute))
	}
	return d.String()
}
