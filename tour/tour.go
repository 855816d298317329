// Package tour is `pact demo`: the whole of PACT on this machine, step by
// step, against the built-in demo Provider. It uses the same packages as
// the CLI (profile, conversation, delegation, receipts) on a throw-away
// profile in a temporary folder, so the User's own state is never touched.
package tour

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/pact-cli/pact/a2aclient"
	"github.com/pact-cli/pact/agent"
	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/delegation"
	"github.com/pact-cli/pact/demoprovider"
	"github.com/pact-cli/pact/discovery"
	"github.com/pact-cli/pact/httpx"
	"github.com/pact-cli/pact/iostreams"
	"github.com/pact-cli/pact/jwks"
	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/receipts"
	"github.com/pact-cli/pact/secrets"
	"github.com/pact-cli/pact/store"
)

// Options configure Run.
type Options struct {
	IO *iostreams.IO
	// HTTP is the client pact uses (an httpx client, maybe tracing).
	HTTP *http.Client
	// Open opens a login link in the User's browser; nil = the built-in
	// scripted User logs in and approves by HTTP.
	Open func(url string) error
	// Emit, when set, receives one Step per step of the tour instead of
	// the human text on stdout (`pact --json demo`: JSON Lines, see
	// docs/json.md); an error it returns ends Run at once with that error.
	Emit func(Step) error
}

type tour struct {
	io   *iostreams.IO
	st   iostreams.Styles
	step int

	emit    func(Step) error
	mu      sync.Mutex // guards cur (the scripted User runs in a goroutine)
	cur     *Step      // the step being collected under Emit
	emitErr error      // the first error of emit
}

func newStep(n int, name, section string) *Step {
	return &Step{Step: n, Name: name, Section: section, Notes: []string{}, Messages: []StepMessage{}, Receipts: []StepReceipt{},
		Logins: []StepLogin{}, Commands: []string{}}
}

// flush emits the step being collected, if any; an error of emit is
// returned (and kept: nothing more is emitted).
func (t *tour) flush() error {
	if t.emit == nil || t.cur == nil || t.emitErr != nil {
		return t.emitErr
	}
	t.mu.Lock()
	st := *t.cur
	t.cur = nil
	t.mu.Unlock()
	t.emitErr = t.emit(st)
	return t.emitErr
}

// json runs f on the step being collected under Emit (nothing otherwise).
func (t *tour) json(f func(*Step)) {
	if t.emit == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cur != nil {
		f(t.cur)
	}
}

// note adds a short plain note to the step under Emit.
func (t *tour) note(s string) { t.json(func(st *Step) { st.Notes = append(st.Notes, s) }) }

