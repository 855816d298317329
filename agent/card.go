package agent

import (
	"context"
	"errors"

	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/discovery"
)

// Card fetches the card of brand (discovery.Fetch, never the cache), does
// with its pin what pin says (PinNote, LookPin or Trust), and adds the
// name's warnings (conversation.NameWarnings) and the Provider
// registration that serves it (none before `pact init`).
func (l *Local) Card(ctx context.Context, brand string, pin CardPin) (*CardReport, error) {
	cardURL, err := discovery.CardURL(brand)
	if err != nil {
		return nil, err
	}
	card, err := discovery.Fetch(ctx, l.Opts.HTTP, cardURL)
	if err != nil {
		return nil, err
	}
	rep := &CardReport{Card: card}
	switch pin.Mode {
	case CardLook:
		look, err := LookPin(ctx, l.Opts.Pins, card, l.now())
		if err != nil {
			return nil, err
		}
		rep.Pin = &look
	case CardTrust:
		t, err := Trust(ctx, l.Opts.Pins, brand, card, pin.Expect, l.now())
		if err != nil {
			return nil, err
		}
		rep.Trusted, rep.PinNote = t, t.Note
	default:
		if rep.PinNote, err = PinNote(ctx, l.Opts.Pins, brand, card, l.now()); err != nil {
			return nil, err
		}
	}
	rep.NameWarnings = conversation.NameWarnings(ctx, l.Opts, card.URL, card.Name())
	if l.Opts.Profile != nil {
		if cfg, err := l.Opts.Profile.Load(); err == nil {
			if reg, ok := cfg.Match(card.InterfaceURL); ok {
				rep.Provider = reg
			}
		}
	}
	return rep, nil
}

// TrustCard is `pact card BRAND --trust [--expect FP]` on ag: the card
// fetched in this request is recorded as the Brand's pin (Agent.Card with
// CardTrust), and only a card the User saw. A changed card needs expect,
// the fingerprint the CARD_CHANGED error gave, or confirm: asked with the
// change (old and new side by side) and the new card's fingerprint, a yes
// trusts the card with exactly that fingerprint (one fetched since that
// says anything else is refused with the *discovery.CardChangedError,
// Expected set), a no is *NotAcceptedError. With neither the changed card
// is refused (*discovery.CardChangedError).
func TrustCard(ctx context.Context, ag Agent, brand, expect string,
	confirm func(changed *discovery.CardChangedError, fingerprint string) bool) (*CardReport, error) {
	rep, err := ag.Card(ctx, brand, CardPin{Mode: CardTrust, Expect: expect})
	var changed *discovery.CardChangedError
	if expect != "" || confirm == nil || !errors.As(err, &changed) || changed.Expected != "" {
		return rep, err
	}
	fp := changed.Fingerprint()
	if !confirm(changed, fp) {
		return nil, &NotAcceptedError{Brand: brand}
	}
	return ag.Card(ctx, brand, CardPin{Mode: CardTrust, Expect: fp})
}

// AcceptChange asks the User about a changed card a turn refused (the
// full-screen chat's y/n panel): confirm shows changed (old and new side by
// side) and returns the answer. Yes records the new values
// (Agent.AcceptChange), and the Brand can be opened again; no is
// *NotAcceptedError naming brand, with nothing recorded or sent. confirm's
// error is returned as is.
func AcceptChange(ctx context.Context, ag Agent, brand string, changed *discovery.CardChangedError,
	confirm func(changed *discovery.CardChangedError) (bool, error)) error {
	ok, err := confirm(changed)
	if err != nil {
		return err
	}
	if !ok {
		return &NotAcceptedError{Brand: brand}
	}
	return ag.AcceptChange(ctx, brand, changed)
}
