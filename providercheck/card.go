package providercheck

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/pact-cli/pact/discovery"
)

func cardChecks() []Check {
	return []Check{
		{ID: "card.location", Group: GroupCard, Clause: "§2.1",
			Title:  "the card is served at the Brand's card URL (directly or by redirect), without authentication",
			Sends:  "GET {card URL} (no Authorization), following at most 5 redirects",
			Expect: "200 with a JSON Agent Card",
			run:    checkCardLocation},
		{ID: "card.interface", Group: GroupCard, Clause: "§2.1",
			Title:  `the card lists a supportedInterfaces entry with protocolBinding "HTTP+JSON" and protocolVersion "1.0"`,
			Expect: "an HTTP+JSON 1.0 interface with an https (or loopback http) url",
			run:    checkCardInterface},
		{ID: "card.pa-scheme", Group: GroupCard, Clause: "§2.1",
			Title:  `the personal-agent JWT is an httpAuthSecurityScheme (scheme "Bearer", bearerFormat "JWT") listed alone in one securityRequirements entry`,
			Expect: "such a scheme, and an entry naming only it",
			run:    checkCardScheme},
		{ID: "card.provider-copy", Group: GroupCard, Clause: "§2.1",
			Title:  "the Provider serves the card at {PROVIDER_URL}/a2a/{brandId}/.well-known/agent-card.json",
			Sends:  "GET {interface URL}/.well-known/agent-card.json (no Authorization)",
			Expect: "200 with a card naming the same interface URL",
			run:    checkProviderCopy},
		{ID: "card.unknown-brand", Group: GroupCard, Clause: "§2.1",
			Title:  "an unknown brandId gets 404 with no A2A body",
			Sends:  "GET {PROVIDER_URL}/a2a/{random brandId}/.well-known/agent-card.json (no Authorization)",
			Expect: "404, no A2A body",
			run:    checkUnknownBrandCard},
	}
}

// rawCard is the card as received, also when it failed discovery's checks.
func (r *runner) rawCard(ctx context.Context) (json.RawMessage, string, error) {
	card, err := r.fetchCard(ctx)
	if err == nil {
		return card.Raw, card.FinalURL, nil
	}
	var bad *discovery.InvalidCardError
	if errors.As(err, &bad) && bad.Raw != nil {
		return bad.Raw, bad.FinalURL, nil
	}
	return nil, "", err
}

func checkCardLocation(ctx context.Context, r *runner) outcome {
	sent := "GET " + r.opts.CardURL
	_, err := r.fetchCard(ctx)
	var bad *discovery.InvalidCardError
	switch {
	case err == nil:
	case errors.As(err, &bad):
		if bad.Raw == nil {
			return fail(sent, "served at "+bad.FinalURL, "the card is not a JSON object: %s", bad.Reason)
		}
	case errors.Is(err, ErrOrigin):
		return fail(sent, err.Error(), "the card URL redirects to an origin that is neither the Brand's nor a Provider this profile is registered with; nothing was sent there. Register the Provider first (pact provider add PROVIDER_URL --audience AUD)")
	default:
		return fail(sent, err.Error(), "no card at the Brand's card URL (the Brand's domain serves it at %s, or redirects there)", discovery.WellKnownPath)
	}
	_, final, _ := r.rawCard(ctx)
	got := "200, a JSON card"
	if final != r.opts.CardURL {
		got += ", redirected to " + final
		if !strings.HasSuffix(final, "/.well-known/agent-card.json") {
			return fail(sent, got, "the redirect does not lead to a card URL ending in /.well-known/agent-card.json")
		}
	}
	return pass(sent, got)
}

// cardJSON is as much of a card as these checks read, in the wire form.
type cardJSON struct {
	SupportedInterfaces []struct {
		URL             string `json:"url"`
		ProtocolBinding string `json:"protocolBinding"`
		ProtocolVersion string `json:"protocolVersion"`
	} `json:"supportedInterfaces"`
	SecuritySchemes      map[string]map[string]json.RawMessage `json:"securitySchemes"`
	SecurityRequirements []map[string]json.RawMessage          `json:"securityRequirements"`
}

// requirementSchemes is the scheme names of one securityRequirements
// entry: the members of its "schemes" object (the A2A 1.0 form), or of the
// entry itself (the bare form some SDKs write).
func requirementSchemes(entry map[string]json.RawMessage) []string {
	set := entry
	if raw, ok := entry["schemes"]; ok {
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) == nil {
			set = m
		}
	}
	var names []string
	for k := range set {
		names = append(names, k)
	}
	return names
}

