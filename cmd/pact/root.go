package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/itchyny/gojq"
	"github.com/spf13/cobra"

	"github.com/pact-cli/pact/agent"
	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/httpx"
	"github.com/pact-cli/pact/iostreams"
	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/secrets"
	"github.com/pact-cli/pact/store"
	"github.com/pact-cli/pact/tui"
)

// app holds what every command may need, built lazily (the gh "factory").
type app struct {
	io      *iostreams.IO
	profile string
	json    bool
	debug   bool
	noBrows bool
	jqExpr  string
	jq      *gojq.Code // compiled --jq, nil without it
	lineErr error      // first --jq failure on a JSON line (printJSONLine)
	// jsonLines: the command prints JSON Lines, so an error envelope is one
	// line too.
	jsonLines bool
	// jsonStreamOut: `pact send --json-stream`, the stream's events as
	// JSON lines before the final document (stream.go).
	jsonStreamOut bool
	// streamed is what sendOne showed of the last reply as it streamed.
	streamed *streamShow
	set      settings // resolved from the environment and config file
	// keyringFlag is `pact init --keyring` ("" = not given).
	keyringFlag string
	// initFlags are the flags of the `pact init` being run (--issuer URL…,
	// without --keyring), for the fix a keyring error names.
	initFlags []string
	// databaseFlag is --database ("" = not given).
	databaseFlag string

	once struct {
		secrets sync.Once
		http    sync.Once
	}
	sec    secrets.Store
	secErr error
	hc     *http.Client
	ag     agent.Agent // the profile's agent, once built (a.agent)
	held   heldKeys    // PINs asked, refills started (keys_held.go)
}

func (a *app) dirs() store.Dirs { return store.DefaultDirs() }

// secrets opens the profile's secret-store backend once: the one its
// profile records, else PACT_KEYRING (or the config file's "keyring"); see
// keyringKind.
func (a *app) secrets() (secrets.Store, error) {
	a.once.secrets.Do(func() {
		kind, err := a.keyringKind()
		if err != nil {
			a.secErr = err
			return
		}
		a.sec, a.secErr = secrets.Open(kind, a.dirs().Data, 0)
	})
	return a.sec, a.secErr
}

// prof returns the selected profile.
func (a *app) prof() (*profile.Profile, error) {
	if err := store.CheckProfileName(a.profile); err != nil {
		return nil, usageError{err}
	}
	sec, err := a.secrets()
	if err != nil {
		return nil, usageError{err}
	}
	return &profile.Profile{Name: a.profile, Dirs: a.dirs(), Secrets: sec, Database: a.set.database, PIN: a.askPIN, MintAhead: a.mintAhead}, nil
}

// loadProfile returns the selected profile and its configuration; it fails
// with profile.ErrNotInitialised before `pact init`.
func (a *app) loadProfile() (*profile.Profile, *profile.Config, error) {
	p, err := a.prof()
	if err != nil {
		return nil, nil, err
	}
	c, err := p.Load()
	if err != nil {
		return nil, nil, err
	}
	return p, c, nil
}

// httpClient is the hardened client, tracing to stderr under --debug.
func (a *app) httpClient() *http.Client {
	a.once.http.Do(func() {
		o := httpx.Options{UserAgent: "pact/" + stamp().version}
		if a.debug {
			o.Debug = a.io.ErrOut
		}
		a.hc = httpx.NewClient(o)
	})
	return a.hc
}

// sessionOptions are the parts of a conversation.Session for the profile.
func (a *app) sessionOptions() (conversation.Options, error) {
	p, err := a.prof()
	if err != nil {
		return conversation.Options{}, err
	}
	opts := conversation.NewOptions(p, a.httpClient())
	if a.debug {
		opts.Client.OnRetry = func(attempt int, wait time.Duration, cause error) {
			a.io.Eprintf("retry %d in %s: %s\n", attempt, wait, safe(cause.Error()))
		}
	}
	return opts, nil
}

// agent is the personal agent every command talks to: the one of the
// selected profile, run in this process (agent.Local over sessionOptions).
func (a *app) agent() (agent.Agent, error) {
	if a.ag != nil {
		return a.ag, nil
	}
	opts, err := a.sessionOptions()
	if err != nil {
		return nil, err
	}
	a.ag = agent.NewLocal(opts)
	return a.ag, nil
}

