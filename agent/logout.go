package agent

import (
	"context"
	"strings"

	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/discovery"
)

// LoggedOut is what Logout forgot.
type LoggedOut struct {
	CardURL string                // the Brand's card URL as named ("" when brand is no Brand argument)
	Brand   conversation.BrandRef // the Brand as the profile knew it before
	Removed int                   // grants removed (0: none was stored)
}

// Logout forgets the delegation grants (and their tokens) of the Brand
// named brand, without contacting the Brand: grants are found by card URL
// or interface URL. Only when neither matches is the card fetched, to
// learn its interface URL (the Brand may have been named another way at
// login). Removed 0 means nothing was stored for it. Errors: the grant
// store's and the secret store's; a card that cannot be fetched is not an
// error (nothing is removed).
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
	return out, nil
}
