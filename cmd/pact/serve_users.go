package main

import (
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/pact-cli/pact/httpx"
	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/server"
	"github.com/pact-cli/pact/store"
)

// serveCodeJSON is `pact serve user add|code --json`: the User and a
// one-time enrolment code with the command that uses it.
type serveCodeJSON struct {
	User      store.ServerUser `json:"user"`
	Code      string           `json:"code"`
	ExpiresAt time.Time        `json:"expiresAt"`
	Command   string           `json:"command"`
}

func newServeUserCmd(a *app, f *serveFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "user", Short: "Add, list and remove the server's Users; make enrolment codes"}
	printCode := func(u store.ServerUser, c server.Code, s server.Settings, added bool) error {
		out := serveCodeJSON{User: u, Code: c.Code, ExpiresAt: c.Expires, Command: enrolCommand(a.serveHint(s), c.Code)}
		if a.json {
			return a.printJSON(out)
		}
		st := a.io.ErrStyles()
		if added {
			a.io.Eprintf("%s added the User %s (%s)\n", st.Success.Render("✓"), line(u.Name), u.ID)
		}
		// The code alone on stdout (CODE=$(pact serve user add alice)).
		a.io.Printf("%s\n", c.Code)
		a.io.Eprintf("One-time enrolment code for %s, valid until %s (15 minutes), once. On their device:\n  %s\n",
			line(u.Name), c.Expires.Local().Format(humanTime), out.Command)
		return nil
	}
	add := &cobra.Command{
		Use:   "add NAME",
		Short: "Add a User and print a one-time enrolment code for their first device",
		Long: `Add a User (a name of 1 to 64 characters, unique on this server) and print a
one-time enrolment code, valid 15 minutes, used once; only its hash is kept.
The code goes to stdout, the command that uses it to stderr. Works while the
server runs.`,
		Args: exactArgs(1, "serve user add needs the User's name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			adm, s, done, err := a.serveAdmin(cmd, f)
			if err != nil {
				return err
			}
			defer done()
			u, c, err := adm.AddUser(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return printCode(u, c, s, true)
		},
	}
	code := &cobra.Command{
		Use:   "code NAME|ID",
		Short: "Print a new one-time enrolment code for a User's next device",
		Args:  exactArgs(1, "serve user code needs the User's name or id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			adm, s, done, err := a.serveAdmin(cmd, f)
			if err != nil {
				return err
			}
			defer done()
			u, c, err := adm.NewCode(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return printCode(u, c, s, false)
		},
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List the server's Users with their number of active devices",
		Args:  exactArgs(0, "serve user list takes no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			adm, _, done, err := a.serveAdmin(cmd, f)
			if err != nil {
				return err
			}
			defer done()
			us, err := adm.Users(cmd.Context())
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(us)
			}
			if len(us) == 0 {
				a.io.Eprintf("No Users yet. Add one with: pact serve user add NAME\n")
				return nil
			}
			rows := [][]string{{"NAME", "ID", "DEVICES", "ADDED"}}
			for _, u := range us {
				rows = append(rows, []string{line(u.Name), u.ID, strconv.Itoa(u.Devices), u.Created.Local().Format(humanTime)})
			}
			a.io.Table(a.io.Out, rows)
			return nil
		},
	}
	remove := &cobra.Command{
		Use:   "remove NAME|ID",
		Short: "Remove a User: their devices are refused at their next call",
		Args:  exactArgs(1, "serve user remove needs the User's name or id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			adm, _, done, err := a.serveAdmin(cmd, f)
			if err != nil {
				return err
			}
			defer done()
			u, err := adm.RemoveUser(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(map[string]any{"id": u.ID, "name": u.Name, "removed": true})
			}
			a.io.Eprintf("%s removed the User %s (%s) and their devices\n", a.io.ErrStyles().Success.Render("✓"), line(u.Name), u.ID)
			return nil
		},
	}
	cmd.AddCommand(add, code, list, remove)
	return cmd
}

func newServeProviderCmd(a *app, f *serveFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "provider", Short: "Manage the server's Provider registrations (in its database)"}
	var audience string
	add := &cobra.Command{
		Use:   "add URL --audience AUD",
		Short: "Record the audience a Provider assigned to this server",
		Long: `Record a Provider registration of the server, as ` + "`pact provider add`" + ` does
for a profile, in the server's database: a running server uses it at its next
request. Register the server's issuer with the Provider first; every User's
requests go with this audience and the User's own pairwise sub. Adding a URL
already registered replaces its audience and says so, old and new.`,
		Args: exactArgs(1, "serve provider add needs the Provider URL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			adm, _, done, err := a.serveAdmin(cmd, f)
			if err != nil {
				return err
			}
			defer done()
			r, replaced, err := adm.AddProvider(cmd.Context(), args[0], audience)
			if err != nil {
				return err
			}
			// A quick look whether anything answers there (a typo shows
			// now); only a warning: the Provider may not be up yet.
			unreachable := httpx.Probe(cmd.Context(), a.httpClient(), r.URL)
			st := a.io.ErrStyles()
			if a.json {
				if err := a.printJSON(r); err != nil {
					return err
				}
			} else if replaced != "" {
				a.io.Eprintf("%s changed the audience of %s from %s to %s\n", st.Warning.Render("!"), r.URL, line(replaced), line(r.Audience))
				a.io.Eprintf("  Every User's messages to its Brands now carry %s; if the Provider did not assign it, put it back: %s\n",
					line(r.Audience), profile.CommandWords(a.profile, "serve", "provider", "add", r.URL, "--audience", replaced))
			} else {
				a.io.Eprintf("%s registered %s with audience %s\n", st.Success.Render("✓"), r.URL, line(r.Audience))
			}
			if unreachable != nil {
				a.io.Eprintf("%s nothing answered at %s (%s); it is registered anyway: check the URL, unless the Provider is just not running yet\n",
					st.Warning.Render("warning:"), r.URL, safe(unreachable.Error()))
			}
			return nil
		},
	}
	add.Flags().StringVar(&audience, "audience", "", "the audience the Provider assigned (required)")
	list := &cobra.Command{
		Use:   "list",
		Short: "List the server's Provider registrations",
		Args:  exactArgs(0, "serve provider list takes no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			adm, _, done, err := a.serveAdmin(cmd, f)
			if err != nil {
				return err
			}
			defer done()
			rs, err := adm.Providers(cmd.Context())
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(rs)
			}
			if len(rs) == 0 {
				a.io.Eprintf("No Providers registered. Add one with: pact serve provider add URL --audience AUD\n")
				return nil
			}
			rows := [][]string{{"URL", "AUDIENCE", "ADDED"}}
			for _, r := range rs {
				rows = append(rows, []string{r.URL, line(r.Audience), r.Added.Local().Format(humanTime)})
			}
			a.io.Table(a.io.Out, rows)
			return nil
		},
	}
	remove := &cobra.Command{
		Use:   "remove URL",
		Short: "Forget a Provider registration of the server",
		Args:  exactArgs(1, "serve provider remove needs the Provider URL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			adm, _, done, err := a.serveAdmin(cmd, f)
			if err != nil {
				return err
			}
			defer done()
			u, err := adm.RemoveProvider(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(map[string]any{"url": u, "removed": true})
			}
			a.io.Eprintf("%s removed %s\n", a.io.ErrStyles().Success.Render("✓"), u)
			return nil
		},
	}
	cmd.AddCommand(add, list, remove)
	return cmd
}
