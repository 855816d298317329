package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/server"
)

// serveFlags are the settings given as flags to `pact serve` (and, for
// database and config, to its subcommands).
type serveFlags struct {
	set    server.Settings
	config string
}

// serveSettings resolves the settings: flags given > environment > config
// file (--config, PACT_SERVE_CONFIG, else {config}/serve.json when it
// exists) > defaults (database: {data}/profiles/NAME/serve.db).
func (a *app) serveSettings(flags *pflag.FlagSet, f *serveFlags) (server.Settings, error) {
	path, optional := f.config, false
	if !flags.Changed("config") {
		path = os.Getenv(server.Env.Config)
	}
	if path == "" {
		path, optional = filepath.Join(a.dirs().Config, "serve.json"), true
	}
	file, err := server.LoadFile(path, optional)
	if err != nil {
		return server.Settings{}, usageError{err}
	}
	env, err := server.FromEnv(os.Getenv)
	if err != nil {
		return server.Settings{}, usageError{err}
	}
	var given server.Settings
	for name, dst := range map[string]*string{"issuer": &given.Issuer, "addr": &given.Addr, "database": &given.Database,
		"tls-cert": &given.TLSCert, "tls-key": &given.TLSKey, "name": &given.Name} {
		if fl := flags.Lookup(name); fl != nil && fl.Changed {
			*dst = fl.Value.String()
		}
	}
	if flags.Changed("rate-limit") {
		if f.set.RateLimit <= 0 {
			return server.Settings{}, usageError{errors.New("--rate-limit is a positive number of requests per device per minute")}
		}
		given.RateLimit = f.set.RateLimit
	}
	if flags.Changed("shutdown-timeout") {
		d, _ := flags.GetDuration("shutdown-timeout")
		if d <= 0 {
			return server.Settings{}, usageError{errors.New("--shutdown-timeout is a positive duration such as 30s")}
		}
		given.ShutdownTimeout = server.Duration(d)
	}
	defaultDB := filepath.Join(a.dirs().ProfileDataDir(a.profile), "serve.db")
	return given.Over(env).Over(file).WithDefaults(defaultDB), nil
}

// serveAdmin opens the server's database for an operator command.
func (a *app) serveAdmin(cmd *cobra.Command, f *serveFlags) (*server.Admin, server.Settings, func(), error) {
	s, err := a.serveSettings(cmd.Flags(), f)
	if err != nil {
		return nil, s, nil, err
	}
	if _, err := server.ParseDatabase(s.Database); err != nil {
		return nil, s, nil, usageError{err}
	}
	st, err := server.OpenStore(cmd.Context(), s.Database)
	if err != nil {
		return nil, s, nil, err
	}
	return &server.Admin{Store: st}, s, func() { st.Close() }, nil
}

const serveLong = `Run one personal agent for many Users and their devices.

The server speaks to Providers with one identity: the profile's issuer, keys
and pairwise-sub secret. Make it once, then register it with each Provider:

  pact --profile server init --issuer https://pa.example.com [--alg ES256|RS256]
  pact --profile server serve provider add URL --audience AUD
  pact --profile server serve --addr 127.0.0.1:8080

It serves, live at the issuer, OIDC discovery, the JWKS (Cache-Control:
max-age=300) and the OAuth Client ID Metadata Document (its client_id is
the issuer), so no
` + "`pact jwks export`" + ` is needed. Rotate keys with ` + "`pact --profile server key …`" + `: the
JWKS follows within a second.

Users and their devices:

  pact serve user add alice        # prints a one-time enrolment code (15 minutes)
  pact init --server URL --code CODE    # on alice's device, with its own PACT_HOME

Every call from a device carries a token signed by the device key; a revoked
device (pact devices revoke ID) is refused at its next call.

Plain HTTP is served only on a loopback address, behind a reverse proxy that
terminates TLS; any other address needs --tls-cert and --tls-key.

Settings, each from its flag, else its environment variable, else the config
file, else the default:

  --issuer URL            PACT_SERVE_ISSUER             issuer            the profile's issuer
  --addr HOST:PORT        PACT_SERVE_ADDR               addr              127.0.0.1:8080
  --database URL|PATH     PACT_DATABASE_URL             database          {data}/profiles/NAME/serve.db
  --tls-cert FILE         PACT_SERVE_TLS_CERT           tls_cert          none: plain HTTP on loopback
  --tls-key FILE          PACT_SERVE_TLS_KEY            tls_key           none
  --rate-limit N          PACT_SERVE_RATE_LIMIT         rate_limit        600 requests per device per minute
  --shutdown-timeout D    PACT_SERVE_SHUTDOWN_TIMEOUT   shutdown_timeout  30s
  --name TEXT             PACT_SERVE_NAME               name              pact (client_name of the metadata)
  --config FILE           PACT_SERVE_CONFIG             -                 {config}/serve.json when it exists

The config file is one JSON object of those keys. The database is SQLite
(a path, or sqlite:PATH) for one process, or PostgreSQL (a postgres:// URL),
which several replicas share behind a load balancer: give each the same
database, issuer, signing key and data key (README: Running several
replicas). Logs are JSON lines on stderr (no secret, no message text),
metrics are at /metrics, health at /healthz and /readyz, the API's OpenAPI
document at /v1/openapi.json. SIGTERM or Ctrl+C stops accepting, lets
requests in flight finish (up to the shutdown timeout), and exits 0.`