// Run plays the tour. It returns when the tour is over or ctx ends.
func Run(ctx context.Context, o Options) error {
	t := &tour{io: o.IO, st: o.IO.OutStyles(), emit: o.Emit}
	if t.emit != nil {
		t.st = iostreams.Styles{} // plain text in JSON
	}
	hc := o.HTTP
	if hc == nil {
		hc = httpx.NewClient(httpx.Options{})
	}
	tmp, err := os.MkdirTemp("", "pact-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	t.title("PACT demo — a personal agent, a Brand's support agent, and you, all on 127.0.0.1")

	// 1. Identity: a key in a throw-away profile, its JWKS served over HTTP.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listening for the JWKS server: %w", err)
	}
	issuer := "http://" + ln.Addr().String()
	dirs := store.Dirs{Config: filepath.Join(tmp, "config"), Data: filepath.Join(tmp, "data")}
	sec, _ := secrets.Open("file", dirs.Data, 0)
	p := &profile.Profile{Name: "demo", Dirs: dirs, Secrets: sec}
	res, err := p.Init(issuer, "", "ES256", false)
	if err != nil {
		ln.Close()
		return err
	}
	keys := jwks.Handler(issuer, res.Config.JWKSURI, func() (jose.JSONWebKeySet, error) {
		c, err := p.Load()
		if err != nil {
			return jose.JSONWebKeySet{}, err
		}
		return c.JWKS(), nil
	})
	jwksSrv := &http.Server{Handler: keys, ReadHeaderTimeout: 5 * time.Second}
	go jwksSrv.Serve(ln)
	defer jwksSrv.Close()
	kid := res.Config.Active().KID
	if err := t.heading("Identity", "§3.1"); err != nil {
		return err
	}
	t.line("Made a signing key (ES256, kid %s) in a temporary profile; the private half never leaves it.", short(kid))
	t.line("Publishing the public key at %s", t.st.Accent.Render(res.Config.JWKSURI))
	t.note("A signing key made in a temporary profile; its public half is published at jwksUri.")
	t.json(func(st *Step) {
		st.Identity = &StepIdentity{Issuer: issuer, KID: kid, Alg: res.Config.Active().Alg, JWKSURI: res.Config.JWKSURI}
	})

	// 2. The Provider and the registration.
	srv, err := demoprovider.Start(ctx, demoprovider.Config{HTTPClient: hc, PollInterval: time.Second, RogueCard: true})
	if err != nil {
		return fmt.Errorf("starting the demo Provider: %w", err)
	}
	defer srv.Close()
	brand := srv.Brands()[0]
	if _, err := p.AddProvider(srv.URL(), srv.Audience()); err != nil {
		return err
	}
	if err := t.heading("Registration", "§3.1"); err != nil {
		return err
	}
	t.line("The demo Provider at %s knows this personal agent by its issuer %s", srv.URL(), issuer)
	t.line("and assigned it the audience %q. It finds the keys itself (OIDC discovery → jwks_uri).", srv.Audience())
	t.note("The Provider knows the personal agent by its issuer and finds its keys by OIDC discovery.")
	t.json(func(st *Step) {
		st.Registration = &StepRegistration{Provider: srv.URL(), Issuer: issuer, Audience: srv.Audience()}
	})

	// 3. Discovery.
	cardURL, err := discovery.CardURL(brand.SiteURL)
	if err != nil {
		return err
	}
	card, err := discovery.Fetch(ctx, hc, cardURL)
	if err != nil {
		return err
	}
	if err := t.heading("Discovery", "§2.1"); err != nil {
		return err
	}
	t.line("%s's domain %s serves its Agent Card:", brand.Name, brand.SiteURL)
	t.line("  %s", t.st.Faint.Render(card.FinalURL))
	t.line("Interface (HTTP+JSON 1.0): %s", card.InterfaceURL)
	if sig := card.Signature; sig.Verified {
		t.line("%s signed by %s: %s checked the card's signature with key %s from %s", t.st.Success.Render("✓"), sig.Signer, sig.KeyAlg(), short(sig.KID), sig.KeyURL)
		t.line("(the card in RFC 8785 canonical form, the key on the Brand's own domain, never elsewhere).")
	} else {
		t.line("%s the card is unsigned", t.st.Warning.Render("!"))
	}
	if card.Delegation != nil {
		t.line("Delegation offered, scopes: %s", strings.Join(card.Delegation.ScopeIDs(), ", "))
	}
	t.note("The Brand's domain serves its Agent Card, signed with a key on that domain.")
	t.json(func(st *Step) {
		sc := &StepCard{Brand: card.URL, BrandName: card.Name(), Site: brand.SiteURL, InterfaceURL: card.InterfaceURL, Scopes: []string{}}
		if sig := card.Signature; sig != nil && sig.Verified {
			sc.Signed, sc.KID, sc.Alg, sc.KeyURL = true, sig.KID, sig.KeyAlg(), sig.KeyURL
		}
		if card.Delegation != nil {
			sc.Scopes = append(sc.Scopes, card.Delegation.ScopeIDs()...)
		}
		st.Card = sc
	})

	// 4. A signed conversation.
	opts := conversation.NewOptions(p, hc)
	defer opts.Backend.Close() // before the temporary folder is removed (Windows)
	cfg, _ := p.Load()
	s, err := conversation.OpenCard(ctx, opts, cfg, card)
	if err != nil {
		return err
	}
	t.line("First contact: pact remembers the Brand's Provider, interface and signing key, as SSH remembers hosts.")
	t.note("First contact: pact pins the Brand's Provider, interface and signing key.")
	if err := t.heading("A signed conversation", "§3.2 §4"); err != nil {
		return err
	}
	if tok, err := s.Signer.Mint(s.Provider.Audience, s.Sub); err == nil {
		t.line("Each request carries a fresh PA JWT: %s", describeJWT(tok))
		t.json(func(st *Step) { st.Token = jwtClaims(tok) })
	}
	t.note("Each request carries a fresh PA JWT; the contextId is kept for the next message.")
	if err := t.say(ctx, s, "Hello!"); err != nil {
		return err
	}
	if err := t.say(ctx, s, "Where is my order A-88213?"); err != nil {
		return err
	}
	t.line("%s", t.st.Faint.Render("contextId "+s.ContextID()+" is kept: the next message continues this conversation."))
	t.json(func(st *Step) { st.ContextID = s.ContextID() })
	if s.Streams() {
		t.line("%s", t.st.Faint.Render(brand.Name+"'s card declares streaming: its replies arrived word by word (message:stream)."))
		t.note("A card that declares capabilities.streaming gets message:stream: the reply shows as it is written.")
	}
	if others := srv.Brands(); len(others) > 1 {
		// The other path: a Brand whose card does not declare streaming
		// answers message:send in one piece.
		if other, err := conversation.Open(ctx, opts, others[1].SiteURL); err == nil {
			t.line("%s", t.st.Faint.Render(others[1].Name+"'s card does not declare streaming: its reply comes in one piece (message:send)."))
			if err := t.say(ctx, other, "Hello!"); err != nil {
				return err
			}
		}
	}

	// 5. Delegation by device code.
	browser := &person{open: o.Open, t: t}
	browser.jar, _ = cookiejar.New(nil)
	if err := t.heading("Log in with the Brand", "§5.3"); err != nil {
		return err
	}
	t.line("To act on Jane's account, pact asks for orders:read. Jane logs in with %s, never with pact.", brand.Name)
	t.note("Jane logs in with the Brand and approves, never with pact; the delegation token checks out.")
	g, err := s.Login(ctx, []string{"orders:read"}, browser.visit(ctx, []string{"orders:read"}))
	browser.stopWaiting()
	if err != nil {
		return err
	}
	t.line("%s granted %s (grant %s); the delegation token's signature, aud and client_id check out.", t.st.Success.Render("✓"), strings.Join(g.Scopes, " "), g.GrantID)
	t.json(func(st *Step) { st.Grant = &StepGrant{GrantID: g.GrantID, Scopes: append([]string{}, g.Scopes...)} })

	// 6. Acting for the User, with a receipt.
	if err := t.heading("Acting for the User, with a signed receipt", "§5.5 §5.6"); err != nil {
		return err
	}
	t.note("A turn on Jane's behalf carries the delegation token; the reply comes with a signed receipt.")
	if err := t.say(ctx, s, "Show my orders"); err != nil {
		return err
	}
	t.json(func(st *Step) { st.ContextID = s.ContextID() })

	// 7. Step-up.
	if err := t.heading("Step-up: a turn that needs more permission", "§5.5"); err != nil {
		return err
	}
	t.note("The Provider asks for a scope the grant lacks; Jane approves it and the message is sent again.")
	// The turn is agent's, as for pact send; the tour answers its step-up
	// event by narrating it and playing Jane in the browser.
	const cancel = "Please cancel order A-10001"
	t.user(cancel)
	asked := false
	r, err := agent.Send(ctx, s, cancel, agent.Front{
		Waiting: t.waiting,
		NeedsScopes: func(ctx context.Context, su *agent.StepUp) (*delegation.Grant, error) {
			asked = true
			t.agent(su.Text)
			t.receipt(su.Result)
			t.line("The Provider answered with a task in TASK_STATE_AUTH_REQUIRED: missing %s.", strings.Join(su.IDs(), ", "))
			t.line("pact asks Jane again, for that scope only; her session with the Brand is live, so no password this time.")
			t.json(func(st *Step) { st.StepUp = &StepStepUp{MissingScopes: su.IDs()} })
			g, err := s.Login(ctx, su.IDs(), browser.visit(ctx, su.IDs()))
			browser.stopWaiting()
			if err != nil {
				return nil, err
			}
			t.json(func(st *Step) { st.Grant = &StepGrant{GrantID: g.GrantID, Scopes: append([]string{}, g.Scopes...)} })
			return g, nil
		},
		Resending: func() {
			t.line("Sending the message again in the same conversation, with a new messageId:")
			t.user(cancel)
		},
	})
	if err != nil {
		return err
	}
	if !asked {
		return errors.New("the demo Provider did not ask for a step-up")
	}
	t.agent(r.Text())
	t.receipt(r)
	t.json(func(st *Step) { st.ContextID = s.ContextID() })

	// 8. The receipts archive.
	if err := t.heading("Receipts, verified again from the archive", "§5.6"); err != nil {
		return err
	}
	checks, err := opts.Receipts.VerifyAll(ctx, true)
	if err != nil {
		return err
	}
	tally := agent.Count(checks)
	for _, c := range checks {
		t.json(func(st *Step) {
			st.Receipts = append(st.Receipts, StepReceipt{ID: c.ID, Verified: c.Verified, Problems: append([]string{}, c.Problems...)})
		})
	}
	t.note(fmt.Sprintf("%d of %d receipts verified again against the Provider's published key.", tally.Verified, tally.Total()))
	t.line("%s %d of %d receipts verified (`pact receipts verify`).", t.st.Success.Render("✓"), tally.Verified, tally.Total())
	if !tally.OK() {
		return fmt.Errorf("the receipts were not all verified again: %s", tally)
	}

	// 9. The Brand's card changes.
	if err := t.heading("If the Brand's card changes", "A2A §8.4"); err != nil {
		return err
	}
	t.line("The demo Brand now serves a card signed by another key, as if someone had replaced it.")
	again, err := discovery.Fetch(ctx, hc, cardURL)
	if err != nil {
		return err
	}
	_, err = conversation.OpenCard(ctx, opts, cfg, again)
	var changed *discovery.CardChangedError
	if !errors.As(err, &changed) {
		return fmt.Errorf("the changed card was not caught (%v)", err)
	}
	t.line("%s pact stopped before sending anything (%s):", t.st.Warning.Render("!"), strings.Join(changed.Changes, ", "))
	for _, l := range strings.Split(strings.TrimRight(changed.Table(), "\n"), "\n") {
		t.line("%s", l)
	}
	t.line("Only `pact card BRAND --trust --expect FINGERPRINT` (or y and Enter in the chat's panel) accepts such a change, and only the card that was shown.")
	t.note("The Brand now serves a card signed by another key: pact stops before sending anything. Only pact card BRAND --trust accepts the change.")
	t.json(func(st *Step) {
		st.CardChange = &StepCardChange{Changes: append([]string{}, changed.Changes...), Old: changed.Old, New: changed.New}
	})

	if t.emit != nil {
		if err := t.heading("Try it by hand", ""); err != nil {
			return err
		}
		t.note("pact demo serve runs the demo Provider alone and prints what to do next; with --rogue-card its Brands' cards change after the first look.")
		t.json(func(st *Step) { st.Commands = []string{"pact demo serve", "pact demo serve --rogue-card"} })
		return t.flush()
	}
	t.io.Printf("\n%s\n", t.st.Bold.Render("That is PACT. Try it by hand:"))
	t.io.Printf("  pact demo serve          %s\n", t.st.Faint.Render("# the demo Provider alone; it prints what to do next"))
	t.io.Printf("  pact demo serve --rogue-card  %s\n", t.st.Faint.Render("# its Brands' cards change after the first look"))
	return nil
}

