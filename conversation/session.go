// Package conversation is one conversation between the personal agent and a
// Brand: it resolves the Agent Card, finds the Provider registration, mints
// a PA JWT for every request, sends message:send, and keeps one contextId
// per (profile, Brand) in the local store (PACT §4).
//
// A turn as the front-ends see it (`pact send`, `pact chat`, the TUI, the
// MCP server) is the agent package's: the front-ends open a conversation
// through agent.Agent (in process: a Session under agent.Local) and
// agent.Send runs the turn, one Session.SendStream per message, reporting
// its events (closed conversation, step-up) to the front-end.
package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pact-cli/pact/a2aclient"
	"github.com/pact-cli/pact/delegation"
	"github.com/pact-cli/pact/deviceflow"
	"github.com/pact-cli/pact/discovery"
	"github.com/pact-cli/pact/iostreams"
	"github.com/pact-cli/pact/jwks"
	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/receipts"
	"github.com/pact-cli/pact/signer"
	"github.com/pact-cli/pact/store"
	"github.com/pact-cli/pact/store/backend"
)

// ReceiptStatus is what happened to a reply's receipt (§5.6). ID is the
// receipt's full id (receipts.ShortID gives the form shown to people).
type ReceiptStatus struct {
	ID       string   `json:"id"`
	Verified bool     `json:"verified"`
	Problems []string `json:"problems,omitempty"`
	// Replayed is set when the Brand returned a receipt it had already
	// given for another turn: kept, but not verified for this one.
	Replayed bool `json:"replayed,omitempty"`
	// JWS is the receipt itself, given only when it may not have been
	// saved (archiving or saving the conversation failed), so that the
	// proof of what the Brand did is not lost.
	JWS string `json:"jws,omitempty"`
	// ArchiveError says why the receipt is not in the archive (set with
	// JWS; Send then returns a *SaveError): whether or not it verified,
	// pact keeps no copy of it.
	ArchiveError string `json:"archiveError,omitempty"`
}

// SaveError is returned with the Result by Send when the reply arrived
// (the Brand has acted) but saving it failed: the conversation, or the
// receipt in the archive (Receipt set; Result.Receipt.ArchiveError says
// why). The caller must still show the reply, and the receipt
// (Result.Receipt.JWS), not only the error, and end as on a failure.
type SaveError struct {
	Err     error
	Receipt bool // the receipt could not be archived (the turns were saved)
}

func (e *SaveError) Error() string {
	if e.Receipt {
		return "the reply arrived but pact could not archive its receipt (keep the receipt shown, it is the Brand's signed proof): " + e.Err.Error()
	}
	return "the reply arrived but saving the conversation failed: " + e.Err.Error()
}

func (e *SaveError) Unwrap() error { return e.Err }

// receiptJWS is the compact JWS of the reply's receipt ("" if none).
func receiptJWS(resp *a2aclient.Response) string {
	md := map[string]any(nil)
	switch {
	case resp.Message != nil:
		md = resp.Message.Metadata
	case resp.Task != nil:
		md = resp.Task.Metadata
	}
	rc, ok, err := receipts.FromMetadata(md)
	if !ok || err != nil {
		return ""
	}
	return rc.JWS
}

// Options are the parts a Session is built from; NewOptions wires them for
// a profile.
type Options struct {
	HTTP    *http.Client      // an httpx client, for the card and OAuth
	Client  *a2aclient.Client // for message:send
	Profile *profile.Profile
	// Backend is the database that holds the profile's state (its SQLite
	// file, or PostgreSQL: store/backend), and DB the User's state in it
	// (conversations, receipts, grants' metadata, card cache, pins); Store,
	// Grants, Receipts and Cards keep their state in DB.
	Backend store.Backend
	DB      store.Store
	Store   *Store
	// Grants holds delegation grants (§5); nil = identity only.
	Grants delegation.Store
	// Tokens is where the grants' access and refresh tokens live; nil is
	// the profile's secret store (the keyring). NewOptions seals them in
	// the database for a profile on PostgreSQL (TokenStore).
	Tokens delegation.Secrets
	// Keys fetches Brands' authorization-server keys (tokens, receipts).
	Keys *jwks.Cache
	// Receipts archives verified and rejected receipts; nil = not kept.
	Receipts *receipts.Archive
	// Cards keeps Agent Cards while they are fresh; nil = fetch every time.
	Cards *discovery.Cache
	// Pins are the Brands' pinned Provider, interface and signing key,
	// checked before anything is sent (discovery.CheckPin); nil = no
	// pinning (tests only).
	Pins discovery.Pins
	Now  func() time.Time
	// Clock drives device-flow polling; nil = real time.
	Clock deviceflow.Clock
}