// noCard says truly why there is no card to read: none could be fetched,
// or what came is not a JSON object (an HTML page, say).
func noCard(err error) string {
	var bad *discovery.InvalidCardError
	if errors.As(err, &bad) {
		return "what the card URL serves is not a JSON card (see card.location)"
	}
	return "the card could not be fetched (see card.location)"
}

func checkCardInterface(ctx context.Context, r *runner) outcome {
	raw, _, err := r.rawCard(ctx)
	if err != nil {
		return skip("%s", noCard(err))
	}
	var c cardJSON
	if err := json.Unmarshal(raw, &c); err != nil {
		return fail("", "", "the card does not decode: %v", err)
	}
	var seen []string
	for _, i := range c.SupportedInterfaces {
		seen = append(seen, fmt.Sprintf("%s %s", i.ProtocolBinding, i.ProtocolVersion))
		if i.ProtocolBinding == "HTTP+JSON" && i.ProtocolVersion == "1.0" {
			u, err := url.Parse(i.URL)
			if err != nil || u.Host == "" || (u.Scheme != "https" && !loopback(u)) {
				return fail("", "url "+i.URL, "the HTTP+JSON 1.0 interface url is not an https URL")
			}
			return pass("", "interface "+i.URL)
		}
	}
	if len(seen) == 0 {
		return fail("", "no supportedInterfaces", "the card lists no interfaces")
	}
	return fail("", "interfaces: "+strings.Join(seen, ", "), `no entry with protocolBinding "HTTP+JSON" and protocolVersion "1.0"`)
}

func loopback(u *url.URL) bool {
	h := u.Hostname()
	return u.Scheme == "http" && (h == "localhost" || h == "::1" || strings.HasPrefix(h, "127."))
}

// paSchemes are the names of the card's Bearer/JWT httpAuthSecuritySchemes.
func paSchemes(c cardJSON) []string {
	var names []string
	for name, s := range c.SecuritySchemes {
		raw, ok := s["httpAuthSecurityScheme"]
		if !ok {
			continue
		}
		var h struct {
			Scheme       string `json:"scheme"`
			BearerFormat string `json:"bearerFormat"`
		}
		if json.Unmarshal(raw, &h) == nil && strings.EqualFold(h.Scheme, "Bearer") && h.BearerFormat == "JWT" {
			names = append(names, name)
		}
	}
	return names
}

func checkCardScheme(ctx context.Context, r *runner) outcome {
	raw, _, err := r.rawCard(ctx)
	if err != nil {
		return skip("%s", noCard(err))
	}
	var c cardJSON
	if err := json.Unmarshal(raw, &c); err != nil {
		return fail("", "", "the card does not decode: %v", err)
	}
	names := paSchemes(c)
	if len(names) == 0 {
		return fail("", fmt.Sprintf("%d security schemes", len(c.SecuritySchemes)), `no httpAuthSecurityScheme with scheme "Bearer" and bearerFormat "JWT"`)
	}
	var entries []string
	for _, e := range c.SecurityRequirements {
		s := requirementSchemes(e)
		entries = append(entries, "["+strings.Join(s, "+")+"]")
		if len(s) == 1 {
			for _, n := range names {
				if s[0] == n {
					return pass("", fmt.Sprintf("scheme %q alone in a securityRequirements entry", n))
				}
			}
		}
	}
	return fail("", "securityRequirements "+strings.Join(entries, " "), "no securityRequirements entry names the personal-agent JWT scheme (%s) alone", strings.Join(names, ", "))
}

// providerBrandURL splits an interface URL {PROVIDER_URL}/a2a/{brandId}
// into {PROVIDER_URL}/a2a and brandId; ok is false for another layout.
func providerBrandURL(iface string) (base, brandID string, ok bool) {
	i := strings.LastIndex(iface, "/a2a/")
	if i < 0 {
		return "", "", false
	}
	id := iface[i+len("/a2a/"):]
	if id == "" || strings.Contains(id, "/") {
		return "", "", false
	}
	return iface[:i+len("/a2a")], id, true
}

