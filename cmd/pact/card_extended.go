package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pact-cli/pact/agent"
	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/discovery"
	"github.com/pact-cli/pact/iostreams"
)

// extendedFindings is `pact card --extended --json`'s "pact.extended"
// (docs/json.md): the skills of the extended card (what this User may
// use), its signature check, and whether it was fetched with a delegation
// token.
type extendedFindings struct {
	Skills    []discovery.SkillScopes `json:"skills"`
	Signature *discovery.Signature    `json:"signature"`
	Delegated bool                    `json:"delegated"`
}

// fetchExtended is `pact card --extended`: it opens a session with the
// Brand (the profile must be registered with its Provider) and fetches the
// extended card (conversation.Session.ExtendedCard).
func (a *app) fetchExtended(ctx context.Context, brand string) (*discovery.Card, bool, error) {
	s, err := a.openSession(ctx, brand, sessionFlags{})
	if err != nil {
		return nil, false, err
	}
	sp := a.spinner("Fetching the extended Agent Card")
	ext, err := agent.ExtendedCard(ctx, s)
	sp.Stop()
	if err != nil {
		return nil, false, a.explainRefusal(ctx, s.Provider, err)
	}
	return ext.Card, ext.Delegated, nil
}

// printSkills prints the skills rows: per skill its name and the scopes
// it needs ("identity only" when none), aligned.
func (a *app) printSkills(label string, skills []discovery.SkillScopes) {
	st := a.io.OutStyles()
	w := 0
	for _, sk := range skills {
		w = max(w, len([]rune(line(sk.Name))))
	}
	for i, sk := range skills {
		k := ""
		if i == 0 {
			k = label
		}
		need := st.Faint.Render("identity only")
		if len(sk.Scopes) > 0 {
			q := make([]string, len(sk.Scopes))
			for j, s := range sk.Scopes {
				q[j] = st.Accent.Render(line(s))
			}
			need = "needs " + strings.Join(q, ", ")
		}
		name := line(sk.Name)
		a.io.Printf("%s %s  %s\n", st.Faint.Render(fmt.Sprintf("%-14s", k)), name+strings.Repeat(" ", w-len([]rune(name))), need)
	}
}

// extendedJSON is the --json document of `pact card --extended`.
func extendedJSON(public json.RawMessage, f cardFindings, ext *discovery.Card, delegated bool) any {
	type pact struct {
		cardFindings
		Extended extendedFindings `json:"extended"`
	}
	return struct {
		Card         json.RawMessage `json:"card"`
		ExtendedCard json.RawMessage `json:"extendedCard"`
		Pact         pact            `json:"pact"`
	}{public, ext.Raw, pact{f, extendedFindings{Skills: ext.Skills(), Signature: ext.Signature, Delegated: delegated}}}
}

// extendedHint says how to see more of the Brand: the extended card when
// it offers one, for the card table.
func extendedHint(card *discovery.Card, brand string) string {
	if !card.HasExtendedCard() {
		return ""
	}
	return "what you may use: " + iostreams.CommandHint("pact", "card", brand, "--extended")
}

// offerSkillScopes is the line chat's `/login` without scopes, after the
// card's scopes: which skill needs which, and the /login that asks for
// the scopes of the card's skills.
func (a *app) offerSkillScopes(s *conversation.Session) {
	offer := s.Card.SkillScopeIDs()
	if len(offer) == 0 {
		return
	}
	st := a.io.ErrStyles()
	a.io.Eprintf("Its skills need:\n")
	for _, sk := range s.Card.Skills() {
		if len(sk.Scopes) > 0 {
			a.io.Eprintf("  %s  %s\n", line(sk.Name), st.Accent.Render(line(strings.Join(sk.Scopes, ", "))))
		}
	}
	a.io.Eprintf("To ask for all of them: %s\n", line("/login "+strings.Join(offer, " ")))
}
