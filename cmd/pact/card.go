package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pact-cli/pact/agent"
	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/discovery"
	"github.com/pact-cli/pact/iostreams"
	"github.com/pact-cli/pact/profile"
)

type cardFindings struct {
	// Brand and BrandName follow the naming rule of docs/json.md; CardURL
	// (the same URL as Brand) came first and stays.
	Brand        string                `json:"brand"`
	BrandName    string                `json:"brandName"`
	CardURL      string                `json:"cardUrl"`
	InterfaceURL string                `json:"interfaceUrl"`
	Provider     *profile.Registration `json:"provider"`
	Delegation   *discovery.Delegation `json:"delegation"`
	Problems     []string              `json:"problems"`
	Signature    *discovery.Signature  `json:"signature"`
	// NameWarnings: the name mixes scripts within a word, or looks like
	// a Brand the User accepted on another origin
	// (conversation.NameWarnings); [] when none.
	NameWarnings []string `json:"nameWarnings"`
	// Skills are the card's skills with the scopes each needs (A2A
	// AgentSkill.securityRequirements).
	Skills []discovery.SkillScopes `json:"skills"`
	// Streaming and ExtendedCard are the card's capabilities.streaming
	// and capabilities.extendedAgentCard.
	Streaming    bool `json:"streaming"`
	ExtendedCard bool `json:"extendedCard"`
}