// NewOptions wires the parts of a Session for profile p, with its state in
// the profile's database (backend.ForProfile: the profile's SQLite file
// {data}/profiles/NAME/pact.db unless p.Database names a PostgreSQL
// database; opened on first use).
func NewOptions(p *profile.Profile, hc *http.Client) Options {
	b, user := backend.ForProfile(p.Dirs, p.Name, p.Database)
	db := b.ForUser(user)
	keys := jwks.NewCache(hc)
	arch := receipts.NewArchive(db, keys)
	arch.CheckJWKSURI = ReceiptJWKSURIRule(p) // an archived jwks_uri as login checked it
	return Options{
		HTTP:     hc,
		Client:   &a2aclient.Client{HTTP: hc},
		Profile:  p,
		Backend:  b,
		DB:       db,
		Store:    NewStore(db),
		Grants:   delegation.DBStore{DB: db},
		Tokens:   TokenStore(p, db),
		Keys:     keys,
		Receipts: arch,
		Cards:    &discovery.Cache{DB: db},
		Pins:     db,
	}
}

// ErrNotRegistered means no registered Provider matches the card's
// interface URL; the message shows the `pact provider add` to run.
var ErrNotRegistered = errors.New("no registered Provider for this Brand")

// ClosedError reports that the Provider closed the conversation (§4.2,
// UNSUPPORTED_OPERATION). The Session has already forgotten it: the next
// Send starts a new conversation.
type ClosedError struct {
	ContextID string
	Err       error
}

func (e *ClosedError) Error() string {
	return "the Brand's agent ended this conversation; the next message starts a new one"
}

// Detail is the wire detail (contextId, reason) for --json and --debug.
func (e *ClosedError) Detail() string {
	return "contextId " + e.ContextID + ": " + detailOf(e.Err)
}
func (e *ClosedError) Unwrap() error { return e.Err }

// StaleContextError is an INVALID_PARAMS answer about the contextId of a
// message that continued a stored context (a2aclient.AboutContext): the
// Provider no longer knows the conversation (§4.2: an unknown context gets
// INVALID_PARAMS). Another INVALID_PARAMS (a body over the Provider's limit)
// is not this error. The answer is final: it is never waited out and
// retried. The remedy is a new conversation (`--new`, `/new` in the chat).
// It unwraps to the *a2aclient.Error.
type StaleContextError struct {
	ContextID string
	// Resent is set when the message may have been processed before
	// (it was a repeat of one sent before under the same messageId, or an
	// earlier attempt got no answer): the conversation is then not marked
	// unknown, and the User is told to check before sending it again.
	Resent bool
	Err    error
}

// Error says what happened and what to do, in plain words, for the
// command line (--new); chats say What and offer /new instead.
func (e *StaleContextError) Error() string {
	return e.What() + " start a new conversation with --new"
}

// What says what happened, without the remedy; it ends with "or" (resent)
// or ":" so that the caller's way to start a new conversation follows.
func (e *StaleContextError) What() string {
	if e.Resent {
		return "the Provider no longer knows this conversation (it may have restarted, or the conversation expired), and your message may have reached it before: check with the Brand whether it acted before you send it again. To go on:"
	}
	return "the Provider no longer knows this conversation (it may have restarted, or the conversation expired):"
}

// Detail is the wire detail (contextId, reason, the Provider's message).
func (e *StaleContextError) Detail() string {
	return "contextId " + e.ContextID + ": " + detailOf(e.Err)
}
func (e *StaleContextError) Unwrap() error { return e.Err }

