package conversation

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/pact-cli/pact/delegation"
	"github.com/pact-cli/pact/discovery"
	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/receipts"
	"github.com/pact-cli/pact/store"
)

// RestoreChecks are the checks `pact restore` makes again on the rows it
// copies from a backup (store.Restore): a grant's endpoints against the
// registration of its Provider, as login checked them (grantEndpoints),
// and each pin as pinning makes them (discovery.CheckPinRecord). cfg is
// the profile's settings (nil when it has none yet: grants are then kept,
// and checked when they are used).
func RestoreChecks(cfg *profile.Config) store.RestoreChecks {
	return store.RestoreChecks{
		Grant: func(interfaceURL, _ string, data []byte) error {
			var g delegation.Grant
			if err := json.Unmarshal(data, &g); err != nil {
				return fmt.Errorf("it is not a grant pact wrote (%v)", err)
			}
			if g.InterfaceURL != interfaceURL {
				return fmt.Errorf("it names another interface URL (%s)", g.InterfaceURL)
			}
			if cfg == nil {
				return nil
			}
			if _, ok := cfg.Match(interfaceURL); !ok {
				// No Provider registered for it yet (settings are not in a
				// backup): checked when it is used, once one is.
				return nil
			}
			var ee *delegation.EndpointError
			if err := grantEndpoints(cfg, g); errors.As(err, &ee) {
				return fmt.Errorf("its %s %s is not under the registration of its Provider, as login requires", ee.What, ee.URL)
			} else if err != nil {
				return err
			}
			return nil
		},
		Pin: discovery.CheckPinRecord,
		Receipt: func(expect []byte) error {
			var exp receipts.Expect
			if err := json.Unmarshal(expect, &exp); err != nil {
				return fmt.Errorf("what it was checked against is not readable (%v)", err)
			}
			if cfg == nil || exp.JWKSURI == "" {
				return nil
			}
			if err := receiptJWKSURI(cfg, exp.Brand, exp.JWKSURI); err != nil {
				return &receipts.JWKSURIError{Brand: exp.Brand, JWKSURI: exp.JWKSURI, Err: err}
			}
			return nil
		},
	}
}

// ReceiptJWKSURIRule is the rule an archived receipt's jwks_uri must pass for
// the receipt to verify again (receipts.Archive.CheckJWKSURI): the
// endpoint-origin rule of the Provider registration its brand (the interface
// URL) matches, as login applied it to the grant the jwks_uri came from
// (receiptJWKSURI). The profile's settings are read once, on first use.
func ReceiptJWKSURIRule(p *profile.Profile) func(brand, jwksURI string) error {
	load := sync.OnceValues(p.Load)
	return func(brand, jwksURI string) error {
		cfg, err := load()
		if err != nil {
			return nil // no settings: no registration to check against (nothing is sent either)
		}
		return receiptJWKSURI(cfg, brand, jwksURI)
	}
}

// receiptJWKSURI checks jwksURI, where the key of a receipt of the Brand at
// the interface URL brand came from, under the registration brand matches
// (profile.Config.CheckEndpoint). A brand no registration matches (a receipt
// imported from another User's bundle, whose jwks_uri came from the Brand's
// card) is not checked.
func receiptJWKSURI(cfg *profile.Config, brand, jwksURI string) error {
	reg, ok := cfg.Match(brand)
	if !ok {
		return nil
	}
	return cfg.CheckEndpoint(*reg, "jwks_uri", jwksURI)
}

// grantEndpoints checks g's endpoints (delegation.Grant.CheckEndpoints)
// under the endpoint-origin rule of the Provider registration its
// interface URL matches, the one login used (profile.Config.CheckEndpoint).
// A grant of no registered Provider fails.
func grantEndpoints(cfg *profile.Config, g delegation.Grant) error {
	reg, ok := cfg.Match(g.InterfaceURL)
	if !ok {
		return fmt.Errorf("no Provider this profile is registered with serves %s", g.InterfaceURL)
	}
	return g.CheckEndpoints(func(what, url string) error { return cfg.CheckEndpoint(*reg, what, url) })
}