func newCardCmd(a *app) *cobra.Command {
	var trust, extended bool
	var expect string
	cmd := &cobra.Command{
		Use:   "card BRAND [--trust [--expect FINGERPRINT]] [--extended]",
		Short: "Find a Brand's Agent Card and check that pact can use it",
		Long: `Fetch a Brand's Agent Card and check it: the HTTP+JSON 1.0 interface (chosen
by binding and version), the personal-agent JWT scheme, delegation scopes if
the Brand offers them, and which registered Provider it maps to.

BRAND is a domain (brand.example.com), an origin (https://brand.example.com,
http://127.0.0.1:8080) or a card URL ending in .json. A card URL has one
spelling, the key of its pin: the host is lower-cased, a default port, "//"
in the path and an empty "?" or "#" are dropped, /.WELL-KNOWN/ is written
/.well-known/; a card URL with a query, a fragment, dot segments (/./, /../,
also as %2e) or an encoded slash is refused.

A signed card is verified against the keys on the Brand's own domain and
shown as "signed by DOMAIN ✓"; a card whose signature fails is refused. On
first contact pact remembers the Brand's Provider, interface and signing key;
when a later card changes any of them, pact stops and shows what changed,
with a short fingerprint of the new values.

--trust accepts a changed card, and only the card you were shown: on a
terminal it shows old and new side by side and asks before accepting;
otherwise (or with --json) it needs --expect with the fingerprint the
CARD_CHANGED error gave, and refuses when the card now says anything else.

Each skill is shown with the scopes it needs. --extended also fetches the
Brand's extended card (when its card declares one): what this User may use,
asked with this personal agent's identity and, after ` + "`pact login`" + `, the
delegation; it is checked like the public card.`,
		Args:              exactArgs(1, "card needs a BRAND (a domain, an origin or a card URL)"),
		ValidArgsFunction: a.completeBrands,
		RunE: func(cmd *cobra.Command, args []string) error {
			if expect != "" && !trust {
				return usageError{fmt.Errorf("--expect goes with --trust: %s", iostreams.CommandHint("pact", "card", args[0], "--trust", "--expect", expect))}
			}
			cardURL, err := discovery.CardURL(args[0])
			if err != nil {
				return err
			}
			card, err := discovery.Fetch(cmd.Context(), a.httpClient(), cardURL)
			var bad *discovery.InvalidCardError
			if errors.As(err, &bad) && bad.Raw != nil && a.json {
				// A card that fails the checks is still shown, with why.
				if err := a.printJSON(struct {
					Card json.RawMessage `json:"card"`
					Pact cardFindings    `json:"pact"`
				}{bad.Raw, cardFindings{Brand: bad.URL, CardURL: bad.URL, Problems: []string{bad.Reason}, Signature: bad.Signature}}); err != nil {
					return err
				}
				a.io.Eprintf("%s %s\n", a.io.ErrStyles().Error.Render("error:"), safe(err.Error()))
				return silentError{code: exitFailure}
			}
			if err != nil {
				return err
			}
			pinNote, err := a.checkPin(cmd.Context(), args[0], card, trust, expect)
			if err != nil {
				return err
			}
			f := cardFindings{Brand: card.URL, BrandName: card.Name(), CardURL: card.URL, InterfaceURL: card.InterfaceURL, Delegation: card.Delegation, Problems: card.Problems, Signature: card.Signature,
				Skills: card.Skills(), Streaming: card.Streams(), ExtendedCard: card.HasExtendedCard()}
			if f.Problems == nil {
				f.Problems = []string{}
			}
			f.NameWarnings = []string{}
			if opts, err := a.sessionOptions(); err == nil {
				f.NameWarnings = append(f.NameWarnings, conversation.NameWarnings(cmd.Context(), opts, card.URL, card.Name())...)
			}
			if _, c, err := a.loadProfile(); err == nil {
				if reg, ok := c.Match(card.InterfaceURL); ok {
					f.Provider = reg
				}
			}
			var ext *discovery.Card
			delegated := false
			if extended {
				if ext, delegated, err = a.fetchExtended(cmd.Context(), args[0]); err != nil {
					return err
				}
			}
			if a.json {
				if ext != nil {
					return a.printJSON(extendedJSON(card.Raw, f, ext, delegated))
				}
				return a.printJSON(struct {
					Card json.RawMessage `json:"card"`
					Pact cardFindings    `json:"pact"`
				}{card.Raw, f})
			}
			st := a.io.OutStyles()
			row := func(k, v string) { a.io.Printf("%s %s\n", st.Faint.Render(fmt.Sprintf("%-14s", k)), v) }
			if len(f.NameWarnings) > 0 {
				// Quoted, with the card's host: the card's claim, never read as pact's
				// finding ("Example Bank — signed by bank.example ✓").
				a.io.Printf("%s %s\n", st.Bold.Render("“"+line(card.Name())+"”"), st.Faint.Render("(the name the card at "+line(cardHost(card.URL))+" gives itself)"))
			} else {
				a.io.Printf("%s\n", st.Bold.Render(line(card.Name())))
			}
			for _, w := range f.NameWarnings {
				a.io.Printf("%s %s\n", st.Warning.Render("! warning:"), w)
			}
			if card.Card.Description != "" {
				// In the gutter on a terminal, as a reply is: a description
				// line must not pass for one of pact's rows or warnings.
				a.printBrandText(safe(card.Card.Description))
			}
			a.io.Printf("\n")
			row("card", line(card.URL))
			if card.FinalURL != card.URL {
				row("served from", line(card.FinalURL))
			}
			row("interface", line(card.InterfaceURL)+"  (HTTP+JSON 1.0)")
			row("identity", "personal-agent JWT ("+line(card.PAScheme)+")")
			if card.Signature.Verified {
				row("signature", st.Success.Render(line(card.Signature.Label()))+st.Faint.Render("  key "+line(card.Signature.KID)+" from "+line(card.Signature.KeyURL)))
			} else {
				row("signature", st.Warning.Render(line(card.Signature.Label())))
			}
			for _, p := range card.Signature.Problems {
				row("", st.Warning.Render(line(p)))
			}
			row("pinned", pinNote)
			if f.Provider != nil {
				row("provider", line(f.Provider.URL)+"  audience "+line(f.Provider.Audience))
			} else {
				row("provider", st.Warning.Render("not registered")+" — "+line(iostreams.CommandHint("pact", "provider", "add", conversation.SuggestProviderURL(card))+" --audience AUD"))
			}
			if d := card.Delegation; d != nil {
				row("delegation", "device code (RFC 8628); scopes:")
				w := 0
				for _, id := range d.ScopeIDs() {
					w = max(w, len(id))
				}
				for _, id := range d.ScopeIDs() {
					a.io.Printf("%s %s  %s\n", strings.Repeat(" ", 16), st.Accent.Render(line(fmt.Sprintf("%-*s", w, id))), line(d.Scopes[id]))
				}
			} else {
				row("delegation", "not offered (identity only)")
			}
			if card.Streams() {
				row("replies", "streamed as they are written (message:stream)")
			}
			a.printSkills("skills", f.Skills)
			if ext != nil {
				who := "you may use"
				if !delegated {
					who += " (identity only; `pact login` may show more)"
				}
				a.io.Printf("\n")
				row("extended card", who)
				if ext.Signature.Verified {
					row("", st.Success.Render(line(ext.Signature.Label())))
				}
				a.printSkills("", ext.Skills())
				if len(ext.Skills()) == 0 {
					row("", "no skills")
				}
			} else if hint := extendedHint(card, args[0]); hint != "" {
				row("", st.Faint.Render(line(hint)))
			}
			for _, p := range card.Problems {
				row("problem", st.Warning.Render(line(p)))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&trust, "trust", false, "accept the card's Provider, interface and signing key as they are now (asks on a terminal)")
	cmd.Flags().BoolVar(&extended, "extended", false, "also fetch the Brand's extended card: what you may use there (needs the Provider registered)")
	cmd.Flags().StringVar(&expect, "expect", "", "with --trust: accept only a card with this fingerprint (from the CARD_CHANGED error)")
	return cmd
}

// checkPin compares the card with its Brand's pin (agent.PinNote), or with
// --trust records it (agent.Trust: on a terminal the change is shown side
// by side and the User asked), and returns a plain-words note for the
// table. A changed card is a *discovery.CardChangedError (CARD_CHANGED).
func (a *app) checkPin(ctx context.Context, arg string, card *discovery.Card, trust bool, expect string) (string, error) {
	pins := a.userStore()
	if !trust {
		return agent.PinNote(ctx, pins, arg, card, time.Now())
	}
	var confirm func(*discovery.CardChangedError, string) bool
	if !a.json && a.io.IsStdinTTY() && a.io.IsStderrTTY() {
		confirm = func(changed *discovery.CardChangedError, fp string) bool {
			st := a.io.ErrStyles()
			a.io.Eprintf("%s the Agent Card of %s changed (%s); nothing was sent.\n%s", st.Warning.Render("!"), line(arg),
				line(strings.Join(changed.Changes, ", ")), safe(changed.Table()))
			a.io.Eprintf("Accept this card (fingerprint %s)? [y/N] ", fp)
			answer, _ := bufio.NewReader(a.io.In).ReadString('\n')
			ans := strings.ToLower(strings.TrimSpace(answer))
			return ans == "y" || ans == "yes"
		}
	}
	t, err := agent.Trust(ctx, pins, arg, card, expect, time.Now(), confirm)
	if err != nil {
		return "", err
	}
	if t.Changed != nil && !a.json && expect != "" {
		a.io.Eprintf("%s accepted the card of %s (fingerprint %s); it was:\n%s", a.io.ErrStyles().Success.Render("✓"), line(arg), t.Fingerprint, safe(t.Changed.Table()))
	}
	return t.Note, nil
}

// cardHost is the host of a card URL (the URL itself when it has none).
func cardHost(cardURL string) string {
	if u, err := url.Parse(cardURL); err == nil && u.Host != "" {
		return u.Host
	}
	return cardURL
}
