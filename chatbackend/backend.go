// Package chatbackend adapts an agent.Conversation to the full-screen chat: it implements
// tui.Backend, so that `pact chat BRAND` on a terminal talks to the Brand through the same
// agent interface as `pact send` and line-mode `pact chat` (PACT §4, §5), in process or
// through a `pact serve`. A turn is the agent package's (agent.SendID); this package
// answers its events on the screen and turns replies into the chat's turns (reply.go) and
// the card into its words (card.go).
//
// The tui package knows nothing about A2A, keys or stores; this package is the only place
// where the two meet. Errors reach the screen in the same words the CLI prints.
package chatbackend

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/pact-cli/pact/a2aclient"
	"github.com/pact-cli/pact/agent"
	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/delegation"
	"github.com/pact-cli/pact/iostreams"
	"github.com/pact-cli/pact/receipts"
	"github.com/pact-cli/pact/tui"
)

// Options tune a Backend. The zero value is usable: no browser, receipt claims from the
// reply only.
type Options struct {
	// Receipts is where the receipt panel reads the archived receipt's claims (§5.6), for
	// replies and for stored turns: the agent (agent.Agent.Receipt); nil means claims
	// come from the reply's metadata only and stored turns show the mark without claims.
	Receipts Receipts
	// Open starts the browser on a device-flow login link (§5.3) without waiting for it;
	// exited (nil when there is nothing to wait for) receives, once, how the browser
	// program ended: nil, or why it failed. nil Open (`--no-browser`) means the link is
	// only shown.
	Open func(url string) (exited <-chan error, err error)
}

// Receipts finds an archived receipt by id: agent.Agent does.
type Receipts interface {
	Receipt(ctx context.Context, id string) (*agent.ReceiptEntry, error)
}

// Backend is a tui.Backend over one agent.Conversation. Build it with New.
//
// Send, Resend and NewConversation are serialised on the Conversation, so a Send
// abandoned with Esc finishes before the next one starts; Header, Card and Scopes never
// wait for the Provider or for a running Send.
type Backend struct {
	c    agent.Conversation
	f    agent.Facts // as of the chat's start
	opts Options

	warnOnce sync.Once
	warnings []string // the card name's warnings, looked up once

	op sync.Mutex // held while the conversation's contextId may change (Send, NewConversation)

	mu     sync.Mutex
	unsent *outgoing     // the last message whose reply never arrived (§4.3 retry)
	last   string        // the text of the last message answered (what Resend sends again)
	noted  bool          // the "sent without your delegation" notice was shown
	asked  *agent.StepUp // the step-up of the last reply, until a reply answers it
}

// outgoing is a message as sent: its text and messageId.
type outgoing struct{ text, id string }

var _ tui.Backend = (*Backend)(nil)

// New returns the chat backend for c.
func New(c agent.Conversation, o Options) *Backend {
	return &Backend{c: c, f: c.Facts(), opts: o}
}

// Header returns the Brand (card name, host of the card URL), the Provider (card
// provider.organization and the registered Provider URL), the active kid, the pairwise
// sub and the stored delegation grant's scopes and expiry (§3.2, §5.4). It asks nothing
// of the Brand.
func (b *Backend) Header() tui.Header {
	f := b.f
	h := tui.Header{BrandName: f.Card.Name(), BrandDomain: hostOf(f.Card.URL), Sub: f.Sub, Signature: f.Card.Signature.Label(), KID: f.KID}
	b.warnOnce.Do(func() { b.warnings = b.c.NameWarnings(context.Background()) })
	h.NameWarnings = b.warnings
	h.Provider = f.Provider.URL
	if c := f.Card.Card; c != nil && c.Provider != nil && strings.TrimSpace(c.Provider.Org) != "" {
		h.Provider = strings.TrimSpace(c.Provider.Org) + " (" + f.Provider.URL + ")"
	}
	if g, err := b.c.Grant(context.Background()); err == nil {
		if g.Dead {
			// A dead grant (delegation.Grant.MarkDead): messages go identity-only.
			h.DelegationLost = true
		} else {
			h.Scopes = append([]string(nil), g.Scopes...)
			h.ExpiresAt = g.ExpiresAt
		}
	}
	return h
}

// hostOf is the Brand's domain as every table names it (agent.Host), else raw.
func hostOf(raw string) string {
	if h := agent.Host(raw); h != "" {
		return h
	}
	return raw
}

