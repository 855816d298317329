package profile

import (
	"errors"
	"fmt"

	"github.com/pact-cli/pact/iostreams"
)

// Key states, as `pact key list` shows them.
const (
	StateActive    = "active"    // signs every PA JWT
	StateStaged    = "staged"    // published, waiting for `pact key activate`
	StatePublished = "published" // signed before; still published until retired
)

// ErrActiveKey is returned by Retire for the active key.
var ErrActiveKey = errors.New("the active key cannot be retired")

// State is the key's state: StateActive, StateStaged or StatePublished.
func (k KeyInfo) State() string {
	switch {
	case k.Active:
		return StateActive
	case k.Staged:
		return StateStaged
	}
	return StatePublished
}

// Key returns the key with this kid, or nil.
func (c *Config) Key(kid string) *KeyInfo {
	for i := range c.Keys {
		if c.Keys[i].KID == kid {
			return &c.Keys[i]
		}
	}
	return nil
}

// Staged returns the staged keys, oldest first.
func (c *Config) Staged() []KeyInfo {
	var out []KeyInfo
	for _, k := range c.Keys {
		if k.Staged && !k.Active {
			out = append(out, k)
		}
	}
	return out
}

// Activate makes kid the key that signs; the previously active key stays
// published (state "published") until retired. It does not check that the
// key is live at the jwks_uri: callers do that first (publish.Live), since
// a Provider that cannot find the kid refuses every PA JWT (PACT §3.2).
// Activating the active key is a no-op.
func (p *Profile) Activate(kid string) (KeyInfo, error) {
	var out KeyInfo
	err := p.update(func(c *Config) error {
		k := c.Key(kid)
		if k == nil {
			return notFound("no key %q in profile %q (see `%s`)", kid, p.Name, Command(p.Name, "key list"))
		}
		if !k.KeyURI().Held() {
			if _, err := p.Secrets.Get(p.keySecret(kid)); err != nil {
				return fmt.Errorf("the private key %s cannot be read from %s: %w", kid, p.Secrets.Where(), err)
			}
		}
		for i := range c.Keys {
			c.Keys[i].Active = c.Keys[i].KID == kid
			if c.Keys[i].Active {
				c.Keys[i].Staged = false
			}
		}
		out = *c.Key(kid)
		return nil
	})
	if err == nil {
		p.Stock().Clear() // tokens minted ahead by the previous key
	}
	return out, err
}

// Command is a pact command line for the profile name: "pact ARGS" for the
// default profile, else "pact --profile NAME ARGS", so that a hint printed
// for another profile runs against that profile.
func Command(name, args string) string {
	if name == "" || name == "default" {
		return "pact " + args
	}
	return "pact --profile " + iostreams.ShellQuote(name) + " " + args
}

// CommandWords is Command for a command line that holds values from the
// other side or from the User (a card URL, a scope id): each word is
// shell-quoted (iostreams.CommandHint), so that copying the hint into a
// shell runs exactly that command and nothing a server slipped into it.
func CommandWords(name string, words ...string) string {
	return Command(name, iostreams.CommandHint(words...))
}
