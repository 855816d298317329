package main

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/pact-cli/pact/demoprovider"
	"github.com/pact-cli/pact/discovery"
	"github.com/pact-cli/pact/profile"
)

func newDemoCmd(a *app) *cobra.Command {
	var realBrowser bool
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the whole protocol on this machine against a built-in demo Provider",
		Long: `Start a demo Provider and a JWKS server on loopback, register a throw-away
profile with it, and walk through PACT step by step: discovery, a signed
conversation, a delegation with a step-up, and a verified receipt.

Nothing is installed and your own profiles are not touched: the tour uses a
temporary PACT_HOME and a file keyring. The User in the browser is played by
a built-in script unless --browser asks for your real browser.`,
		Args: exactArgs(0, "demo takes no arguments (see also: pact demo serve)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runTour(cmd.Context(), realBrowser)
		},
	}
	cmd.Flags().BoolVar(&realBrowser, "browser", false, "open the login links in your browser instead of the built-in scripted User")
	var addr string
	var siteAddrs []string
	var interval time.Duration
	var allow []string
	var rogue bool
	var faultNames []string
	serve := &cobra.Command{
		Use:   "serve [--addr HOST:PORT]",
		Short: "Run only the demo Provider, for trying pact chat against it by hand",
		Long: `Run the demo Provider and its Brand sites on loopback until Ctrl+C.

The addresses are fixed, so that the brand URLs stay the same from one start
to the next (stored conversations and grants keep working): the Provider on
--addr (default ` + demoDefaultAddr + `) and the Brand sites on the ports that follow
it (8791 for Example Co., 8792 for Other Shop by default), or on --site-addr.
--addr 127.0.0.1:0 takes free ports instead, new on every start.

--fault NAME (repeatable) makes the Provider break one PACT rule on
purpose, so that pact provider check can be seen to catch it; --fault list
lists them.`,
		Args: exactArgs(0, "demo serve takes no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if slices.Contains(faultNames, "list") {
				return a.printFaults()
			}
			for _, f := range faultNames {
				if !slices.ContainsFunc(demoprovider.Faults(), func(k demoprovider.Fault) bool { return k.Name == f }) {
					return usageError{fmt.Errorf("--fault %q: no such fault (pact demo serve --fault list lists them)", f)}
				}
			}
			sites, err := demoSiteAddrs(addr, siteAddrs)
			if err != nil {
				return err
			}
			cfg := demoprovider.Config{Addr: addr, SiteAddrs: sites, HTTPClient: a.httpClient(), PollInterval: interval, RogueCard: rogue, Faults: faultNames}
			if len(allow) > 0 {
				cfg.Policy = demoprovider.AllowList
				for _, entry := range allow {
					issuer, jwksURI, _ := strings.Cut(entry, "=")
					if jwksURI == "" {
						jwksURI = profile.DefaultJWKSURI(issuer)
					}
					if err := profile.CheckIssuer(issuer); err != nil {
						return usageError{fmt.Errorf("--allow: %w", err)}
					}
					cfg.Registered = append(cfg.Registered, demoprovider.Registration{Issuer: issuer, JWKSURI: jwksURI})
				}
			}
			srv, err := demoprovider.Start(cmd.Context(), cfg)
			var le *demoprovider.ListenError
			if errors.As(err, &le) {
				if errors.Is(le.Err, syscall.EADDRINUSE) {
					// Plainly, as jwks serve says it; the listener's own
					// words ("bind: address already in use") add nothing.
					return fmt.Errorf("%s cannot listen on %s: the port is taken (another `pact demo serve`? use --addr HOST:PORT, or --site-addr for the Brand sites)", le.What, le.Addr)
				}
				return fmt.Errorf("%s cannot listen on %s: %w (use --addr HOST:PORT, or --site-addr for the Brand sites)", le.What, le.Addr, le.Err)
			}
			if err != nil {
				return fmt.Errorf("starting the demo Provider: %w", err)
			}
			defer srv.Close()
			brands := srv.Brands()
			if a.json {
				// cardUrl is the card the Brand's site serves, signed by
				// the Brand: the one pact pins and the walkthrough uses;
				// providerCardUrl the Provider's unsigned copy (§2.1).
				type brandJSON struct {
					Name            string `json:"name"`      // the Brand's (the company's) name
					BrandName       string `json:"brandName"` // its card's name, as everywhere else
					URL             string `json:"url"`
					CardURL         string `json:"cardUrl"`
					ProviderCardURL string `json:"providerCardUrl"`
					InterfaceURL    string `json:"interfaceUrl"`
				}
				out := struct {
					Provider string      `json:"provider"`
					Audience string      `json:"audience"`
					Brands   []brandJSON `json:"brands"`
				}{Provider: srv.URL(), Audience: srv.Audience()}
				for _, b := range brands {
					site, err := discovery.CardURL(b.SiteURL)
					if err != nil {
						return err
					}
					out.Brands = append(out.Brands, brandJSON{b.Name, b.CardName, b.SiteURL, site, b.CardURL, b.InterfaceURL})
				}
				if err := a.printJSON(out); err != nil {
					return err
				}
			} else {
				st := a.io.ErrStyles()
				a.io.Eprintf("%s demo Provider running at %s\n", st.Success.Render("✓"), st.Bold.Render(srv.URL()))
				a.io.Eprintf("  audience to register: %s\n", st.Accent.Render(srv.Audience()))
				for _, b := range brands {
					a.io.Eprintf("  brand %-12s %s\n", b.Name, st.Accent.Render(b.SiteURL))
				}
				a.io.Eprintf("\nIn another terminal:\n")
				for _, line := range a.demoServeHints(srv.URL(), srv.Audience(), brands[0].SiteURL) {
					a.io.Eprintf("  %s\n", line)
				}
				if len(faultNames) > 0 {
					a.io.Eprintf("\n%s %s\n", st.Warning.Render("--fault: this Provider breaks PACT on purpose:"), strings.Join(faultNames, ", "))
					a.io.Eprintf("  see it caught: %s\n", profile.Command(a.profile, "provider check "+brands[0].SiteURL))
				}
				if rogue {
					a.io.Eprintf("\n%s\n", st.Warning.Render("--rogue-card: each Brand's site serves its real card once, then a card signed by another key;\n"+
						"the second `pact card` or `pact chat` shows the change and sends nothing until you accept it."))
				}
				a.io.Eprintf("\n%s\n", st.Faint.Render("Demo users for the Brand login: jane / jane-demo-pass, omar / omar-demo-pass."))
				// No desktop browser (a server, SSH): the login answered here.
				a.io.Eprintf("%s\n  %s\n%s\n", st.Faint.Render("Without a desktop browser, pact login can sign in as jane and approve for you:"),
					"PACT_BROWSER='"+profile.Command(a.profile, "demo approve")+"' "+profile.Command(a.profile, "login "+brands[0].SiteURL+" --scope orders:read"),
					st.Faint.Render("(or `pact demo approve LINK` with the link pact login prints). Ctrl+C to stop."))
			}
			<-cmd.Context().Done()
			return nil
		},
	}
	serve.Flags().StringVar(&addr, "addr", demoDefaultAddr, "Provider listen address; the Brand sites take the next ports (port 0: free ports)")
	serve.Flags().StringArrayVar(&siteAddrs, "site-addr", nil, "a Brand site's listen address, one per Brand in order (default: the ports after --addr)")
	serve.Flags().DurationVar(&interval, "poll-interval", 0, "device-flow polling interval the Provider asks for (default 5s)")
	serve.Flags().BoolVar(&rogue, "rogue-card", false, "after the first look, serve each Brand's card signed by another key (to see pact's pin warning)")
	serve.Flags().StringArrayVar(&faultNames, "fault", nil, "break one PACT rule on purpose, for pact provider check (repeatable; \"list\" lists them)")
	serve.Flags().StringArrayVar(&allow, "allow", nil, "accept only these personal agents: ISSUER[=JWKS_URI] (repeatable; default: any issuer that serves OIDC discovery)")
	cmd.AddCommand(serve, newDemoApproveCmd(a))
	return cmd
}

