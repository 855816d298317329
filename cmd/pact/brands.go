package main

import (
	"net/url"

	"github.com/pact-cli/pact/conversation"
)

// One naming rule for every command (CLI contract): --json carries full ids
// and the Brand's card URL (plus its name when known); tables show the
// Brand's name and domain, and short ids.

// brandRef is what pact knows of a Brand from its own state.
type brandRef struct {
	CardURL      string
	Name         string
	InterfaceURL string
}

// brandIndex finds a Brand by card URL or interface URL, from the stored
// conversations and grants (no network).
type brandIndex struct {
	byCard, byIface map[string]brandRef
}

func (a *app) brandIndex(opts conversation.Options) brandIndex {
	ix := brandIndex{byCard: map[string]brandRef{}, byIface: map[string]brandRef{}}
	add := func(r brandRef) {
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
				add(brandRef{CardURL: c.Brand, Name: c.BrandName, InterfaceURL: c.InterfaceURL})
			}
		}
	}
	if grants, err := conversation.ListGrants(opts); err == nil {
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

// lookup returns the Brand known by card URL or interface URL u.
func (ix brandIndex) lookup(u string) (brandRef, bool) {
	if r, ok := ix.byCard[u]; ok {
		return r, true
	}
	r, ok := ix.byIface[u]
	return r, ok
}

// brandLabel is how a table shows a Brand: "Name (domain)", or the domain
// alone when the name is unknown. The domain is the host of the card URL
// (else of u).
func brandLabel(name, cardURL, u string) string {
	domain := hostOf(cardURL)
	if domain == "" {
		domain = hostOf(u)
	}
	if domain == "" {
		domain = u
	}
	if name == "" {
		return domain
	}
	return name + " (" + domain + ")"
}

func hostOf(raw string) string {
	p, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return p.Host
}
