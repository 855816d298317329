package conversation

import (
	"context"
	"errors"
	"fmt"

	"github.com/pact-cli/pact/a2aclient"
	"github.com/pact-cli/pact/delegation"
	"github.com/pact-cli/pact/discovery"
)

// ErrNoExtendedCard means the Brand's card does not declare
// capabilities.extendedAgentCard.
var ErrNoExtendedCard = errors.New("this Brand's card does not offer an extended card")

// ExtendedCard fetches what this User may use at the Brand: the
// authenticated extended Agent Card (A2A 1.0 GetExtendedAgentCard, GET
// {interface}/extendedAgentCard), sent with a fresh PA JWT and, when the
// User has delegated to this Brand, the delegation token (refreshed once
// on invalid_token, as a message is; PACT §5.5). It is checked like the
// public card (discovery.CheckExtended). Errors: ErrNoExtendedCard when the
// card declares none, *a2aclient.Error, *discovery.InvalidCardError,
// delegation errors.
func (s *Session) ExtendedCard(ctx context.Context) (*discovery.Card, error) {
	if !s.Card.HasExtendedCard() {
		return nil, ErrNoExtendedCard
	}
	req := a2aclient.Request{InterfaceURL: s.Card.InterfaceURL, PAToken: s.bound.Token}
	get := func() (*discovery.Card, error) {
		raw, err := s.opts.Client.ExtendedCard(ctx, req)
		if err != nil {
			return nil, err
		}
		return discovery.CheckExtended(ctx, s.opts.HTTP, s.Card, raw)
	}
	if s.mgr == nil {
		return get()
	}
	if g, err := s.mgr.Grant(s.Card.InterfaceURL); errors.Is(err, delegation.ErrNoGrant) || (err == nil && g.Dead) {
		return get()
	} else if err != nil {
		return nil, err
	}
	var card *discovery.Card
	err := s.mgr.Send(ctx, s.Card.InterfaceURL, func(token string, _ *delegation.Grant) error {
		req.Delegation = func(context.Context) (string, error) { return token, nil }
		var err error
		card, err = get()
		if a2aclient.IsReason(err, a2aclient.ReasonInvalidToken) {
			return fmt.Errorf("%w: %w", delegation.ErrInvalidToken, err)
		}
		return err
	})
	var lr *delegation.LoginRequiredError
	if errors.As(err, &lr) {
		lr.BrandName, lr.Arg = s.Card.Name(), s.arg
	}
	return card, err
}