func newRootCmd(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "pact",
		Short: "Talk to Brands' support agents as your own personal agent (PACT 1.0)",
		Long: `pact is a personal agent's client for PACT 1.0.

It proves who it is to a Brand's support agent with a short-lived JWT it signs
itself, holds conversations over A2A, and, with your consent, acts on your
account at the Brand and keeps signed receipts of what was done.

Start with:  pact demo`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       stamp().version,
	}
	root.SetVersionTemplate("pact {{.Version}}\n")
	// Flag defaults are the built-in ones; resolve applies the environment
	// and the config file to flags not given (flag > env > config > default).
	pf := root.PersistentFlags()
	pf.StringVar(&a.profile, "profile", "default", "profile (local User identity) to use (env PACT_PROFILE)")
	pf.BoolVar(&a.json, "json", false, "print machine-readable JSON on stdout")
	pf.StringVar(&a.jqExpr, "jq", "", "filter the JSON output with a jq expression (implies --json; strings print raw, with control characters shown visibly on a terminal)")
	pf.BoolVar(&a.debug, "debug", false, "trace HTTP exchanges on stderr, secrets redacted (env PACT_DEBUG=1)")
	pf.BoolVar(&a.noBrows, "no-browser", false, "print links instead of opening a browser (env PACT_NO_BROWSER=1)")
	pf.StringVar(&a.databaseFlag, "database", "", "keep the profile's state in the PostgreSQL database at this postgres:// URL instead of its own SQLite file (env PACT_DATABASE_URL)")
	root.RegisterFlagCompletionFunc("profile", a.completeProfiles)
	root.SetFlagErrorFunc(flagError)
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error { return a.resolve(cmd) }

	root.AddCommand(
		newInitCmd(a), newWhoamiCmd(a), newKeyCmd(a), newJWKSCmd(a), newProviderCmd(a),
		newCardCmd(a), newSendCmd(a), newChatCmd(a), newConversationsCmd(a),
		newDemoCmd(a), newVersionCmd(a),
		newMCPCmd(a),
	)
	root.AddCommand(newServeCmd(a), newDevicesCmd(a))
	root.AddCommand(newDoctorCmd(a), newKeyringCmd(a))
	root.AddCommand(newBackupCmd(a), newRestoreCmd(a))
	addDelegationCommands(a, root)
	root.AddCommand(newGenCmd(a))
	// cobra adds `completion` when it executes; adding it here puts it in
	// the generated reference and man pages too.
	root.InitDefaultCompletionCmd()
	if c, _, err := root.Find([]string{"completion"}); err == nil && c != root {
		c.Args = cobra.ArbitraryArgs
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError{fmt.Errorf("completion needs a shell: bash, zsh, fish or powershell\nUsage: pact completion SHELL")}
			}
			return usageError{fmt.Errorf("no completion for the shell %q: use bash, zsh, fish or powershell", args[0])}
		}
		// cobra's shell subcommands check their arguments themselves:
		// a wrong one is a usage error (2) too.
		for _, sh := range c.Commands() {
			if check := sh.Args; check != nil {
				sh.Args = func(cmd *cobra.Command, args []string) error {
					if err := check(cmd, args); err != nil {
						return usageError{err}
					}
					return nil
				}
			}
		}
	}
	// Likewise `help`, so that `pact help send` works before Execute
	// (checkCommandPath looks commands up first).
	root.InitDefaultHelpCmd()
	addExamples(root)
	return root
}

// run executes pact with args and returns the process exit code.
func run(args []string, streams *iostreams.IO) int {
	a := &app{io: streams}
	root := newRootCmd(a)
	if err := checkCommandPath(root, args); err != nil {
		a.json = wantsJSON(args) // flags are not parsed yet
		return a.report(err)
	}
	root.SetArgs(protectDashArgs(root, args))
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	ctx, caught, stop := signalContext(context.Background())
	defer stop()
	store.SetProgress(func(msg string) { streams.Eprintf("%s\n", msg) })
	err := root.ExecuteContext(ctx)
	// What opening the profile's database found to say (files imported
	// late, files the import could not read): once, on stderr.
	for _, n := range store.TakeNotices() {
		a.io.Eprintf("%s %s\n", a.io.ErrStyles().Warning.Render("note:"), safe(n))
	}
	if err == nil && a.lineErr != nil {
		// Already shown on stderr by printJSONLine: only the exit code.
		code, _, _ := classify(a.lineErr)
		return code
	}
	if err == nil {
		return 0
	}
	if sig := (*tui.SignalError)(nil); errors.As(err, &sig) {
		// The chat ended by SIGHUP, SIGQUIT or SIGTERM: 128 + the signal (129, 131, 143).
		a.report(err)
		return sig.ExitCode()
	}
	code := a.report(err)
	if s := caught(); s != nil && code == exitCancelled {
		// Cancelled by SIGHUP, SIGQUIT or SIGTERM rather than Ctrl+C.
		return signalExitCode(s)
	}
	return code
}

// usageError marks bad flags or arguments (exit 2).
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageError{fmt.Errorf("%s\nUsage: %s", what, cmd.UseLine())}
		}
		return nil
	}
}
