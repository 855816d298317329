package conversation

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/pact-cli/pact/delegation"
	"github.com/pact-cli/pact/discovery"
	"github.com/pact-cli/pact/profile"
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
	}
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
