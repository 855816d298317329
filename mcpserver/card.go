package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pact-cli/pact/agent"
	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/iostreams"
	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/store"
)

// ---- get_agent_card

// BrandInput names a Brand.
type BrandInput struct {
	Brand string `json:"brand" jsonschema:"the Brand: a domain (shop.example.com), an origin (https://shop.example.com) or an Agent Card URL"`
}

// CardInput is get_agent_card's input.
type CardInput struct {
	Brand    string `json:"brand" jsonschema:"the Brand: a domain (shop.example.com), an origin (https://shop.example.com) or an Agent Card URL"`
	Extended bool   `json:"extended,omitempty" jsonschema:"also fetch the Brand's extended card (when the card declares one): the skills this User may use there, asked with this personal agent's identity and the User's delegation if any"`
}

// CardOutput is get_agent_card's structured result: the `pact card --json`
// shape ({card, pact}) with the signature state in pact.signature.
type CardOutput struct {
	Card       any          `json:"card" jsonschema:"the Agent Card as served (A2A AgentCard JSON; the Brand's words)"`
	Pact       CardFindings `json:"pact"`
	ThirdParty *ThirdParty  `json:"thirdParty" jsonschema:"which members hold the Brand's words"`
}

// CardFindings is what pact found about a card.
type CardFindings struct {
	Brand        string                `json:"brand" jsonschema:"the card URL (the same as cardUrl)"`
	BrandName    string                `json:"brandName" jsonschema:"the card's name (the same as name)"`
	CardURL      string                `json:"cardUrl"`
	InterfaceURL string                `json:"interfaceUrl"`
	Name         string                `json:"name"`
	Description  string                `json:"description"`
	Skills       []Skill               `json:"skills"`
	Provider     *profile.Registration `json:"provider" jsonschema:"the Provider registration (URL, audience) that serves this Brand; null when not registered"`
	Delegation   *Delegation           `json:"delegation" jsonschema:"the delegation the Brand offers; null when identity only"`
	Problems     []string              `json:"problems"`
	Signature    Signature             `json:"signature" jsonschema:"whether the card's signature was verified"`
	Pin          PinState              `json:"pin" jsonschema:"how the card compares with what the User accepted for this Brand (looking records no pin; a changed card is remembered as seen, as by every command)"`
	// NameWarnings are pact's warnings about the name: a word mixing
	// scripts, a look-alike of a Brand the User accepted elsewhere
	// (conversation.NameWarnings).
	NameWarnings []string      `json:"nameWarnings" jsonschema:"pact's warnings about the card's name: a word mixing scripts, or a look-alike of a Brand the User accepted on another origin"`
	Extended     *ExtendedCard `json:"extended,omitempty" jsonschema:"with extended: the Brand's extended card, what this User may use"`
}

// PinState is how a card compares with its Brand's pin, as `pact card`
// would judge it, without recording a pin (a changed card is remembered as
// seen: discovery.Judge).
type PinState struct {
	State       string     `json:"state" jsonschema:"new: no pin yet (the first send records it); same: matches what the User accepted; updated: a key rotation announced by the accepted key, or a Brand that started signing, accepted on the next send; changed: send_message and start_login refuse until the User runs pact card BRAND --trust"`
	Changes     []string   `json:"changes" jsonschema:"what differs, in plain words (changed only)"`
	Old         *store.Pin `json:"old" jsonschema:"what the User accepted; null when new"`
	New         store.Pin  `json:"new" jsonschema:"what accepting this card records"`
	Fingerprint string     `json:"fingerprint" jsonschema:"short fingerprint of the new values (pact card BRAND --trust --expect FINGERPRINT)"`
}

// pinState is how the card compares with its Brand's pin (agent.LookPin),
// times to the second.
func pinState(l agent.PinLook) PinState {
	st := PinState{State: l.State, Changes: l.Changes, Old: l.Old, New: l.New, Fingerprint: l.Fingerprint}
	st.New.PinnedAt = seconds(st.New.PinnedAt)
	if st.Old != nil {
		old := *st.Old
		old.PinnedAt = seconds(old.PinnedAt)
		st.Old = &old
	}
	return st
}

// Skill is one skill of the card.
type Skill struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Scopes      []string `json:"scopes" jsonschema:"the delegation scopes this skill needs (start_login takes them); empty: identity only"`
}

// Delegation mirrors discovery.Delegation: scope id → description.
type Delegation struct {
	Scopes                 map[string]string `json:"scopes"`
	DeviceAuthorizationURL string            `json:"deviceAuthorizationUrl"`
	TokenURL               string            `json:"tokenUrl"`
	OAuth2MetadataURL      string            `json:"oauth2MetadataUrl"`
}

