package conversation

// BrandRef is what pact knows of a Brand from its own state: its card URL,
// the card's name and its interface URL.
type BrandRef struct {
	CardURL      string `json:"cardUrl"`
	Name         string `json:"name"`
	InterfaceURL string `json:"interfaceUrl"`
}

// BrandIndex finds a Brand by card URL or interface URL, from the stored
// conversations and grants (no network). It names the Brand of a receipt,
// whose brand claim is the interface URL, as every command and the MCP
// tools do: card URL and name.
type BrandIndex struct {
	byCard, byIface map[string]BrandRef
}

// KnownBrands builds the BrandIndex of the profile in opts.
func KnownBrands(opts Options) BrandIndex {
	ix := BrandIndex{byCard: map[string]BrandRef{}, byIface: map[string]BrandRef{}}
	add := func(r BrandRef) {
		if old, ok := ix.byIface[r.InterfaceURL]; ok {
			if r.Name == "" {
				r.Name = old.Name
			}
			if r.CardURL == "" {
				r.CardURL = old.CardURL
			}
		}
		if r.CardURL != "" {
			ix.byCard[r.CardURL] = r
		}
		if r.InterfaceURL != "" {
			ix.byIface[r.InterfaceURL] = r
		}
	}
	if opts.Store != nil {
		if list, err := opts.Store.List(); err == nil {
			for _, c := range list {
				add(BrandRef{CardURL: c.Brand, Name: c.BrandName, InterfaceURL: c.InterfaceURL})
			}
		}
	}
	if grants, err := ListGrants(opts); err == nil {
		for _, g := range grants {
			r := ix.byIface[g.InterfaceURL]
			if r.CardURL == "" {
				r.CardURL = g.Brand
			}
			r.InterfaceURL = g.InterfaceURL
			add(r)
		}
	}
	return ix
}

// Lookup returns the Brand known by card URL or interface URL u.
func (ix BrandIndex) Lookup(u string) (BrandRef, bool) {
	if r, ok := ix.byCard[u]; ok {
		return r, true
	}
	r, ok := ix.byIface[u]
	return r, ok
}

// Receipt is the Brand of a receipt whose brand claim is iface: as the
// profile knows it (conversations, grants), else by the labels archived
// with the receipt (card URL and name, from a bundle's cardUrl and
// brandName for an imported receipt).
func (ix BrandIndex) Receipt(iface, card, name string) BrandRef {
	ref, _ := ix.Lookup(iface)
	if ref.CardURL == "" {
		ref.CardURL = card
	}
	if ref.Name == "" && ref.CardURL == card {
		ref.Name = name
	}
	return ref
}