// cardInterface is the card's HTTP+JSON 1.0 interface URL: the checked
// card's, else, for a card discovery refused for another reason (its PA
// scheme, say: card.pa-scheme's to judge), the one its JSON names. When
// there is none, why says truly why (no card, not JSON, no such interface),
// and checked is false when the card failed the §2.1 checks.
func (r *runner) cardInterface(ctx context.Context) (iface, why string, checked bool) {
	if card, err := r.fetchCard(ctx); err == nil {
		return card.InterfaceURL, "", true
	}
	raw, _, err := r.rawCard(ctx)
	if err != nil {
		return "", noCard(err), false
	}
	var c cardJSON
	if json.Unmarshal(raw, &c) != nil {
		return "", "the card does not decode (see card.interface)", false
	}
	for _, i := range c.SupportedInterfaces {
		if !strings.EqualFold(i.ProtocolBinding, "HTTP+JSON") || i.ProtocolVersion != "1.0" {
			continue
		}
		if u, err := url.Parse(i.URL); err == nil && u.Host != "" && !strings.ContainsAny(i.URL, "?#") {
			return strings.TrimRight(i.URL, "/"), "", false
		}
	}
	return "", "the card names no usable HTTP+JSON 1.0 interface (see card.interface)", false
}

// offOrigin is a skip for a URL that the run's origin rule forbids (neither
// the Brand's origin nor a registered Provider's, see runner.allowed):
// nothing is sent there, so the Provider is not judged on it. off is
// false for a URL the run may contact.
func (r *runner) offOrigin(u string) (o outcome, off bool) {
	if r.allowed(originOf(u)) {
		return outcome{}, false
	}
	return skip("%s is on %s, neither the Brand's origin nor a Provider this profile is registered with: nothing was sent there (register the Provider that serves this interface: pact provider add PROVIDER_URL --audience AUD)", u, originOf(u)), true
}

func checkProviderCopy(ctx context.Context, r *runner) outcome {
	iface, why, checked := r.cardInterface(ctx)
	if iface == "" {
		return skip("%s", why)
	}
	if _, _, ok := providerBrandURL(iface); !ok {
		return skip("the interface URL %s is not of the form {PROVIDER_URL}/a2a/{brandId}, so where the Provider serves the card cannot be told from it", iface)
	}
	u := iface + "/.well-known/agent-card.json"
	if o, off := r.offOrigin(u); off {
		return o
	}
	sent := "GET " + u
	e := r.do(ctx, request{method: "GET", url: u, header: map[string]string{"Accept": "application/json"}})
	if e.err != nil || e.status != 200 {
		return fail(sent, e.describe(), "the Provider does not serve the Brand's card there")
	}
	if !checked {
		// The Brand's card fails §2.1 itself (card.interface and
		// card.pa-scheme say how); its copy is judged on what this check
		// is about: served there, naming the same interface.
		var copyCard cardJSON
		if json.Unmarshal(e.body, &copyCard) != nil {
			return fail(sent, e.describe(), "the Provider's copy is not a JSON card")
		}
		for _, i := range copyCard.SupportedInterfaces {
			if strings.EqualFold(i.ProtocolBinding, "HTTP+JSON") && i.ProtocolVersion == "1.0" && strings.TrimRight(i.URL, "/") == iface {
				return pass(sent, "200, a card with the same interface (its §2.1 faults are the Brand's card's, above)")
			}
		}
		return fail(sent, e.describe(), "the Provider's copy does not name the Brand's card's interface (%s)", iface)
	}
	c, err := discovery.Parse(e.body)
	if err != nil {
		return fail(sent, e.describe(), "the Provider's card does not pass the §2.1 checks: %v", err)
	}
	if c.InterfaceURL != iface {
		return fail(sent, "interface "+c.InterfaceURL, "the Provider's copy names another interface than the Brand's card (%s)", iface)
	}
	return pass(sent, "200, a card with the same interface")
}

func checkUnknownBrandCard(ctx context.Context, r *runner) outcome {
	iface, why, _ := r.cardInterface(ctx)
	if iface == "" {
		return skip("%s", why)
	}
	base, _, ok := providerBrandURL(iface)
	if !ok {
		return skip("the interface URL is not of the form {PROVIDER_URL}/a2a/{brandId}: no unknown brandId can be made up")
	}
	u := base + "/" + randomID("pact-check-") + "/.well-known/agent-card.json"
	if o, off := r.offOrigin(u); off {
		return o
	}
	sent := "GET " + u
	e := r.do(ctx, request{method: "GET", url: u})
	var p []string
	if e.err != nil {
		p = append(p, "no answer: "+e.err.Error())
	} else {
		if e.status != 404 {
			p = append(p, fmt.Sprintf("status %d, want 404", e.status))
		}
		if e.hasA2ABody() {
			p = append(p, "the 404 has an A2A body")
		}
	}
	return judge(sent, e, p)
}
