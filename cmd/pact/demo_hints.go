package main

import (
	"github.com/pact-cli/pact/profile"
)

// demoServeHints are the commands `pact demo serve` suggests, for the
// selected profile: its own issuer when it has one (init then keeps the
// key), else a loopback issuer served by `pact jwks serve`.
func (a *app) demoServeHints(providerURL, audience, site string) []string {
	name := a.profile
	cmd := func(args string) string { return profile.Command(name, args) }
	issuer := "http://127.0.0.1:8787"
	if c, err := (&profile.Profile{Name: name, Dirs: a.dirs()}).Load(); err == nil && c.Issuer != "" {
		issuer = c.Issuer
	}
	publish := cmd("jwks serve") + " &"
	if loopbackHostPort(issuer) == "" {
		publish = cmd("jwks export DIR") + "   # and upload DIR to " + issuer
	}
	return []string{
		cmd("init --issuer " + issuer),
		publish,
		cmd("provider add " + providerURL + " --audience " + audience),
		cmd("chat " + site),
	}
}