// detailOf is err's wire detail when it has one, else its text.
func detailOf(err error) string {
	var d interface{ Detail() string }
	if errors.As(err, &d) {
		return d.Detail()
	}
	if err == nil {
		return ""
	}
	return err.Error()
}

// ContextMismatchError is a reply in another conversation than the one
// continued (§4.2). The reply is returned with it: the message was
// delivered (and its receipt, if any, archived), so a front-end shows the
// reply and never tells the User to send the message again (§4.3).
type ContextMismatchError struct {
	Want, Got string
}

func (e *ContextMismatchError) Error() string {
	return "the Provider answered your message in another conversation than the one continued: it was delivered and may have been acted on, " +
		"so do not send it again; its reply is not kept with this conversation. If the next messages go wrong too, start a new conversation"
}

// Detail names both contextIds.
func (e *ContextMismatchError) Detail() string {
	return "reply contextId " + e.Got + ", sent " + e.Want
}

// Session is an open conversation with one Brand.
type Session struct {
	Card     *discovery.Card
	Provider profile.Registration
	Signer   *signer.Signer
	Sub      string // pairwise sub for this Provider (§3.2)

	opts      Options
	contextID string
	issuer    string
	pa        *signer.Ahead // PA JWTs for this Provider, one minted ahead
	// bound is the only way to a PA JWT: it refuses endpoints outside the
	// Provider's registration (the endpoint-origin rule).
	bound *profile.BoundMinter
	// cardCached is set when Card came from Options.Cards.
	cardCached bool
	// unanswered holds the messageIds sent without a reply yet.
	unanswered map[string]bool
	mgr        *delegation.Manager // nil without Options.Grants
	// arg is the Brand as the User named it (Open's brand), for hints.
	arg string
}

// brandArg is the Brand as the User named it, else its card URL.
func (s *Session) brandArg() string {
	if s.arg != "" {
		return s.arg
	}
	return s.Card.URL
}

// Open resolves brand (a brand argument, see discovery.CardURL), fetches and
// checks its card, matches it to a registered Provider and loads the
// Brand's current conversation. Errors: discovery's, profile.ErrNotInitialised,
// ErrNotRegistered, secret-store failures.
func Open(ctx context.Context, opts Options, brand string) (*Session, error) {
	cfg, err := opts.Profile.Load()
	if err != nil {
		return nil, err
	}
	cardURL, err := discovery.CardURL(brand)
	if err != nil {
		return nil, err
	}
	var card *discovery.Card
	cached := false
	if opts.Cards != nil {
		card, cached, err = opts.Cards.Fetch(ctx, opts.HTTP, cardURL)
	} else {
		card, err = discovery.Fetch(ctx, opts.HTTP, cardURL)
	}
	if err != nil {
		return nil, err
	}
	s, err := OpenCard(ctx, opts, cfg, card)
	if err != nil {
		var changed *discovery.CardChangedError
		if errors.As(err, &changed) {
			changed.Brand = brand
		}
		if cached {
			opts.Cards.Forget(cardURL) // perhaps the card changed: fetch it next time
		}
		return nil, err
	}
	s.cardCached = cached
	s.arg = brand
	return s, nil
}