// History returns the stored turns of the current conversation (conversation.Store),
// oldest first, with their receipt marks. A store that cannot be read gives one error turn.
func (b *Backend) History() []tui.Turn {
	ctx := context.Background()
	b.op.Lock()
	turns, err := b.c.History(ctx)
	b.op.Unlock()
	if err != nil {
		return []tui.Turn{{Role: tui.RoleError, Text: "reading the stored conversation: " + err.Error(), At: time.Now()}}
	}
	un, err := b.c.Unanswered(ctx)
	if err != nil {
		return []tui.Turn{{Role: tui.RoleError, Text: "reading the unanswered messages: " + err.Error(), At: time.Now()}}
	}
	turns = append(turns, un...)
	out := make([]tui.Turn, 0, len(turns))
	for _, t := range turns {
		tt := tui.Turn{ID: t.MessageID, Role: tui.RoleAgent, Text: t.Text, At: t.At.Local(), Parts: b.storedParts(t.Parts)}
		if t.Role == "user" {
			tt.Role = tui.RoleUser
		}
		if t.State == conversation.TurnUnanswered {
			// Sent before the chat was left, never answered: Send of the same text
			// asks again under the same messageId (§4.3,
			// conversation.Session.MessageIDFor).
			tt.State = tui.Unanswered
		}
		if t.ReceiptID != "" {
			m := &tui.ReceiptMark{ID: t.ReceiptID, Verified: t.ReceiptVerified != nil && *t.ReceiptVerified}
			b.fillClaims(m, nil)
			b.archiveVerdict(ctx, m)
			tt.Receipt = m
		}
		out = append(out, tt)
	}
	return out
}

// ClosedError is what Send returns when the Provider closed the conversation
// (UNSUPPORTED_OPERATION on a known contextId, §4.2). It reads as the CLI's message and
// matches tui.ErrContextClosed and *conversation.ClosedError with errors.Is and errors.As.
type ClosedError struct{ Err *conversation.ClosedError }

func (e *ClosedError) Error() string   { return e.Err.Error() }
func (e *ClosedError) Unwrap() []error { return []error{tui.ErrContextClosed, e.Err} }

// UnknownContextError is what Send returns when the Provider no longer knows the
// conversation (INVALID_PARAMS on a stored contextId, §4.2: it restarted or the
// conversation expired). It matches tui.ErrContextUnknown and
// *conversation.StaleContextError.
type UnknownContextError struct {
	Err *conversation.StaleContextError
}

func (e *UnknownContextError) Error() string {
	return "the Provider no longer knows this conversation; /new starts a new one"
}
func (e *UnknownContextError) Unwrap() []error { return []error{tui.ErrContextUnknown, e.Err} }

// DelegationLostError is what Send returns when the delegation could not be used or
// renewed (*delegation.LoginRequiredError): the grant is marked dead and the following
// messages go with identity only. It matches tui.ErrDelegationLost and *delegation.LoginRequiredError.
type DelegationLostError struct {
	Err *delegation.LoginRequiredError
}

func (e *DelegationLostError) Error() string   { return Plain(e.Err) + " Continuing with identity only." }
func (e *DelegationLostError) Unwrap() []error { return []error{tui.ErrDelegationLost, e.Err} }

// UnansweredError is what Send returns when the message may have reached the Brand and is
// on record as sent and unanswered (agent.Conversation.SentUnanswered). It matches
// tui.ErrSentUnanswered; Unwrap also gives the original for errors.Is and errors.As.
type UnansweredError struct{ Err error }

func (e *UnansweredError) Error() string {
	return Plain(e.Err) + " It may have reached the Brand: it stays on record, unanswered."
}
func (e *UnansweredError) Unwrap() []error { return []error{tui.ErrSentUnanswered, e.Err} }

// OutcomeUnknownError is what Send returns when the message may have been delivered but
// no answer to it could be used (*conversation.OutcomeUnknownError, §4.3). It matches
// tui.ErrSentUnanswered: it stays on record, unanswered, and Enter on it asks again under
// its messageId; when the conversation was closed meanwhile (Closed) it matches
// tui.ErrContextClosed too, and is not sent again at all: its answer can no longer be
// fetched, and sending it in a new conversation could make the Brand's agent act twice.
type OutcomeUnknownError struct {
	Err *conversation.OutcomeUnknownError
}

func (e *OutcomeUnknownError) Error() string {
	if e.Err.Closed {
		return e.Err.What()
	}
	return e.Err.What() + " " + e.Err.Remedy("press Enter on it, at the head of the queue")
}

func (e *OutcomeUnknownError) Unwrap() []error {
	if e.Err.Closed {
		return []error{tui.ErrSentUnanswered, tui.ErrContextClosed, e.Err}
	}
	return []error{tui.ErrSentUnanswered, e.Err}
}