func (t *tour) title(s string) {
	if t.emit == nil {
		t.io.Printf("%s\n", t.st.Bold.Render(s))
	}
}

// heading starts a step. Under Emit it emits the previous step first and
// returns the error of emit, which ends the tour.
func (t *tour) heading(name, section string) error {
	t.step++
	if t.emit != nil {
		if err := t.flush(); err != nil {
			return err
		}
		t.mu.Lock()
		t.cur = newStep(t.step, name, section)
		t.mu.Unlock()
		return nil
	}
	t.io.Printf("\n%s %s %s\n", t.st.Accent.Render(fmt.Sprintf("%d", t.step)), t.st.Bold.Render(name), t.st.Faint.Render(section))
	return nil
}

// line is a line of the human tour; under Emit the step's values and
// notes say it instead (see note and json).
func (t *tour) line(format string, a ...any) {
	if t.emit == nil {
		t.io.Printf("  "+format+"\n", a...)
	}
}

func (t *tour) user(text string) {
	if t.emit != nil {
		t.json(func(st *Step) { st.Messages = append(st.Messages, StepMessage{"user", text}) })
		return
	}
	t.io.Printf("  %s %s\n", t.st.User.Render("you ›"), text)
}

func (t *tour) agent(text string) {
	if t.emit != nil {
		t.json(func(st *Step) { st.Messages = append(st.Messages, StepMessage{"agent", text}) })
		return
	}
	t.io.Printf("  %s %s\n", t.st.Agent.Render("agent ›"), text)
}