// OpenCard is Open for a card already fetched. Before anything else it
// checks the card against the Brand's pin (discovery.CheckPin): a card that
// names another Provider, interface or signing key than the one the User
// accepted gets a *discovery.CardChangedError, and no request reaches the
// Provider.
func OpenCard(ctx context.Context, opts Options, cfg *profile.Config, card *discovery.Card) (*Session, error) {
	if opts.Pins != nil {
		if _, err := discovery.CheckPin(ctx, opts.Pins, card, "", opts.now()); err != nil {
			return nil, err
		}
	}
	reg, ok := cfg.Match(card.InterfaceURL)
	if !ok {
		return nil, fmt.Errorf("%w: %s (interface %s) is served by a Provider this profile is not registered with.\n"+
			"Register once per Provider, with the audience it assigned you:\n  %s",
			ErrNotRegistered, iostreams.SanitizeLine(card.Name()), card.InterfaceURL, profile.CommandWords(opts.Profile.Name, "provider", "add", SuggestProviderURL(card), "--audience", "AUDIENCE"))
	}
	sig, err := opts.Profile.Signer(cfg)
	if err != nil {
		return nil, err
	}
	sub, err := opts.Profile.Sub(reg.Audience)
	if err != nil {
		return nil, err
	}
	s := &Session{Card: card, Provider: *reg, Signer: sig, Sub: sub, opts: opts, issuer: cfg.Issuer,
		pa: sig.Ahead(reg.Audience, sub), unanswered: map[string]bool{}}
	s.bound = cfg.Bind(*reg, s.pa)
	if opts.Grants != nil {
		s.mgr = &delegation.Manager{
			Store: opts.Grants, Secrets: opts.tokens(), Keys: opts.Keys,
			Flow: s.flow(), ClientID: cfg.Issuer, SecretPrefix: opts.Profile.Name + "/", Now: opts.Now,
			CheckEndpoint: s.bound.Check, // a stored grant's jwks_uri as login checked it
		}
	}
	cur, err := opts.Store.Current(card.URL)
	if err != nil {
		return nil, err
	}
	if cur != nil && cur.State == StateOpen && cur.InterfaceURL == card.InterfaceURL {
		s.contextID = cur.ContextID
	}
	return s, nil
}

// SuggestProviderURL is the Provider URL to register for a card: the
// card's provider.url when it is a prefix of the interface URL, else the
// interface URL's origin.
func SuggestProviderURL(card *discovery.Card) string {
	if card.Card != nil && card.Card.Provider != nil {
		p := strings.TrimRight(card.Card.Provider.URL, "/")
		if p != "" && (card.InterfaceURL == p || strings.HasPrefix(card.InterfaceURL, p+"/")) {
			return p
		}
	}
	if u, err := url.Parse(card.InterfaceURL); err == nil {
		return u.Scheme + "://" + u.Host
	}
	return card.InterfaceURL
}

// ContextID is the conversation being continued ("" = the next message
// starts one).
func (s *Session) ContextID() string { return s.contextID }

// StartNew makes the next message start a new conversation (`--new`).
func (s *Session) StartNew() error {
	s.contextID = ""
	return s.opts.Store.Forget(s.Card.URL)
}

// UseContext continues the given contextId (`--context`).
func (s *Session) UseContext(id string) { s.contextID = id }

// History returns the stored turns of the current conversation.
func (s *Session) History() ([]Turn, error) {
	if s.contextID == "" {
		return nil, nil
	}
	return s.opts.Store.Turns(s.Card.InterfaceURL, s.contextID)
}

// Result is one delivered message and its reply.
type Result struct {
	Brand        string          `json:"brand"`     // card URL
	BrandName    string          `json:"brandName"` // the card's name
	InterfaceURL string          `json:"interfaceUrl"`
	ContextID    string          `json:"contextId"`
	MessageID    string          `json:"messageId"` // the id sent
	Reply        json.RawMessage `json:"reply"`     // the A2A response body as received
	Receipt      *ReceiptStatus  `json:"receipt,omitempty"`
	// DeadGrant is set when the message went identity-only because the
	// Brand's delegation grant is dead (see DelegationStatus).
	DeadGrant *DelegationStatus `json:"deadGrant,omitempty"`
	// Streamed is set when the reply came by message:stream (Reply is
	// then the final message, as message:send would have answered).
	Streamed bool `json:"streamed,omitempty"`

	Message  *a2a.Message `json:"-"`
	Task     *a2a.Task    `json:"-"`
	Attempts int          `json:"-"`
}

// Text is the agent's reply text: the message's text parts, or the task's
// status message.
func (r *Result) Text() string {
	if r.Message != nil {
		return TextOf(r.Message)
	}
	if r.Task != nil && r.Task.Status.Message != nil {
		return TextOf(r.Task.Status.Message)
	}
	if r.Task != nil {
		// A streamed task that completed without a status message: its
		// reply is its artifacts.
		return a2aclient.ArtifactText(r.Task)
	}
	return ""
}

