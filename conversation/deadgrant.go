package conversation

import (
	"errors"
	"time"

	"github.com/pact-cli/pact/delegation"
	"github.com/pact-cli/pact/profile"
)

// Delegation states reported by DelegationStatus.
const (
	DelegationNone   = "none"   // no grant: identity only
	DelegationActive = "active" // the grant's token goes with every message
	DelegationDead   = "dead"   // refused and not refreshable: identity only until `pact login`
)

// DelegationStatus is this Brand's delegation as the CLI and the TUI show
// it. JSON: {"state", "brand", "brandName", "scopes"?, "deadSince"?, "login"?}.
type DelegationStatus struct {
	State     string   `json:"state"`     // DelegationNone, DelegationActive or DelegationDead
	Brand     string   `json:"brand"`     // card URL
	BrandName string   `json:"brandName"` // the card's name
	Scopes    []string `json:"scopes,omitempty"`
	// DeadSince is when the grant was found dead (UTC), for DelegationDead.
	DeadSince *time.Time `json:"deadSince,omitempty"`
	// Login is the command that delegates again, for DelegationDead.
	Login string `json:"login,omitempty"`
}

// DelegationStatus reports whether messages to this Brand carry a
// delegation token (PACT §5.5): none, active, or dead — a grant the
// Provider refused that could not be refreshed, after which messages go
// identity-only until `pact login` stores a new grant. Errors: reading the
// grant store.
func (s *Session) DelegationStatus() (DelegationStatus, error) {
	st := DelegationStatus{State: DelegationNone, Brand: s.Card.URL, BrandName: s.Card.Name()}
	g, err := s.Grant()
	if errors.Is(err, delegation.ErrNoGrant) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	st.Scopes = g.Scopes
	if !g.Dead {
		st.State = DelegationActive
		return st, nil
	}
	st.State, st.DeadSince = DelegationDead, g.DeadSince
	login := []string{"login", s.brandArg()}
	for _, sc := range g.Scopes {
		login = append(login, "--scope", sc)
	}
	st.Login = profile.CommandWords(s.opts.Profile.Name, login...) // quoted: the scopes came from the Brand's server
	return st, nil
}

// deadNote is the status to attach to a Result sent identity-only because
// the grant is dead, else nil.
func (s *Session) deadNote() *DelegationStatus {
	st, err := s.DelegationStatus()
	if err != nil || st.State != DelegationDead {
		return nil
	}
	return &st
}