func (s *Server) getAgentCard(ctx context.Context, _ *mcp.CallToolRequest, in CardInput) (*mcp.CallToolResult, CardOutput, error) {
	if strings.TrimSpace(in.Brand) == "" {
		return nil, CardOutput{}, errors.New("name the Brand: a domain, an origin or an Agent Card URL")
	}
	// The card, looked at without recording a pin (a changed card is
	// remembered as seen, as by every command).
	rep, err := s.cfg.Agent.Card(ctx, in.Brand, agent.CardPin{Mode: agent.CardLook})
	if err != nil {
		return nil, CardOutput{}, toolError(err)
	}
	card := rep.Card
	f := CardFindings{Brand: card.URL, BrandName: clean(card.Name()), CardURL: card.URL, InterfaceURL: card.InterfaceURL, Name: clean(card.Name()), Skills: []Skill{},
		Problems: cleanAll(card.Problems), Signature: cardSignature(card)}
	f.Signature.Problems = cleanAll(f.Signature.Problems)
	if card.Card != nil {
		f.Description = clean(card.Card.Description)
		f.Skills = skillsOf(card)
	}
	if d := card.Delegation; d != nil {
		f.Delegation = &Delegation{Scopes: map[string]string{}, DeviceAuthorizationURL: d.DeviceAuthorizationURL, TokenURL: d.TokenURL, OAuth2MetadataURL: d.OAuth2MetadataURL}
		for id, desc := range d.Scopes {
			f.Delegation.Scopes[clean(id)] = clean(desc)
		}
	}
	f.Provider = rep.Provider
	if rep.Pin != nil {
		f.Pin = pinState(*rep.Pin)
	}
	if f.Pin.State == "changed" {
		f.Problems = append(f.Problems, fmt.Sprintf("CARD_CHANGED: the card changed since the User accepted it (%s); send_message and start_login refuse it until the User checks and accepts it with: %s",
			strings.Join(f.Pin.Changes, ", "), clean(iostreams.CommandHint("pact", "card", in.Brand, "--trust", "--expect", f.Pin.Fingerprint))))
	}
	f.NameWarnings = nonNil(rep.NameWarnings)
	src := brandSource(card.URL)
	r := newReply().say("pact: the Agent Card at " + f.CardURL + " (interface " + f.InterfaceURL + "). What the card says of itself:")
	var own []string
	own = append(own, "name: "+f.Name)
	if f.Description != "" {
		own = append(own, "description: "+f.Description)
	}
	for _, sk := range f.Skills {
		own = append(own, "skill: "+sk.Name+": "+sk.Description+skillNeeds(sk))
	}
	if f.Delegation != nil {
		ids := make([]string, 0, len(f.Delegation.Scopes))
		for id := range f.Delegation.Scopes {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			own = append(own, "delegation scope (for start_login) "+id+": "+f.Delegation.Scopes[id])
		}
	}
	r.quote(src+", its card's name, description, skills and scope descriptions", own...)
	for _, w := range f.NameWarnings {
		r.say("pact WARNING: " + w + ".")
	}
	if f.Delegation == nil {
		r.say("pact: delegation not offered (identity only).")
	}
	if f.Provider != nil {
		r.say("pact: provider " + f.Provider.URL + " (registered in this profile).")
	} else {
		r.say("pact: provider not registered in this profile (the User runs: pact provider add " + conversation.SuggestProviderURL(card) + " --audience AUD).")
	}
	if in.Extended {
		f.Extended = s.extendedCard(ctx, in.Brand, card, f.Pin.State)
		sayExtended(r, src, f.Extended)
	}
	r.say("pact: signature: " + f.Signature.Label + ".")
	switch f.Pin.State {
	case "new":
		r.say("pact: pinned: not yet (the first message records its Provider, interface and key).")
	case "same":
		r.say("pact: pinned: matches what the User accepted.")
	case "updated":
		r.say("pact: pinned: the Brand's key changed, announced by the key the User accepted (accepted on the next message).")
	case "changed":
		r.say("pact: pinned: CHANGED since the User accepted it (" + strings.Join(f.Pin.Changes, ", ") + ").")
	}
	if len(f.Signature.Problems) > 0 || len(f.Problems) > 0 {
		r.say("pact: problems found (they may quote the card):")
		var probs []string
		if len(f.Signature.Problems) > 0 {
			probs = append(probs, "signature problems: "+strings.Join(f.Signature.Problems, "; "))
		}
		for _, p := range f.Problems {
			probs = append(probs, "problem: "+p)
		}
		r.quote("pact's findings, which may quote the card of "+src, probs...)
	}
	out := CardOutput{Card: rawJSON(card.Raw), Pact: f,
		ThirdParty: thirdParty(src, "/card", "/pact/brandName", "/pact/name", "/pact/description", "/pact/skills", "/pact/delegation/scopes", "/pact/problems", "/pact/signature/problems")}
	return r.result(out), out, nil
}
