package conversation

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/pact-cli/pact/deviceflow"
	"github.com/pact-cli/pact/discovery"
	"github.com/pact-cli/pact/receipts"
)

// BrandJWKSURIResolver finds, once per Brand, the jwks_uri of a Brand's
// RFC 8414 metadata from its interface URL (a receipt's brand claim), the
// way `pact receipts verify` knows it: the grant this profile holds for
// that interface URL (its jwks_uri came from the metadata at login), else
// the Brand's Agent Card at the interface URL's origin, which must name
// that interface, and the metadata its delegation scheme names. A bundle
// line's own jwks_uri is never trusted.
func BrandJWKSURIResolver(ctx context.Context, opts Options) func(brand string) (string, error) {
	type answer struct {
		uri string
		err error
	}
	seen := map[string]answer{}
	return func(brand string) (string, error) {
		if ans, ok := seen[brand]; ok {
			return ans.uri, ans.err
		}
		uri, err := BrandJWKSURI(ctx, opts, brand)
		seen[brand] = answer{uri, err}
		return uri, err
	}
}

// BrandJWKSURI is the jwks_uri of the Brand whose interface URL is brand
// (a receipt's brand claim), found as BrandJWKSURIResolver says. Errors: the
// Brand's card or metadata could not be fetched or does not name brand.
func BrandJWKSURI(ctx context.Context, opts Options, brand string) (string, error) {
	if opts.Grants != nil {
		if gs, err := opts.Grants.List(); err == nil {
			for _, g := range gs {
				if receipts.SameBrand(g.InterfaceURL, brand) && g.JWKSURI != "" {
					return g.JWKSURI, nil
				}
			}
		}
	}
	u, err := url.Parse(brand)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("the receipt's brand %q is not a URL", brand)
	}
	// The Provider's copy of the card under the interface URL (PACT §2.1),
	// else the card at the interface URL's origin; either must name this
	// interface.
	var card *discovery.Card
	var cardURL string
	for _, c := range []string{strings.TrimRight(brand, "/") + discovery.WellKnownPath, u.Scheme + "://" + u.Host} {
		cu, cerr := discovery.CardURL(c)
		if cerr != nil {
			err = cerr
			continue
		}
		got, ferr := discovery.Fetch(ctx, opts.HTTP, cu)
		switch {
		case ferr != nil:
			err = ferr
		case !receipts.SameBrand(got.InterfaceURL, brand):
			err = fmt.Errorf("the Agent Card at %s is not the card of %s", cu, brand)
		default:
			card, cardURL, err = got, cu, nil
		}
		if card != nil {
			break
		}
	}
	if card == nil {
		return "", err
	}
	if card.Delegation == nil || card.Delegation.OAuth2MetadataURL == "" {
		return "", fmt.Errorf("the Agent Card at %s names no authorization server metadata", cardURL)
	}
	md, err := deviceflow.FetchMetadata(ctx, opts.HTTP, card.Delegation.OAuth2MetadataURL)
	if err != nil {
		return "", err
	}
	return md.JWKSURI, nil
}
