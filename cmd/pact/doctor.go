package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/delegation"
	"github.com/pact-cli/pact/doctor"
	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/store"
	"github.com/pact-cli/pact/store/backend"
)

func newDoctorCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check that this profile can work: keyring, published keys, Providers, Brands, grants",
		Long: `Check, as a Provider would see it, whether this profile can work:

  the keyring answers; the profile is initialised; the issuer is HTTPS
  (loopback excepted); the discovery document and the jwks_uri on the
  internet carry the key that signs, with public members only; staged keys
  that are live and can be activated; for each Brand you talk to and each
  registered Provider: reachable, Agent Card valid and still the card you
  accepted, your PA JWT accepted, clocks in step; delegation grants that
  are dead or expired (a stored grant is not tested against the Provider:
  PACT has no request for that short of sending a message).

Each check says ok, warn or fail, and how to fix it. Exit 0 when nothing
fails, 1 otherwise. --json prints the report (see docs/json.md).`,
		Args: exactArgs(0, "doctor takes no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := store.CheckProfileName(a.profile); err != nil {
				return usageError{err}
			}
			p := &profile.Profile{Name: a.profile, Dirs: a.dirs(), Database: a.set.database}
			sec, secErr := a.secrets()
			p.Secrets = sec
			o := doctor.Options{Profile: p, SecretsErr: secErr, HTTP: a.httpClient(),
				FormatTime: func(t time.Time) string { return t.Local().Format(humanTime) }}
			if _, err := os.Stat(p.Dirs.ProfileDataDir(p.Name)); err == nil || p.Database != "" {
				// A profile with a data folder, or on PostgreSQL, has a
				// database to check (one without has nothing yet, and
				// doctor creates none).
				b, _ := backend.ForProfile(p.Dirs, p.Name, p.Database)
				o.Database, o.Postgres = b.Check, backend.IsPostgres(p.Database)
			}
			if secErr == nil {
				opts := conversation.NewOptions(p, a.httpClient())
				o.Conversations = opts.Store.List
				o.Grants = func() ([]delegation.Grant, error) { return conversation.ListGrants(opts) }
				o.Pins = opts.Pins
				if db, ok := opts.Backend.(*store.DB); ok { // the import of the files of a release before the database
					o.ImportProblems = func() ([]string, string) {
						return db.ImportProblems(cmd.Context()), filepath.Join(p.Dirs.ProfileDataDir(p.Name), store.ImportedDir)
					}
				}
			}
			sp := a.spinner("Checking profile " + p.Name + " as a Provider sees it")
			rep := doctor.Run(cmd.Context(), o)
			sp.Stop()
			if cmd.Context().Err() != nil {
				return cmd.Context().Err()
			}
			if a.json {
				if err := a.printJSON(rep); err != nil {
					return err
				}
			} else {
				a.printDoctor(rep)
			}
			if !rep.OK {
				return silentError{code: exitFailure}
			}
			return nil
		},
	}
}

// printDoctor prints one aligned line per check (mark, check id, what was
// found), the fix under it, and a summary line.
func (a *app) printDoctor(rep *doctor.Report) {
	st := a.io.OutStyles()
	w := 0
	for _, c := range rep.Checks {
		w = max(w, len(c.ID))
	}
	for _, c := range rep.Checks {
		mark := st.Success.Render("✓")
		switch c.Status {
		case doctor.Warn:
			mark = st.Warning.Render("!")
		case doctor.Fail:
			mark = st.Error.Render("✗")
		}
		a.io.Printf("%s %s  %s\n", mark, st.Bold.Render(fmt.Sprintf("%-*s", w, c.ID)), safe(c.Summary))
		// The keyring check's subject (its kind) is named by its summary.
		if c.Subject != "" && c.Status != doctor.OK && c.ID != doctor.CheckKeyring && !strings.Contains(c.Summary, c.Subject) {
			a.io.Printf("  %*s  %s\n", w, "", st.Faint.Render(safe(c.Subject)))
		}
		if c.Fix != "" {
			a.io.Printf("  %*s  %s %s\n", w, "", st.Accent.Render("fix:"), safe(c.Fix))
		}
		if c.Detail != "" && a.debug {
			a.io.Printf("  %*s  %s\n", w, "", st.Faint.Render("detail: "+safe(c.Detail)))
		}
	}
	ok, warn, fail := rep.Counts()
	summary := fmt.Sprintf("%d ok, %s, %d failed", ok, plural(warn, "warning", "warnings"), fail)
	if fail > 0 {
		a.io.Printf("\n%s profile %q cannot work as it is: %s\n", st.Error.Render("✗"), rep.Profile, summary)
	} else {
		a.io.Printf("\n%s profile %q is ready: %s\n", st.Success.Render("✓"), rep.Profile, summary)
	}
}
