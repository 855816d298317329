package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/delegation"
	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/secrets"
)

// keyringKind is the secret-store backend of the selected profile: see
// profile.ResolveKeyring. `pact init --keyring` and PACT_KEYRING are
// explicit; the config file's "keyring" is the default for new profiles.
func (a *app) keyringKind() (string, error) {
	ch := profile.KeyringChoice{Default: a.set.keyring}
	if a.keyringFlag != "" {
		ch.Explicit, ch.ExplicitSource = a.keyringFlag, "--keyring "+a.keyringFlag
	} else if env := a.set.keyringEnv; env != "" {
		ch.Explicit, ch.ExplicitSource = env, "PACT_KEYRING="+env
	}
	return profile.ResolveKeyring(a.dirs(), a.profile, ch)
}

func newKeyringCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "keyring", Short: "Where this profile keeps its secrets, and moving them"}
	var to string
	move := &cobra.Command{
		Use:   "move --to file|os",
		Short: "Move this profile's secrets to the file keyring or the OS keyring",
		Long: `Move every secret of this profile (signing keys, the pairwise-sub secret,
delegation tokens) to another secret-store backend, and record it in the
profile so later runs use it without PACT_KEYRING:

  os     the OS keyring (Secret Service, Keychain, Credential Manager)
  file   a 0600 file in pact's data folder, for headless machines

Each secret is copied first, then the profile records the new backend, then
the old copies are deleted; if a copy fails nothing changes.`,
		Args: exactArgs(0, "keyring move takes no arguments (use --to file|os)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			to = strings.ToLower(to)
			if to != "file" && to != "os" {
				return usageError{fmt.Errorf("--to must be file or os, not %q", to)}
			}
			// The source is where the secrets are now: the recorded
			// backend, else what this run would use without the conflict
			// check (an explicit PACT_KEYRING naming the target is the
			// point of moving).
			from, err := profile.RecordedKeyring(a.dirs(), a.profile)
			if err != nil {
				return err
			}
			if from == "" {
				if from, err = a.keyringKind(); err != nil {
					return err
				}
			}
			src, err := secrets.Open(from, a.dirs().Data, 0)
			if err != nil {
				return usageError{err}
			}
			dst, err := secrets.Open(to, a.dirs().Data, 0)
			if err != nil {
				return usageError{err}
			}
			p := &profile.Profile{Name: a.profile, Dirs: a.dirs(), Secrets: src, Database: a.set.database}
			if _, err := p.Load(); err != nil {
				return err
			}
			var extra []string
			if grants, err := conversation.ListGrants(conversation.NewOptions(p, a.httpClient())); err == nil {
				for _, g := range grants {
					extra = append(extra, delegation.SecretKeys(p.Name+"/", g.InterfaceURL)...)
				}
			} else {
				return fmt.Errorf("reading the delegation grants: %w", err)
			}
			if p.Database != "" {
				// The tokens are sealed in the database; their data keys move.
				names, err := conversation.DataKeys(p).KeyNames()
				if err != nil {
					return fmt.Errorf("reading the data keys: %w", err)
				}
				extra = append(extra, names...)
			}
			res, err := p.MoveSecrets(dst, extra)
			if err != nil && res.Moved == 0 && to == "os" && errors.Is(err, secrets.ErrUnavailable) {
				// The secrets are still where they were (the file): the
				// fix is the OS keyring, not a move to the file.
				return keyringError{msg: fmt.Sprintf("the OS keyring is not available: no keyring service answers on this machine, or it is locked; nothing was moved: the secrets of profile %q stay in %s. Start or unlock the OS keyring (Secret Service, Keychain or Credential Manager), then run %s again",
					p.Name, src.Where(), profile.Command(p.Name, "keyring move --to os")), cause: err}
			}
			if err != nil && res.Moved == 0 {
				return err
			}
			if a.json {
				return a.printJSON(map[string]any{"profile": p.Name, "from": res.From, "to": res.To, "moved": res.Moved, "where": dst.Where()})
			}
			st := a.io.ErrStyles()
			a.io.Eprintf("%s moved %d secrets of profile %q from the %s keyring to %s\n", st.Success.Render("✓"), res.Moved, p.Name, res.From, dst.Where())
			if err != nil {
				a.io.Eprintf("%s %v\n", st.Warning.Render("!"), err)
			}
			if env := os.Getenv("PACT_KEYRING"); env != "" && env != res.To {
				a.io.Eprintf("%s PACT_KEYRING=%s is set: unset it, the profile now records %q\n", st.Warning.Render("!"), env, res.To)
			}
			return nil
		},
	}
	move.Flags().StringVar(&to, "to", "", "the backend to move to: file or os")
	cmd.AddCommand(move)
	return cmd
}