// say sends text and prints the exchange, with the receipt when there is one.
func (t *tour) say(ctx context.Context, s *conversation.Session, text string) error {
	t.user(text)
	if t.emit == nil && s.Streams() {
		return t.sayStreaming(ctx, s, text)
	}
	r, err := t.send(ctx, s, text)
	if err != nil {
		return err
	}
	t.agent(r.Text())
	t.receipt(r)
	return nil
}

// sayStreaming is say for a Brand that streams: "agent ›", then the words
// as they arrive (message:stream), made safe.
func (t *tour) sayStreaming(ctx context.Context, s *conversation.Session, text string) error {
	shown := ""
	started := false
	stop := func() {}
	r, err := agent.Send(ctx, s, text, agent.Front{
		Waiting: func(s *conversation.Session) func() {
			stop = t.waiting(s)
			return stop
		},
		Stream: func(ev a2aclient.StreamEvent) {
			if ev.Text == "" || !strings.HasPrefix(ev.Text, shown) {
				return
			}
			if !started {
				stop()
				started = true
				t.io.Printf("  %s ", t.st.Agent.Render("agent ›"))
			}
			t.io.Printf("%s", iostreams.Sanitize(ev.Text[len(shown):]))
			shown = ev.Text
		},
	})
	if err != nil {
		if started {
			t.io.Printf("\n")
		}
		return err
	}
	switch {
	case !started:
		t.agent(r.Text())
	case shown != r.Text():
		t.io.Printf("\n")
		t.agent(r.Text())
	default:
		t.io.Printf("\n")
	}
	t.receipt(r)
	return nil
}

// receipt prints the reply's receipt and whether it verified (§5.6).
func (t *tour) receipt(r *conversation.Result) {
	if r.Receipt == nil {
		return
	}
	if t.emit != nil {
		t.json(func(st *Step) {
			st.Receipts = append(st.Receipts, StepReceipt{ID: r.Receipt.ID, Verified: r.Receipt.Verified, Problems: append([]string{}, r.Receipt.Problems...)})
		})
		return
	}
	mark := t.st.Success.Render("✓ verified")
	if !r.Receipt.Verified {
		mark = t.st.Error.Render("✗ " + strings.Join(r.Receipt.Problems, "; "))
	}
	t.line("%s receipt %s %s", t.st.Faint.Render("└"), receipts.ShortID(r.Receipt.ID), mark)
}

// send is one turn (agent.Send) with a spinner while the agent answers.
func (t *tour) send(ctx context.Context, s *conversation.Session, text string) (*conversation.Result, error) {
	return agent.Send(ctx, s, text, agent.Front{Waiting: t.waiting})
}

// waiting shows a spinner while the Brand's agent answers (agent.Front.Waiting).
func (t *tour) waiting(s *conversation.Session) func() {
	return t.io.StartSpinner("Waiting for " + s.Card.Name()).Stop
}