// PlainError carries an error in plain words (Plain) for the chat; Unwrap gives the
// original for errors.Is and errors.As.
type PlainError struct{ Err error }

func (e *PlainError) Error() string { return Plain(e.Err) }
func (e *PlainError) Unwrap() error { return e.Err }

// Send sends text in the current conversation (§4.1) and returns the agent's reply turn,
// or Reply.StepUp for a TASK_STATE_AUTH_REQUIRED task (§5.5) with the card's description of
// every missing scope. When the previous Send of the same text got no reply (Esc, a
// network failure), its messageId is used again so the Provider answers it once (§4.3).
// Errors: *ClosedError (wraps tui.ErrContextClosed), and the Session's errors unchanged.
func (b *Backend) Send(ctx context.Context, text string) (tui.Reply, error) {
	return b.SendStreaming(ctx, text, nil)
}

// Resend sends the text of the last answered message again after a step-up was approved:
// same context, new messageId (§5.5).
func (b *Backend) Resend(ctx context.Context) (tui.Reply, error) {
	return b.ResendStreaming(ctx, nil)
}

// deliver sends text under id ("": the one agent.Conversation.MessageIDFor picks);
// with on set, by message:stream when the Brand streams (agent.Front.Stream).
func (b *Backend) deliver(ctx context.Context, text, id string, on a2aclient.StreamFunc) (tui.Reply, error) {
	b.op.Lock()
	var res *conversation.Result
	var err error
	if id == "" {
		id, _, err = b.c.MessageIDFor(ctx, text)
	}
	if err == nil {
		// The turn is agent's; the chat answers its events on the screen: a
		// closed conversation is asked about (ClosedError), a step-up is the
		// login panel, opened by the chat itself (Reply.StepUp); a reply that
		// streams is shown as it grows (on).
		res, err = agent.SendID(ctx, b.c, text, id, agent.Front{Stream: on})
	}
	b.op.Unlock()

	b.mu.Lock()
	defer b.mu.Unlock()
	var unknown *conversation.OutcomeUnknownError
	if errors.As(err, &unknown) {
		// It may have been delivered: asked about again only under its messageId,
		// and not at all once its conversation is closed.
		b.unsent = &outgoing{text: text, id: id}
		if unknown.Closed {
			b.unsent = nil
		}
		return tui.Reply{}, &OutcomeUnknownError{Err: unknown}
	}
	var closed *conversation.ClosedError
	if errors.As(err, &closed) {
		b.unsent = nil // a new conversation gets a new message
		return tui.Reply{}, &ClosedError{Err: closed}
	}
	if res == nil {
		if err == nil {
			err = errors.New("no reply")
		}
		if id != "" && b.c.SentUnanswered(ctx, id) {
			// The outcome is unknown (conversation.Session.endSend): on record as sent
			// and unanswered; only this messageId asks for its answer (§4.3).
			b.unsent = &outgoing{text: text, id: id}
			return tui.Reply{}, &UnansweredError{Err: err}
		}
		var stale *conversation.StaleContextError
		if errors.As(err, &stale) {
			// An error answer is final: the Provider did not take the message.
			b.unsent = nil
			return tui.Reply{}, &UnknownContextError{Err: stale}
		}
		var login *delegation.LoginRequiredError
		if errors.As(err, &login) {
			// The delegation cannot be used or renewed: the grant is now marked dead and
			// the next message goes out with identity only (conversation.Session).
			b.unsent = nil
			b.noted = true // this error is the notice
			return tui.Reply{}, &DelegationLostError{Err: login}
		}
		// The message may have reached the Brand: a retry of the same text reuses its id.
		b.unsent = &outgoing{text: text, id: id}
		return tui.Reply{}, &PlainError{Err: err}
	}
	b.unsent = nil
	b.last = text
	b.asked = nil
	var r tui.Reply
	if res.DeadGrant != nil && !b.noted {
		b.noted = true
		r.Turns = append(r.Turns, tui.Turn{Role: tui.RoleSystem, At: time.Now(),
			Text: "Sent without your delegation: it stopped working. /login approves it again."})
	}
	var pending *agent.StepUpPending
	if errors.As(err, &pending) {
		err = nil
		if su := pending.StepUp; su.Askable() {
			b.asked = su
			r.StepUp = &tui.StepUp{Text: su.Text, MissingScopes: scopes(su.Scopes)}
		} else {
			// Nothing the User could approve: the Brand named no scope, or
			// one its card does not list. Its words, then pact's, no panel.
			r.Turns = append(r.Turns, b.agentTurn(res), tui.Turn{Role: tui.RoleError, At: time.Now(),
				Text: su.Words(agent.ChatLogin, agent.ChatNoScopes)})
		}
	} else {
		r.Turns = append(r.Turns, b.agentTurn(res))
	}
	if err != nil {
		// The reply arrived but something after it failed (saving it, a context
		// mismatch): show both.
		msg := Plain(err)
		if rc := res.Receipt; rc != nil && rc.JWS != "" {
			// Perhaps the only copy of the Brand's proof: the User keeps it.
			msg += "\nThe receipt " + receipts.ShortID(rc.ID) + ", the Brand's signed proof of what it did (keep it):\n" + iostreams.SanitizeLine(rc.JWS)
		}
		r.Turns = append(r.Turns, tui.Turn{Role: tui.RoleError, Text: msg, At: time.Now()})
	}
	return r, nil
}