// Parts are the reply's parts: the message's, or the task's status
// message's; nil when there are none.
func (r *Result) Parts() []*a2a.Part {
	if r.Message != nil {
		return r.Message.Parts
	}
	if r.Task != nil && r.Task.Status.Message != nil {
		return r.Task.Status.Message.Parts
	}
	return nil
}

// StepUp is a §5.5 step-up request.
type StepUp struct {
	Text                    string
	MissingScopes           []string
	VerificationURIComplete string
}

// Check splits MissingScopes into the ids the card's delegation scheme
// declares (known) and the others (unknown). pact asks the User only for
// known scopes (PACT §5.2, as deviceflow.Authorize enforces); an unknown
// id is the reply's text, not a permission, and is never put in a login
// command or shown as one. With no delegation scheme every id is unknown.
func (su *StepUp) Check(d *discovery.Delegation) (known, unknown []string) {
	for _, s := range su.MissingScopes {
		if d != nil {
			if _, ok := d.Scopes[s]; ok {
				known = append(known, s)
				continue
			}
		}
		unknown = append(unknown, s)
	}
	return known, unknown
}

// StepUp returns the step-up request when the reply is a task in
// TASK_STATE_AUTH_REQUIRED, else nil.
func (r *Result) StepUp() *StepUp {
	if r.Task == nil || r.Task.Status.State != a2a.TaskStateAuthRequired {
		return nil
	}
	su := &StepUp{Text: r.Text()}
	if v, ok := r.Task.Metadata["pact.missingScopes"].([]any); ok {
		for _, x := range v {
			if s, ok := x.(string); ok {
				su.MissingScopes = append(su.MissingScopes, s)
			}
		}
	}
	su.VerificationURIComplete, _ = r.Task.Metadata["pact.verificationUriComplete"].(string)
	return su
}

// TextOf joins a message's text parts with blank lines.
func TextOf(m *a2a.Message) string {
	var parts []string
	for _, p := range m.Parts {
		if p != nil {
			if t := p.Text(); t != "" {
				parts = append(parts, t)
			}
		}
	}
	return strings.Join(parts, "\n\n")
}

// NewMessageID returns a fresh messageId (a UUID).
func NewMessageID() string { return a2a.NewMessageID() }

// Send delivers text as a new message (fresh messageId) in the current
// conversation, or starts one. See SendID.
func (s *Session) Send(ctx context.Context, text string) (*Result, error) {
	return s.SendID(ctx, text, NewMessageID())
}

// SendID delivers text with the given messageId. Reusing the messageId of a
// message whose reply was lost is safe: the Provider answers with the
// stored reply (§4.3). The conversation is stored after every reply.
// Errors: *a2aclient.Error, *ClosedError, delegation errors.
func (s *Session) SendID(ctx context.Context, text, messageID string) (*Result, error) {
	return s.SendStream(ctx, text, messageID, nil)
}

