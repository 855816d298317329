package agent

import (
	"context"
	"strings"

	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/delegation"
	"github.com/pact-cli/pact/discovery"
	"github.com/pact-cli/pact/iostreams"
)

// LoggedOut is what Logout forgot.
type LoggedOut struct {
	CardURL string                `json:"cardUrl"` // the Brand's card URL as named ("" when brand is no Brand argument)
	Brand   conversation.BrandRef `json:"brand"`   // the Brand as the profile knew it before
	Removed int                   `json:"removed"` // grants removed (0: none was stored)
}

// Logout forgets the delegation grants (and their tokens) of the Brand
// named brand, without contacting the Brand: grants are found by card URL
// or interface URL. Only when neither matches is the card fetched, to
// learn its interface URL (the Brand may have been named another way at
// login). Errors: *NoDelegationError when nothing was stored for it (a
// card that cannot be fetched counts as that), the grant store's and the
// secret store's.
func Logout(ctx context.Context, opts conversation.Options, brand string) (LoggedOut, error) {
	arg := strings.TrimRight(brand, "/")
	cardURL, cerr := discovery.CardURL(brand)
	out := LoggedOut{CardURL: cardURL}
	out.Brand, _ = Brands(opts).Lookup(cardURL) // before the grant is forgotten
	n, err := conversation.ForgetBrand(opts, cardURL, arg)
	if err != nil {
		return out, err
	}
	if n == 0 && cerr == nil {
		if card, ferr := discovery.Fetch(ctx, opts.HTTP, cardURL); ferr == nil {
			if n, err = conversation.ForgetBrand(opts, card.URL, card.InterfaceURL); err != nil {
				return out, err
			}
		}
	}
	out.Removed = n
	if n == 0 {
		return out, &NoDelegationError{Brand: brand}
	}
	return out, nil
}

// NoDelegationError is a logout of a Brand for which no delegation is
// stored. It unwraps to delegation.ErrNoGrant.
type NoDelegationError struct {
	Brand string `json:"brand"` // as the User named it (a Brand argument, or the card's name)
}

func (e *NoDelegationError) Error() string {
	return "no delegation is stored for " + iostreams.SanitizeLine(e.Brand) + " (see `pact grants`)"
}

func (e *NoDelegationError) Unwrap() error { return delegation.ErrNoGrant }
