package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pact-cli/pact/demoprovider"
	"github.com/pact-cli/pact/httpx"
)

// newDemoApproveCmd is `pact demo approve LINK`: the demo login answered
// without a browser (a server, a container, SSH), as a person would answer
// it, over HTTP (demoprovider.ScriptedUser: the Brand's login form, then
// the consent page). Only loopback links: it signs in with the demo's
// public passwords and is meant for `pact demo serve` on this machine.
func newDemoApproveCmd(a *app) *cobra.Command {
	var (
		user   string
		scopes []string
		deny   bool
	)
	cmd := &cobra.Command{
		Use:   "approve LINK",
		Short: "Answer a demo login without a browser: sign in as a demo User and approve",
		Long: `Answer the login link that pact login prints (Link: …) for the demo
Provider of pact demo serve, without a browser: sign in to the Brand as a
demo User (jane by default, or --user omar) and approve the scopes asked
(all of them, or only those given with --scope), or --deny. pact login,
waiting in the other terminal, then finishes.

Only links on this machine (loopback) are accepted: it signs in with the
demo's public passwords. In one terminal, let pact login run it for you:
PACT_BROWSER='pact demo approve' pact login BRAND --scope ID.
A text browser works too: w3m or lynx, then the same steps as in a desktop
browser.`,
		Args: exactArgs(1, "demo approve needs the login link that pact login printed (Link: …)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			link := args[0]
			u, err := url.Parse(link)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return usageError{fmt.Errorf("%q is not a login link: give the Link that pact login printed (http://127.0.0.1:…/oauth/device?user_code=…)", link)}
			}
			if !httpx.IsLoopback(u.Hostname()) {
				return usageError{fmt.Errorf("demo approve only answers the demo Provider on this machine (a loopback link), not %s: open that link in a browser", u.Host)}
			}
			password, ok := demoprovider.DemoPassword(user)
			if !ok {
				return usageError{fmt.Errorf("--user %q: the demo Users are %s", user, strings.Join(demoprovider.DemoUsers(), " and "))}
			}
			if deny && len(scopes) > 0 {
				return usageError{errors.New("--deny and --scope do not go together: --deny refuses every scope asked")}
			}
			person := demoprovider.ScriptedUser{Username: user, Password: password, Approve: scopes, Deny: deny,
				HTTPClient: &http.Client{Timeout: 10 * time.Second}}
			ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
			defer cancel()
			if err := person.Visit(ctx, link); err != nil {
				if cmd.Context().Err() != nil {
					return cmd.Context().Err()
				}
				return fmt.Errorf("the demo login could not be answered: %s", strings.TrimPrefix(err.Error(), "scripted user: "))
			}
			decision := "approved"
			if deny {
				decision = "denied"
			}
			if a.json {
				return a.printJSON(map[string]any{"link": link, "user": user, "decision": decision})
			}
			what := "every scope asked"
			if len(scopes) > 0 {
				what = strings.Join(scopes, ", ")
			}
			if deny {
				a.io.Eprintf("%s signed in as %s and denied the login; pact login ends with the refusal\n", a.io.ErrStyles().Warning.Render("!"), user)
				return nil
			}
			a.io.Eprintf("%s signed in as %s and approved %s; pact login finishes now\n", a.io.ErrStyles().Success.Render("✓"), user, what)
			return nil
		},
	}
	cmd.Flags().StringVar(&user, "user", "jane", "the demo User who signs in: jane or omar")
	cmd.Flags().StringArrayVar(&scopes, "scope", nil, "approve only this scope (repeatable; default: every scope asked)")
	cmd.Flags().BoolVar(&deny, "deny", false, "deny the login instead of approving it")
	return cmd
}
