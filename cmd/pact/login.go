package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pact-cli/pact/agent"
	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/delegation"
	"github.com/pact-cli/pact/deviceflow"
	"github.com/pact-cli/pact/discovery"
	"github.com/pact-cli/pact/opener"
)

func addDelegationCommands(a *app, root *cobra.Command) {
	root.AddCommand(newLoginCmd(a), newLogoutCmd(a), newGrantsCmd(a), newReceiptsCmd(a))
}

// login runs the device flow on s for scopes, showing the Brand, the
// Provider, the scopes and the user_code on stderr, opening the link (or
// printing it with --no-browser or without a terminal) and counting down
// until the User answers in the browser.
func (a *app) login(ctx context.Context, s *conversation.Session, scopes []string) (*delegation.Grant, error) {
	if s.Card.Delegation == nil {
		return nil, conversation.ErrNoDelegation
	}
	var sp stopper = noSpinner{}
	finished := make(chan struct{})
	defer close(finished)
	g, err := s.Login(ctx, scopes, a.showDeviceLogin(s.Card, scopes, finished, &sp))
	sp.Stop()
	return g, err
}

// showDeviceLogin returns the function that shows a device authorization
// (§5.3) for card's scopes on stderr: the Brand, the scopes, the Provider,
// the user_code and the link, opened in the browser (or printed with
// --no-browser or without a terminal), then a countdown until the User
// answers, stored in *sp for the caller to stop. finished ends the
// browser's reports. pact login and pact provider check show it.
func (a *app) showDeviceLogin(card *discovery.Card, scopes []string, finished <-chan struct{}, sp *stopper) func(*deviceflow.Authorization) {
	st := a.io.ErrStyles()
	d := card.Delegation
	return func(auth *deviceflow.Authorization) {
		name := line(card.Name())
		a.io.Eprintf("\n%s asks you to log in with %s and approve:\n", st.Bold.Render("pact"), st.Bold.Render(name))
		w := 0
		for _, id := range scopes {
			w = max(w, len(id))
		}
		for _, id := range scopes {
			a.io.Eprintf("  %s  %s\n", st.Accent.Render(line(fmt.Sprintf("%-*s", w, id))), line(d.Scopes[id]))
		}
		a.io.Eprintf("Provider: %s\n", line(originOf(card.InterfaceURL)))
		a.io.Eprintf("Code:     %s\n", st.Bold.Render(line(auth.UserCode)))
		a.io.Eprintf("Link:     %s\n", line(auth.VerificationURIComplete))
		if !a.noBrows && (a.io.Interactive() || opener.Command() != nil) {
			a.openLink(auth.VerificationURIComplete, name, finished)
		} else {
			a.io.Eprintf("Open the link in a browser and log in with %s; pact never sees your password.\n", name)
			if isLoopbackLink(auth.VerificationURIComplete) {
				a.io.Eprintf("No desktop browser here? The link is on this machine: %s\n", a.headlessWays(auth.VerificationURIComplete))
			}
		}
		if a.json || !a.io.IsStderrTTY() {
			a.io.Eprintf("Waiting for approval (the code expires in %s)…\n", time.Until(auth.ExpiresAt).Round(time.Second))
		} else {
			*sp = a.io.StartCountdown("Waiting for your approval", auth.ExpiresAt)
		}
	}
}

// reportGrant tells the User what was granted, and what was not.
func (a *app) reportGrant(asked []string, g *delegation.Grant) {
	st := a.io.ErrStyles()
	cmp := agent.CompareGrant(asked, g.Scopes)
	a.io.Eprintf("%s granted: %s (expires %s)\n", st.Success.Render("✓"), line(strings.Join(g.Scopes, " ")), g.ExpiresAt.Local().Format("15:04 MST"))
	if len(cmp.Missing) > 0 {
		a.io.Eprintf("%s not granted: %s\n", st.Warning.Render("!"), line(strings.Join(cmp.Missing, " ")))
	}
	if len(cmp.Also) > 0 {
		// Not "approved earlier": on a first login nothing was. These are
		// the scopes the grant holds beyond what was asked this time.
		a.io.Eprintf("%s the Brand also granted: %s\n", st.Faint.Render("·"), line(strings.Join(cmp.Also, " ")))
	}
}

// stepUp is the CLI's answer to the "needs these scopes" event (agent.Front.NeedsScopes):
// the Brand's words on stdout, the scopes on stderr, then the device flow
// (a.login) and what was granted. agent.Send then checks the grant and sends
// the message again.
func (a *app) stepUp(ctx context.Context, s *conversation.Session, su *agent.StepUp) (*delegation.Grant, error) {
	st := a.io.ErrStyles()
	a.printStepUpText(su.Result) // once: not again when it streamed
	a.io.Eprintf("%s %s needs more permission: %s\n", st.Warning.Render("!"), line(s.Card.Name()), line(strings.Join(su.IDs(), ", ")))
	g, err := a.login(ctx, s, su.IDs())
	if err != nil {
		return nil, err
	}
	a.reportGrant(su.IDs(), g)
	return g, nil
}

type loginJSON struct {
	Brand           string    `json:"brand"` // card URL
	BrandName       string    `json:"brandName"`
	InterfaceURL    string    `json:"interfaceUrl"`
	ScopesRequested []string  `json:"scopesRequested"`
	ScopesGranted   []string  `json:"scopesGranted"`
	GrantID         string    `json:"grantId"`
	ExpiresAt       time.Time `json:"expiresAt"`
}

func newLoginCmd(a *app) *cobra.Command {
	var scopes []string
	cmd := &cobra.Command{
		Use:   "login BRAND --scope ID [--scope ID]...",
		Short: "Let pact act on your account at a Brand: log in with the Brand and approve scopes",
		Long: `Delegation by OAuth 2.0 device code (RFC 8628). pact shows the Brand,
the scopes it asks for and a code, and opens the Brand's own login page in your
browser (PACT_BROWSER, BROWSER, or the system browser; --no-browser prints the
link). You log in with the Brand, never with pact, and may uncheck scopes. pact
waits, then stores the delegation token in your keyring and prints the scopes
granted, which may be fewer than asked.`,
		Args:              exactArgs(1, "login needs a BRAND and at least one --scope"),
		ValidArgsFunction: a.completeBrands,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(scopes) == 0 {
				return usageError{errors.New("name the permissions to ask for with --scope ID (see `pact card BRAND` for the Brand's scopes)")}
			}
			s, err := a.openSession(cmd.Context(), args[0], sessionFlags{})
			if err != nil {
				return err
			}
			g, err := a.login(cmd.Context(), s, scopes)
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(loginJSON{Brand: s.Card.URL, BrandName: s.Card.Name(), InterfaceURL: s.Card.InterfaceURL, ScopesRequested: scopes,
					ScopesGranted: nonNil(g.Scopes), GrantID: g.GrantID, ExpiresAt: g.ExpiresAt})
			}
			a.reportGrant(scopes, g)
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&scopes, "scope", nil, "a scope id from the Brand's card (repeatable)")
	cmd.RegisterFlagCompletionFunc("scope", a.completeScopes)
	return cmd
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// completeScopes offers the scope ids of the Brand's card (pact login --scope).
func (a *app) completeScopes(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) == 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	cardURL, err := discovery.CardURL(args[0])
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	card, err := discovery.Fetch(cmd.Context(), a.httpClient(), cardURL)
	if err != nil || card.Delegation == nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, id := range card.Delegation.ScopeIDs() {
		out = append(out, id+"\t"+card.Delegation.Scopes[id])
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
