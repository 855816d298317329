package conversation

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/pact-cli/pact/deviceflow"
	"github.com/pact-cli/pact/discovery"
	"github.com/pact-cli/pact/profile"
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
	keys := BrandKeysResolver(ctx, opts)
	return func(brand string) (string, error) {
		k, err := keys(brand)
		return k.JWKSURI, err
	}
}

// BrandKeys is where the Brand whose interface URL a receipt names
// publishes its keys, and who that Brand is: the Brand a key found there
// belongs to.
type BrandKeys struct {
	JWKSURI string
	CardURL string // the Brand's Agent Card URL ("" when not known)
	Name    string // the card's name ("" when not known)
}

// MaxLookups is how many Brands one resolver (BrandKeysResolver,
// CardOfBrandResolver: one `pact receipts import`) looks up on the
// network. A bundle is a file anyone can write: each distinct brand claim
// of its lines, signed with a key of the writer's own, would otherwise send
// pact to two or three addresses the file chose (issue 31 item 14).
const MaxLookups = 16

// ErrTooManyBrands is returned by a BrandKeysResolver for a Brand past the
// first MaxLookups: its keys were not looked up. It wraps
// receipts.ErrKeysUnavailable (not checked, which is no forgery either).
var ErrTooManyBrands = fmt.Errorf("%w: the bundle names more than %d Brands, and pact looks up the keys of %d at most in one import",
	receipts.ErrKeysUnavailable, MaxLookups, MaxLookups)

// BrandKeysResolver is BrandJWKSURIResolver with the Brand the keys belong
// to (BrandKeys), asked once per Brand, for MaxLookups Brands at most
// (ErrTooManyBrands past them).
func BrandKeysResolver(ctx context.Context, opts Options) func(brand string) (BrandKeys, error) {
	type answer struct {
		k   BrandKeys
		err error
	}
	seen := map[string]answer{}
	return func(brand string) (BrandKeys, error) {
		if ans, ok := seen[brand]; ok {
			return ans.k, ans.err
		}
		if len(seen) >= MaxLookups {
			return BrandKeys{}, ErrTooManyBrands
		}
		k, err := FindBrandKeys(ctx, opts, brand)
		seen[brand] = answer{k, err}
		return k, err
	}
}

// BrandJWKSURI is the jwks_uri of the Brand whose interface URL is brand
// (a receipt's brand claim), found as BrandJWKSURIResolver says. Errors: the
// Brand's card or metadata could not be fetched or does not name brand.
func BrandJWKSURI(ctx context.Context, opts Options, brand string) (string, error) {
	k, err := FindBrandKeys(ctx, opts, brand)
	return k.JWKSURI, err
}

// FindBrandKeys is BrandJWKSURI with the Brand the keys belong to: the
// grant's card URL (named as the profile's conversations name it), or the
// Agent Card found at the interface URL.
func FindBrandKeys(ctx context.Context, opts Options, brand string) (BrandKeys, error) {
	if opts.Grants != nil {
		var cfg *profile.Config
		if opts.Profile != nil {
			cfg, _ = opts.Profile.Load()
		}
		if gs, err := opts.Grants.List(); err == nil && cfg != nil {
			for _, g := range gs {
				// A grant's jwks_uri as login checked it (a restored or
				// edited one may name another origin's keys).
				if receipts.SameBrand(g.InterfaceURL, brand) && g.JWKSURI != "" && grantEndpoints(cfg, g) == nil {
					ref, _ := KnownBrands(opts).Lookup(g.InterfaceURL)
					return BrandKeys{JWKSURI: g.JWKSURI, CardURL: g.Brand, Name: ref.Name}, nil
				}
			}
		}
	}
	u, err := url.Parse(brand)
	if err != nil || u.Host == "" {
		return BrandKeys{}, fmt.Errorf("the receipt's brand %q is not a URL", brand)
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
		return BrandKeys{}, err
	}
	if card.Delegation == nil || card.Delegation.OAuth2MetadataURL == "" {
		return BrandKeys{}, fmt.Errorf("the Agent Card at %s names no authorization server metadata", cardURL)
	}
	md, err := deviceflow.FetchMetadata(ctx, opts.HTTP, card.Delegation.OAuth2MetadataURL)
	if err != nil {
		return BrandKeys{}, err
	}
	return BrandKeys{JWKSURI: md.JWKSURI, CardURL: cardURL, Name: card.Name()}, nil
}

// CardOfBrandResolver answers, once per card URL, whether the Agent Card at
// cardURL is the card of the Brand whose interface URL is brand (it names
// that interface, PACT §2.1), with the card's name: how a bundle's cardUrl
// label is checked against the Brand whose key signed the line. A card that
// cannot be fetched is not that Brand's as far as pact can tell; past
// MaxLookups card URLs, none is fetched (the label is not used).
func CardOfBrandResolver(ctx context.Context, opts Options) func(cardURL, brand string) (name string, ok bool) {
	type answer struct {
		iface, name string
		ok          bool
	}
	seen := map[string]answer{}
	return func(cardURL, brand string) (string, bool) {
		ans, done := seen[cardURL]
		if !done && len(seen) >= MaxLookups {
			return "", false
		}
		if !done {
			if cu, err := discovery.CardURL(cardURL); err == nil {
				if card, err := discovery.Fetch(ctx, opts.HTTP, cu); err == nil {
					ans = answer{iface: card.InterfaceURL, name: card.Name(), ok: true}
				}
			}
			seen[cardURL] = ans
		}
		if !ans.ok || !receipts.SameBrand(ans.iface, brand) {
			return "", false
		}
		return ans.name, true
	}
}