// scopes are agent's scopes for the chat.
func scopes(in []agent.Scope) []tui.Scope {
	out := make([]tui.Scope, len(in))
	for i, sc := range in {
		out[i] = tui.Scope{ID: sc.ID, Description: sc.Description}
	}
	return out
}

var _ tui.Abandoner = (*Backend)(nil)

// Abandon records that the User replaced (edited) or removed t, a message sent and left
// unanswered: it may have been delivered, so it is not marked failed, but it is no longer
// offered when the chat opens, nor asked about again when the same text is sent
// (agent.Conversation.Abandon). A turn of History carries its messageId; one sent in
// this chat is found by its text (the last unanswered message, or one on record).
func (b *Backend) Abandon(t tui.Turn, replaced bool) error {
	why := conversation.AbandonRemoved
	if replaced {
		why = conversation.AbandonReplaced
	}
	id := t.ID
	b.mu.Lock()
	if id == "" && b.unsent != nil && b.unsent.text == t.Text {
		id = b.unsent.id
	}
	if b.unsent != nil && b.unsent.id == id {
		b.unsent = nil
	}
	b.mu.Unlock()
	ctx := context.Background()
	b.op.Lock()
	defer b.op.Unlock()
	if id == "" {
		var earlier *conversation.Turn
		var err error
		if id, earlier, err = b.c.MessageIDFor(ctx, t.Text); err != nil || earlier == nil {
			return err // not on record as unanswered: nothing to give up
		}
	}
	return b.c.Abandon(ctx, id, why)
}

// NewConversation forgets the current contextId (`--new`): the next Send starts a new
// conversation (§4.2). The stored conversations are kept.
func (b *Backend) NewConversation() error {
	b.op.Lock()
	err := b.c.StartNew(context.Background())
	b.op.Unlock()
	b.mu.Lock()
	b.unsent, b.asked = nil, nil
	b.mu.Unlock()
	return err
}

// Login runs the device flow for scopes (§5.3): once the Provider has answered with a
// user_code, the browser is started on the link with Options.Open (when set, never
// waited for) and shown is called with the code, the link and its expiry, never the
// device_code; a browser that fails later is reported through DeviceCode.BrowserExit.
// It returns the scopes the grant now holds, which may be fewer than asked. Errors are
// agent.Login's.
func (b *Backend) Login(ctx context.Context, scopes []string, shown func(tui.DeviceCode)) ([]string, error) {
	g, err := agent.Login(ctx, b.c, scopes, func(a *agent.LoginStart) {
		dc := tui.DeviceCode{UserCode: a.UserCode, VerificationURIComplete: a.VerificationURIComplete, ExpiresAt: a.ExpiresAt}
		if open := b.opts.Open; open != nil {
			dc.BrowserExit, dc.BrowserErr = open(a.VerificationURIComplete)
			dc.BrowserOpened = dc.BrowserErr == nil
		}
		if shown != nil {
			shown(dc)
		}
	})
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return nil, err
		}
		return nil, &PlainError{Err: err}
	}
	b.mu.Lock()
	b.noted = false
	b.mu.Unlock()
	return append([]string(nil), g.Scopes...), nil
}

// Logout forgets the Brand's delegation token and grant (`pact logout`). With none stored
// the error says so in the CLI's words.
func (b *Backend) Logout() error {
	err := b.c.Logout(context.Background())
	if errors.Is(err, delegation.ErrNoGrant) {
		return &agent.NoDelegationError{Brand: b.f.Card.Name()} // the words of pact logout
	}
	return err
}
