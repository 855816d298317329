package main

import (
	"errors"
	"fmt"
	"github.com/pact-cli/pact/agent"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/deviceflow"
	"github.com/pact-cli/pact/discovery"
	"github.com/pact-cli/pact/iostreams"
	"github.com/pact-cli/pact/providercheck"
	"github.com/pact-cli/pact/store"
)

// newProviderCheckCmd is `pact provider check`: the flags, and the report
// of package providercheck in words, JSON or JUnit XML.
func newProviderCheckCmd(a *app) *cobra.Command {
	var scopes, only []string
	var junit, otherBrand, stepUp string
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "check BRAND [--scope S …] [--only GROUP …] [--json] [--junit FILE] [--dry-run]",
		Short: "Check a Brand's Provider against PACT 1.0, clause by clause, as a personal agent sees it",
		Long: `Check the Provider of BRAND against the PACT 1.0 rules a personal agent can
see: the Agent Card, the routes, the personal-agent JWTs it must refuse and
the one it must accept, conversations and retries, delegation and errors.
One line per check: the clause of the spec, what was sent, what came back,
and pass, fail or skip with the reason.

It runs with this profile's registration (pact provider add), sends at most
200 requests, at most 20 a second, waits out 429 Retry-After, sends nothing
to any origin but the Brand's and its Provider's, and every message text it
sends starts with "pact provider check:". Run it against your own Provider.

Checks that need a User (the device flow, the delegation token, receipts)
run only with --scope: you log in with the Brand as with pact login (the
browser, PACT_BROWSER, or the printed link). --other-brand names another
Brand of the same Provider (its token must be refused there); --step-up
names a message that needs a scope you did not ask for (a step-up).

--only runs some groups: card, routes, identity, conversation, delegation,
errors. --dry-run lists what would be sent and sends nothing. --junit FILE
writes JUnit XML for CI. Exit 0 when no check failed, 1 when one did.
docs/provider-check.md explains every check and what to fix.`,
		Args:              exactArgs(1, "provider check needs a BRAND (a domain, an origin or a card URL)"),
		ValidArgsFunction: a.completeBrands,
		RunE: func(cmd *cobra.Command, args []string) error {
			var groups []string
			for _, o := range only {
				for _, g := range strings.Split(o, ",") {
					if g = strings.TrimSpace(g); g != "" {
						groups = append(groups, g)
					}
				}
			}
			checks, err := providercheck.Select(groups)
			if err != nil {
				return usageError{err}
			}
			cardURL, err := discovery.CardURL(args[0])
			if err != nil {
				return err
			}
			var otherCard string
			if otherBrand != "" {
				if otherCard, err = discovery.CardURL(otherBrand); err != nil {
					return usageError{fmt.Errorf("--other-brand: %w", err)}
				}
			}
			if dryRun {
				return a.printCheckPlan(cardURL, checks, scopes)
			}
			p, c, err := a.loadProfile()
			if err != nil {
				return err
			}
			sig, err := p.Signer(c)
			if err != nil {
				return err
			}
			var sp stopper = noSpinner{}
			finished := make(chan struct{})
			defer close(finished)
			st := a.io.OutStyles()
			if !a.json {
				a.io.Eprintf("Checking the Provider of %s (%d checks; messages start with %q)\n", line(cardURL), len(checks), "pact provider check:")
			}
			rep, err := providercheck.Run(cmd.Context(), providercheck.Options{
				HTTP: a.httpClient(), Config: c, Signer: sig, Sub: p.Sub,
				CardURL: cardURL, Scopes: scopes, OtherCardURL: otherCard, StepUpText: stepUp, Groups: groups,
				ShowLogin: func(card *discovery.Card, scopes []string, auth *deviceflow.Authorization) {
					a.showDeviceLogin(card, scopes, finished, &sp)(&agent.LoginStart{UserCode: auth.UserCode,
						VerificationURIComplete: auth.VerificationURIComplete, ExpiresAt: auth.ExpiresAt, Scopes: auth.Scopes})
				},
				LoginDone: func() { sp.Stop() },
				Progress: func(r providercheck.Result) {
					if !a.json {
						a.io.Printf("%s\n", checkLine(st.Success.Render, st.Error.Render, st.Warning.Render, r))
					}
				},
			})
			if err := cmd.Context().Err(); err != nil {
				return err // interrupted: 130, the checks left were not run
			}
			var notReg *providercheck.NotRegisteredError
			if errors.As(err, &notReg) {
				err = fmt.Errorf("%w:\n  %s", err, iostreams.CommandHint("pact", "provider", "add", conversation.SuggestProviderURL(notReg.Card), "--audience", "AUD"))
			} else if err != nil {
				return err
			}
			if junit != "" {
				x, err := rep.JUnit()
				if err != nil {
					return err
				}
				if err := store.WriteFile(junit, x, 0o644); err != nil {
					return fmt.Errorf("writing the JUnit report: %w", err)
				}
			}
			if a.json {
				if err := a.printJSON(rep); err != nil {
					return err
				}
			} else {
				a.io.Printf("\n%d checks: %d passed, %d failed, %d skipped (%d requests", len(rep.Results), rep.Passed, rep.Failed, rep.Skipped, rep.Requests)
				if rep.RateLimited > 0 {
					a.io.Printf(", %d answered 429", rep.RateLimited)
				}
				a.io.Printf(")\n")
				if junit != "" {
					a.io.Eprintf("JUnit report written to %s\n", junit)
				}
			}
			if notReg != nil {
				if a.json {
					a.io.Eprintf("%s %s\n", a.io.ErrStyles().Error.Render("error:"), safe(err.Error()))
					return silentError{code: exitFailure}
				}
				return err
			}
			if rep.Failed > 0 {
				word := "checks"
				if rep.Failed == 1 {
					word = "check"
				}
				a.io.Eprintf("%s %d %s failed; docs/provider-check.md says what each one needs\n", a.io.ErrStyles().Error.Render("error:"), rep.Failed, word)
				return silentError{code: exitFailure}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&scopes, "scope", nil, "log in and approve the scope `ID` (repeatable): runs the checks that need a User (delegation)")
	f.StringArrayVar(&only, "only", nil, "run only the checks of `GROUP`: card, routes, identity, conversation, delegation, errors (repeatable, or comma-separated)")
	f.StringVar(&junit, "junit", "", "also write the results as JUnit XML to `FILE`")
	f.BoolVar(&dryRun, "dry-run", false, "list the checks and what each would send; send nothing")
	f.StringVar(&otherBrand, "other-brand", "", "another Brand (`BRAND`) of the same Provider: this Brand's delegation token must be refused there")
	f.StringVar(&stepUp, "step-up", "", "a message (`TEXT`) needing a scope not given with --scope: the Provider must answer it with a step-up task")
	return cmd
}

// clauseWidth and idWidth align the columns of checkLine.
var clauseWidth, idWidth = func() (int, int) {
	c, i := 0, 0
	for _, k := range providercheck.Checks() {
		c, i = max(c, len([]rune(k.Clause))), max(i, len(k.ID))
	}
	return c, i
}()

// checkLine is one check in words: the outcome, the clause, the id, what
// was sent and what came back, and the reason of a failure or skip.
func checkLine(ok, bad, warn func(...string) string, r providercheck.Result) string {
	var mark string
	switch r.Status {
	case providercheck.Pass:
		mark = ok("pass")
	case providercheck.Fail:
		mark = bad("FAIL")
	default:
		mark = warn("skip")
	}
	s := fmt.Sprintf("%s  %-*s  %-*s", mark, clauseWidth, r.Clause, idWidth, r.ID)
	switch {
	case r.Sent != "" && r.Got != "":
		s += "  " + r.Sent + " → " + r.Got
	case r.Sent != "":
		s += "  " + r.Sent
	case r.Got != "":
		s += "  " + r.Got
	}
	if r.Reason != "" {
		s += "  — " + r.Reason
	}
	return strings.TrimRight(s, " ")
}

// printCheckPlan is --dry-run: the checks and what each would send.
func (a *app) printCheckPlan(cardURL string, checks []providercheck.Check, scopes []string) error {
	if a.json {
		type plan struct {
			DryRun bool                  `json:"dryRun"`
			Brand  string                `json:"brand"`
			Scopes []string              `json:"scopes"`
			Checks []providercheck.Check `json:"checks"`
		}
		return a.printJSON(plan{true, cardURL, append([]string{}, scopes...), checks})
	}
	a.io.Printf("Nothing is sent (--dry-run). Against %s, pact provider check would run:\n\n", line(cardURL))
	for _, c := range checks {
		sends := c.Sends
		if sends == "" {
			sends = "(nothing of its own)"
		}
		note := ""
		if c.NeedsUser && len(scopes) == 0 {
			note = "  [skipped without --scope]"
		}
		a.io.Printf("%-*s  %-*s  %s%s\n", clauseWidth, c.Clause, idWidth, c.ID, sends, note)
	}
	a.io.Printf("\n%d checks; at most %d requests, at most %d a second.\n", len(checks), providercheck.DefaultMaxRequests, int(1/providercheck.DefaultInterval.Seconds()))
	return nil
}
