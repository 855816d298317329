package conversation

import (
	"context"
	"net/url"
	"sort"

	"github.com/pact-cli/pact/iostreams"
)

// LookAlikes are the Brands the User has accepted (pinned, with a name
// the profile knows from its conversations) on another origin than
// cardURL whose name looks like name: the same UTS #39 confusable
// skeleton (iostreams.Skeleton), so "Exаmple Bank" with a Cyrillic "а" on
// evil.example matches the pinned "Example Bank" on bank.example. A card
// naming itself as another Brand is how an impersonation starts: pact
// card, the chat header and get_agent_card flag it. Sorted by card URL;
// nil when none (or when the profile keeps no pins).
func LookAlikes(ctx context.Context, opts Options, cardURL, name string) []BrandRef {
	sk := iostreams.Skeleton(name)
	if sk == "" || opts.Pins == nil {
		return nil
	}
	origin := originOf(cardURL)
	var out []BrandRef
	for _, r := range KnownBrands(opts).byCard {
		if r.Name == "" || originOf(r.CardURL) == origin || iostreams.Skeleton(r.Name) != sk {
			continue
		}
		if _, pinned, err := opts.Pins.Pin(ctx, r.CardURL); err != nil || !pinned {
			continue
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CardURL < out[j].CardURL })
	return out
}

// NameWarnings are the plain-words warnings about a card's name, as every
// surface shows them: a word mixing scripts (iostreams.MixedScripts),
// invisible characters (iostreams.HidesCharacters), pact's own verdict
// words or marks (iostreams.MimicsVerdicts), a look-alike of a pinned Brand
// elsewhere (LookAlikes). They never repeat the name itself (a reader sees
// it, framed, beside them): only hosts pact checked. Nil when the name
// raises nothing.
func NameWarnings(ctx context.Context, opts Options, cardURL, name string) []string {
	var w []string
	if len(iostreams.MixedScripts(name)) > 0 {
		w = append(w, "the name mixes scripts within a word (letters that look like Latin ones but are not): it may imitate another Brand's name")
	}
	if iostreams.HidesCharacters(name) {
		w = append(w, "the name holds invisible characters (shown as \\u… escapes): it may imitate another Brand's name")
	}
	if iostreams.MimicsVerdicts(name) {
		w = append(w, "the name holds marks or words pact uses for its own findings (✓, \"signed by\", \"verified\"): they are the card's claim; what pact checked is said by pact, beside the card at "+hostOf(cardURL))
	}
	for _, r := range LookAlikes(ctx, opts, cardURL, name) {
		w = append(w, "the name looks like that of the Brand at "+hostOf(r.CardURL)+", which the User has accepted; this card is at "+hostOf(cardURL)+": it may be an impersonation")
	}
	return w
}

func originOf(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	return p.Scheme + "://" + p.Host
}

func hostOf(u string) string {
	if p, err := url.Parse(u); err == nil && p.Host != "" {
		return p.Host
	}
	return u
}

// NameWarnings are NameWarnings for the session's Brand.
func (s *Session) NameWarnings(ctx context.Context) []string {
	return NameWarnings(ctx, s.opts, s.Card.URL, s.Card.Name())
}