// SendStream is SendID that, when on is set and the card declares
// streaming (Session.Streams), sends by message:stream and calls on with
// each event as it arrives (see a2aclient.Client.Stream and call). The
// Result is the same as SendID's, from the stream's final message.
func (s *Session) SendStream(ctx context.Context, text, messageID string, on a2aclient.StreamFunc) (*Result, error) {
	if strings.TrimSpace(text) == "" {
		return nil, errors.New("the message is empty")
	}
	if err := s.noChangeSeen(ctx); err != nil {
		return nil, err
	}
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
	msg.ID = messageID
	msg.ContextID = s.contextID
	req := a2aclient.Request{
		InterfaceURL: s.Card.InterfaceURL,
		Message:      msg,
		PAToken:      s.bound.Token,
	}
	sentAt := s.now()
	resend := s.unanswered[messageID]
	first := !resend && !s.onRecord(messageID)
	s.unanswered[messageID] = true
	s.recordSend(Turn{MessageID: messageID, Text: text, At: sentAt}) // on record before it leaves
	// An error answer is final, including INVALID_PARAMS for a message sent
	// again before its first reply was stored (§4.3): it is reported at
	// once, never waited out and retried. Only network failures, 5xx and 429
	// are retried, inside the A2A client.
	resp, grant, err := s.deliver(ctx, req, on)
	s.endSend(ctx, messageID, first, err)
	dead := s.deadNote()
	if err == nil {
		delete(s.unanswered, messageID)
	}
	if err != nil {
		return nil, s.failed(ctx, messageID, first, err)
	}
	res := &Result{
		Brand: s.Card.URL, BrandName: s.Card.Name(), InterfaceURL: s.Card.InterfaceURL, MessageID: messageID,
		Reply: resp.Raw, Message: resp.Message, Task: resp.Task, Attempts: resp.Attempts,
		DeadGrant: dead, Streamed: resp.Streamed,
	}
	// The reply is kept once per message it answers (a Provider may reuse
	// a reply's messageId: store.Turn.Answers).
	agent := Turn{Role: "agent", At: s.now(), Text: res.Text(), parts: PartsOf(res.Parts()), answers: messageID}
	if resp.Message != nil {
		res.ContextID = resp.Message.ContextID
		agent.MessageID = resp.Message.ID
		res.Receipt = s.keepReceipt(ctx, resp.Message.Metadata, grant, messageID)
	} else {
		res.ContextID = resp.Task.ContextID
		agent.MessageID = string(resp.Task.ID)
		agent.TaskState = string(resp.Task.Status.State)
		res.Receipt = s.keepReceipt(ctx, resp.Task.Metadata, grant, messageID)
	}
	if res.Receipt != nil {
		agent.ReceiptID = res.Receipt.ID
		v := res.Receipt.Verified
		agent.ReceiptVerified = &v
	}
	if s.contextID != "" && res.ContextID != s.contextID {
		return res, &ContextMismatchError{Want: s.contextID, Got: res.ContextID}
	}
	s.contextID = res.ContextID
	user := Turn{MessageID: messageID, Role: "user", Text: text, At: sentAt}
	sum := Summary{Brand: s.Card.URL, BrandName: s.Card.Name(), InterfaceURL: s.Card.InterfaceURL,
		ContextID: res.ContextID, LastMessageAt: agent.At, State: StateOpen}
	if err := s.opts.Store.Append(sum, user, agent); err != nil {
		if res.Receipt != nil && res.Receipt.ID != "" && res.Receipt.JWS == "" {
			res.Receipt.JWS = receiptJWS(resp)
		}
		return res, &SaveError{Err: err}
	}
	if rc := res.Receipt; rc != nil && rc.ArchiveError != "" {
		return res, &SaveError{Err: errors.New(rc.ArchiveError), Receipt: true}
	}
	return res, nil
}

// failed is the error that ends a send of messageID that failed with err
// (first: no earlier attempt under messageID is on record). When the
// message may have been processed (outcomeUnknown) and the last answer would
// read as its fate (a closed conversation, INVALID_PARAMS, a reply pact
// could not use), it is an *OutcomeUnknownError: never a *ClosedError, which
// a front-end may answer by sending the text again as a new message (PACT
// §4.3: the Brand's agent must not act twice).
func (s *Session) failed(ctx context.Context, messageID string, first bool, err error) error {
	unknown := outcomeUnknown(first, ctx.Err() != nil, err)
	var ae *a2aclient.Error
	if !errors.As(err, &ae) || ctx.Err() != nil {
		return err
	}
	tell := &OutcomeUnknownError{MessageID: messageID, ContextID: s.contextID, Received: ae.Reached, Err: err}
	switch {
	case s.contextID != "" && ae.Reason == a2aclient.ReasonUnsupportedOperation:
		closed := s.contextID
		s.opts.Store.MarkClosed(s.Card.InterfaceURL, closed)
		s.contextID = ""
		if unknown {
			tell.Closed = true
			return tell
		}
		return &ClosedError{ContextID: closed, Err: err}
	case ae.Reason == a2aclient.ReasonNotFound && s.cardCached:
		// The interface URL of a kept card is gone: the card may have
		// changed. The next run fetches it again.
		s.opts.Cards.Forget(s.Card.URL)
	case s.contextID != "" && a2aclient.AboutContext(err):
		// INVALID_PARAMS on the contextId (§4.2): the Provider does not know
		// the conversation. Only a first send refused proves it (a message
		// sent again may have been processed before the Provider forgot).
		if !unknown {
			s.opts.Store.MarkUnknown(s.Card.InterfaceURL, s.contextID)
		}
		return &StaleContextError{ContextID: s.contextID, Resent: unknown, Err: err}
	case unknown && (ae.Reason == a2aclient.ReasonInvalidParams || ae.Reached):
		// No answer for a message the Provider may hold (§4.3), or a reply
		// that came but could not be used.
		return tell
	}
	return err
}