// printFaults is `pact demo serve --fault list`.
func (a *app) printFaults() error {
	fs := demoprovider.Faults()
	if a.json {
		return a.printJSON(fs)
	}
	rows := [][]string{{"FAULT", "CLAUSE", "WHAT THE PROVIDER DOES WRONG"}}
	for _, f := range fs {
		rows = append(rows, []string{f.Name, f.Clause, f.Description})
	}
	a.io.Table(a.io.Out, rows)
	return nil
}

// demoDefaultAddr is where `pact demo serve` listens by default: a fixed
// loopback port, so the demo Brands keep their URLs across restarts.
const demoDefaultAddr = "127.0.0.1:8790"

// demoSiteAddrs returns the Brand sites' listen addresses: those given
// with --site-addr (at most one per Brand), else the ports following the
// Provider's (port 0 stays 0: free ports).
func demoSiteAddrs(addr string, given []string) ([]string, error) {
	n := demoprovider.BrandCount()
	if len(given) > n {
		return nil, usageError{fmt.Errorf("--site-addr: the demo has %d Brands, got %d addresses", n, len(given))}
	}
	if len(given) > 0 {
		return given, nil
	}
	host, port, err := parseListenAddr("--addr", addr, demoDefaultAddr)
	if err != nil {
		return nil, err
	}
	if port+n > 65535 {
		return nil, usageError{fmt.Errorf("--addr %q: the Brand sites take the %d ports after it, and %d is past the last port (65535): use a lower port, or --site-addr", addr, n, port+n)}
	}
	out := make([]string, n)
	for i := range out {
		p := 0
		if port != 0 {
			p = port + 1 + i
		}
		out[i] = net.JoinHostPort(host, strconv.Itoa(p))
	}
	return out, nil
}

// parseListenAddr checks a listen address given with flag: HOST:PORT with
// a port from 0 to 65535. A bad one is a usage error (2) naming an
// example.
func parseListenAddr(flag, addr, example string) (host string, port int, err error) {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, usageError{fmt.Errorf("%s %q is not HOST:PORT (e.g. %s)", flag, addr, example)}
	}
	port, err = strconv.Atoi(portText)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, usageError{fmt.Errorf("%s %q: the port must be a number from 0 to 65535 (e.g. %s)", flag, addr, example)}
	}
	return host, port, nil
}
