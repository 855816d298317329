package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/spf13/cobra"

	"github.com/pact-cli/pact/httpx"
	"github.com/pact-cli/pact/jwks"
	"github.com/pact-cli/pact/profile"
)

func newJWKSCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "jwks",
		Short: "Print the public JWKS (never a private member)",
		Args:  exactArgs(0, "jwks takes no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, c, err := a.loadProfile()
			if err != nil {
				return err
			}
			return a.printJSON(jwks.Public(c.JWKS().Keys...))
		},
	}
	var addr string
	serve := &cobra.Command{
		Use:   "serve [--addr HOST:PORT]",
		Short: "Serve /.well-known/jwks.json and /.well-known/openid-configuration",
		Long: `Serve this profile's public keys so Providers can verify its PA JWTs (its identity tokens):

  /.well-known/jwks.json               the JWKS
  /.well-known/openid-configuration    {"issuer", "jwks_uri"} for open Providers

Keys are read again on every request, so a rotation is served at once.`,
		Args: exactArgs(0, "jwks serve takes no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if addr != "" {
				if _, _, err := parseListenAddr("--addr", addr, "127.0.0.1:8787"); err != nil {
					return err
				}
			}
			p, c, err := a.loadProfile()
			if err != nil {
				return err
			}
			// By default, listen where the jwks_uri points when that is a
			// loopback address: that is where Providers will look.
			published := loopbackHostPort(c.JWKSURI)
			if addr == "" {
				addr = published
			}
			if addr == "" {
				addr = "127.0.0.1:8787"
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				if errors.Is(err, syscall.EADDRINUSE) {
					return fmt.Errorf("cannot listen on %s: the port is taken (another `pact jwks serve`? use --addr HOST:PORT)", addr)
				}
				return fmt.Errorf("cannot listen on %s: %w (use --addr HOST:PORT)", addr, err)
			}
			if published != "" && portOf(published) != portOf(ln.Addr().String()) && !a.json {
				a.io.Eprintf("%s your jwks_uri is %s, but this serves %s: Providers will not find your keys here (see `%s`)\n",
					a.io.ErrStyles().Warning.Render("warning:"), c.JWKSURI, ln.Addr(), profile.Command(p.Name, "init --jwks-uri"))
			}
			h := jwks.Handler(c.Issuer, c.JWKSURI, func() (jose.JSONWebKeySet, error) {
				cur, err := p.Load()
				if err != nil {
					return jose.JSONWebKeySet{}, err
				}
				return cur.JWKS(), nil
			})
			srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
			base := "http://" + ln.Addr().String()
			if a.json {
				if err := a.printJSON(map[string]string{"url": base, "jwks": base + "/.well-known/jwks.json", "openid_configuration": base + "/.well-known/openid-configuration", "issuer": c.Issuer, "jwks_uri": c.JWKSURI}); err != nil {
					ln.Close()
					return err
				}
			} else {
				st := a.io.ErrStyles()
				a.io.Eprintf("%s serving the JWKS of profile %q\n  %s/.well-known/jwks.json\n  %s/.well-known/openid-configuration\n",
					st.Success.Render("✓"), p.Name, base, base)
				a.io.Eprintf("%s\n", st.Faint.Render("issuer "+c.Issuer+" · jwks_uri "+c.JWKSURI+" · Ctrl+C to stop"))
			}
			go func() {
				<-cmd.Context().Done()
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				srv.Shutdown(ctx)
			}()
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		},
	}
	serve.Flags().StringVar(&addr, "addr", "", "address to listen on (default: the jwks_uri's address when it is on loopback, else 127.0.0.1:8787)")
	cmd.AddCommand(serve, newJWKSExportCmd(a))
	return cmd
}

// loopbackHostPort returns "host:port" of an http URL on a loopback host
// (the port made explicit), or "" for anything else.
func loopbackHostPort(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || !httpx.IsLoopback(u.Hostname()) {
		return ""
	}
	port := u.Port()
	if port == "" {
		port = "80"
	}
	return net.JoinHostPort(u.Hostname(), port)
}

func portOf(hostport string) string {
	_, port, _ := net.SplitHostPort(hostport)
	return port
}