func newServeCmd(a *app) *cobra.Command {
	f := &serveFlags{}
	var shutdown time.Duration
	cmd := &cobra.Command{
		Use:   "serve [--issuer URL] [--addr HOST:PORT] [--database URL|PATH] [--tls-cert FILE --tls-key FILE]",
		Short: "Run one personal agent for many Users and their devices (pact serve)",
		Long:  serveLong,
		Args:  exactArgs(0, "serve takes no arguments (its commands: user, provider)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runServe(cmd, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.set.Issuer, "issuer", "", "the server's issuer URL (env "+server.Env.Issuer+"; default: the profile's)")
	fl.StringVar(&f.set.Addr, "addr", "", "address to listen on (env "+server.Env.Addr+"; default "+server.DefaultAddr+")")
	fl.StringVar(&f.set.TLSCert, "tls-cert", "", "TLS certificate, PEM (env "+server.Env.TLSCert+"); needed off loopback")
	fl.StringVar(&f.set.TLSKey, "tls-key", "", "TLS private key, PEM (env "+server.Env.TLSKey+")")
	fl.IntVar(&f.set.RateLimit, "rate-limit", 0, fmt.Sprintf("requests per device per minute (env %s; default %d)", server.Env.RateLimit, server.DefaultRateLimit))
	fl.DurationVar(&shutdown, "shutdown-timeout", 0, "how long requests in flight may finish on SIGTERM (env "+server.Env.ShutdownTimeout+"; default 30s)")
	fl.StringVar(&f.set.Name, "name", "", "client_name of the Client ID Metadata Document (env "+server.Env.Name+"; default pact)")
	pf := cmd.PersistentFlags()
	pf.StringVar(&f.set.Database, "database", "", "the server's database: a postgres:// URL (shared by replicas), or a SQLite file path or sqlite:PATH (env "+server.Env.Database+"; default {data}/profiles/NAME/serve.db)")
	pf.StringVar(&f.config, "config", "", "config file (env "+server.Env.Config+"; default {config}/serve.json when it exists)")
	cmd.AddCommand(newServeUserCmd(a, f), newServeProviderCmd(a, f))
	return cmd
}

// serveStartJSON is what `pact serve --json` prints once it listens.
type serveStartJSON struct {
	URL      string `json:"url"`
	Issuer   string `json:"issuer"`
	Addr     string `json:"addr"`
	Database string `json:"database"`
	TLS      bool   `json:"tls"`
	Profile  string `json:"profile"`
}

func (a *app) runServe(cmd *cobra.Command, f *serveFlags) error {
	s, err := a.serveSettings(cmd.Flags(), f)
	if err != nil {
		return err
	}
	if err := s.CheckListen(); err != nil {
		return usageError{err}
	}
	if _, err := server.ParseDatabase(s.Database); err != nil {
		return usageError{err}
	}
	p, err := a.prof()
	if err != nil {
		return err
	}
	id, err := server.NewIdentity(p, s.Issuer, nil)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	st, err := server.OpenStore(ctx, s.Database)
	if err != nil {
		return err
	}
	defer st.Close()
	logger := slog.New(slog.NewJSONHandler(a.io.ErrOut, &slog.HandlerOptions{Level: slog.LevelInfo}))
	srv, err := server.New(server.Options{Settings: s, Identity: id, Store: st, Logger: logger, Version: version,
		DataKeys: conversation.DataKeys(p)})
	if err != nil {
		return err
	}
	// Replicas on one database share one identity: refused here, before
	// listening, when this one's differs from the first's.
	if err := srv.CheckShared(ctx); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", s.Addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("cannot listen on %s: the port is taken (another pact serve? use --addr HOST:PORT)", s.Addr)
		}
		return fmt.Errorf("cannot listen on %s: %w (use --addr HOST:PORT)", s.Addr, err)
	}
	scheme := "http"
	if s.TLSCert != "" {
		scheme = "https"
	}
	start := serveStartJSON{URL: scheme + "://" + ln.Addr().String(), Issuer: id.Issuer(), Addr: ln.Addr().String(),
		Database: server.RedactDatabase(s.Database), TLS: s.TLSCert != "", Profile: p.Name}
	logger.Info("listening", slog.String("url", start.URL), slog.String("issuer", start.Issuer), slog.String("database", start.Database),
		slog.String("profile", p.Name), slog.String("replica", srv.Replica()), slog.String("version", version))
	if a.json {
		if err := a.printJSON(start); err != nil {
			ln.Close()
			return err
		}
	} else if a.io.IsStderrTTY() {
		st := a.io.ErrStyles()
		a.io.Eprintf("%s pact serve listening on %s for the issuer %s\n%s\n", st.Success.Render("✓"), start.URL, start.Issuer,
			st.Faint.Render("database "+start.Database+" · profile "+p.Name+" · Ctrl+C to stop"))
	}
	return srv.Serve(ctx, ln)
}

// serveHint is the server URL to show in an enrolment command: the
// issuer from the settings or the profile, else "URL".
func (a *app) serveHint(s server.Settings) string {
	if s.Issuer != "" {
		return s.Issuer
	}
	if _, c, err := a.loadProfile(); err == nil && c.Issuer != "" {
		return c.Issuer
	}
	return "URL"
}

// enrolCommand is the command a device runs with a code.
func enrolCommand(serverURL, code string) string {
	return "pact init --server " + serverURL + " --code " + code
}
