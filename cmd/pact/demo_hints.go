package main

import (
	"errors"
	"net"
	"time"

	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/secrets"
)

// demoServeHints are the commands `pact demo serve` suggests, for the
// selected profile: its own issuer when it has one (init then keeps the
// key), else a loopback issuer served by `pact jwks serve`.
func (a *app) demoServeHints(providerURL, audience, site string) []string {
	name := a.profile
	cmd := func(args string) string { return profile.Command(name, args) }
	issuer := "http://" + freeLoopback("127.0.0.1:8787") // jwks serve listens there
	var first []string
	if c, err := (&profile.Profile{Name: name, Dirs: a.dirs()}).Load(); err == nil && c.Issuer != "" {
		issuer = c.Issuer
	} else if a.osKeyringUnavailable() {
		// Without it, the init below would fail: the secrets go to a file.
		first = append(first, "export PACT_KEYRING=file   # no OS keyring answers here: keep the secrets in a 0600 file")
	}
	publish := cmd("jwks serve") + " &"
	if loopbackHostPort(issuer) == "" {
		publish = cmd("jwks export DIR") + "   # and upload DIR to " + issuer
	}
	return append(first,
		cmd("init --issuer "+issuer),
		publish,
		cmd("provider add "+providerURL+" --audience "+audience),
		cmd("chat "+site),
	)
}

// osKeyringUnavailable reports whether the selected profile would keep its
// secrets in the OS keyring and that keyring does not answer (a read of an
// absent entry, as doctor makes, within 2 s).
func (a *app) osKeyringUnavailable() bool {
	kind, err := a.keyringKind()
	if err != nil || (kind != "" && kind != "os") {
		return false
	}
	sec, err := secrets.Open(kind, a.dirs().Data, 2*time.Second)
	if err != nil {
		return false
	}
	_, err = sec.Get(a.profile + "/doctor-probe")
	return errors.Is(err, secrets.ErrUnavailable)
}

// freeLoopback is addr when nothing listens there, else another loopback
// address free now (the port the system picks), so that a suggested
// `pact init --issuer` and `pact jwks serve` do not collide with a server
// already running (a demo on 8787, say). It is a hint: the port may be
// taken again by the time the User runs it.
func freeLoopback(addr string) string {
	for _, a := range []string{addr, "127.0.0.1:0"} {
		if l, err := net.Listen("tcp", a); err == nil {
			free := l.Addr().String()
			l.Close()
			return free
		}
	}
	return addr
}