// deliver sends req once through the A2A client (its own retries
// included), with the delegation token when the User has delegated to this
// Brand (refreshed once on invalid_token, §5.5). It returns the grant used.
func (s *Session) deliver(ctx context.Context, req a2aclient.Request, on a2aclient.StreamFunc) (*a2aclient.Response, *delegation.Grant, error) {
	if s.mgr == nil {
		resp, err := s.call(ctx, req, on)
		return resp, nil, err
	}
	if g, err := s.mgr.Grant(s.Card.InterfaceURL); errors.Is(err, delegation.ErrNoGrant) || (err == nil && g.Dead) {
		// No grant, or a dead one: identity only (a dead grant's token
		// would only be refused again).
		resp, err := s.call(ctx, req, on)
		return resp, nil, err
	} else if err != nil {
		return nil, nil, err
	}
	// A turn under the User's delegation acts on their account, and its
	// receipt is their proof of it (§5.6): it goes only when the archive
	// can keep that receipt.
	if err := s.proofCanBeKept(ctx); err != nil {
		return nil, nil, err
	}
	var (
		resp  *a2aclient.Response
		grant *delegation.Grant
	)
	err := s.mgr.Send(ctx, s.Card.InterfaceURL, func(token string, g *delegation.Grant) error {
		grant = g
		req.Delegation = func(context.Context) (string, error) { return token, nil }
		var err error
		resp, err = s.call(ctx, req, on)
		if a2aclient.IsReason(err, a2aclient.ReasonInvalidToken) {
			return fmt.Errorf("%w: %w", delegation.ErrInvalidToken, err)
		}
		return err
	})
	var lr *delegation.LoginRequiredError
	if errors.As(err, &lr) {
		// Named as the User knows the Brand, not by its card URL.
		lr.BrandName, lr.Arg = s.Card.Name(), s.arg
	}
	return resp, grant, err
}

// noChangeSeen stops a session opened earlier (the chat) before it sends,
// once any command has seen a changed card of its Brand (one card state,
// discovery.Judge): a *discovery.CardChangedError, nothing sent.
func (s *Session) noChangeSeen(ctx context.Context) error {
	mem, ok := s.opts.Pins.(discovery.ChangeMemory)
	if !ok {
		return nil
	}
	next, changes, seen, err := mem.CardChange(ctx, s.Card.URL)
	if err != nil || !seen {
		return nil
	}
	old, _, _ := discovery.LookupPin(ctx, s.opts.Pins, s.Card.URL)
	return &discovery.CardChangedError{Brand: s.brandArg(), Old: old, New: next, Changes: changes}
}

// ErrProofNotKept is matched by the refusal of a delegated send whose
// receipt could not be archived (a read-only PACT_HOME): nothing was sent.
var ErrProofNotKept = errors.New("the receipt of this turn could not be kept")

// proofCanBeKept checks, before a delegated send, that the receipt archive
// can take the receipt the reply will carry.
func (s *Session) proofCanBeKept(ctx context.Context) error {
	if s.opts.DB == nil || s.opts.Receipts == nil {
		return nil
	}
	if err := s.opts.DB.CanWrite(ctx); err != nil {
		return fmt.Errorf("%w, so nothing was sent: a message under your delegation acts on your account, and its receipt is your proof of what the Brand did: %w", ErrProofNotKept, err)
	}
	return nil
}

func (s *Session) now() time.Time { return s.opts.now() }

func (o Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now().UTC()
}
