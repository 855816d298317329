package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
	"time"

	"github.com/pact-cli/pact/a2aclient"
	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/delegation"
	"github.com/pact-cli/pact/deviceflow"
	"github.com/pact-cli/pact/discovery"
)

// Local is the Agent run in this process over a User's state
// (conversation.Options: a local profile's, built by conversation.
// NewOptions; `pact serve` builds one per User from that User's store and
// the server's key). Its methods are the package's use cases (Open, Trust,
// LookPin, Logout, …) and conversation's, called directly.
type Local struct {
	Opts conversation.Options
	// Now is the clock for pins; nil = time.Now.
	Now func() time.Time
}

var _ Agent = (*Local)(nil)

// NewLocal is the in-process agent over opts.
func NewLocal(opts conversation.Options) *Local { return &Local{Opts: opts} }

func (l *Local) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

// Open is the package func Open, as a Conversation.
func (l *Local) Open(ctx context.Context, brand string, st Start) (Conversation, error) {
	s, err := Open(ctx, l.Opts, brand, st)
	if err != nil {
		return nil, err
	}
	return InProcess(s), nil
}

// AcceptChange records changed.New as the Brand's pin (discovery.Accept).
func (l *Local) AcceptChange(ctx context.Context, brand string, changed *discovery.CardChangedError) error {
	return discovery.Accept(ctx, l.Opts.Pins, changed, l.now())
}

// Grants are conversation.ListGrants, named by Brands.
func (l *Local) Grants(ctx context.Context) ([]GrantEntry, error) {
	list, err := conversation.ListGrants(l.Opts)
	if err != nil {
		return nil, err
	}
	ix := Brands(l.Opts)
	out := make([]GrantEntry, 0, len(list))
	for _, g := range list {
		ref, _ := ix.Lookup(g.InterfaceURL)
		out = append(out, GrantEntry{Grant: g, BrandName: ref.Name})
	}
	return out, nil
}

// Logout is the package func Logout.
func (l *Local) Logout(ctx context.Context, brand string) (LoggedOut, error) {
	return Logout(ctx, l.Opts, brand)
}

// Conversations are conversation.Store.List.
func (l *Local) Conversations(ctx context.Context) ([]conversation.Summary, error) {
	return l.Opts.Store.List()
}

// CurrentConversation is conversation.Store.Current for the card URL of
// brand. Errors: discovery.CardURL's.
func (l *Local) CurrentConversation(ctx context.Context, brand string) (*conversation.Summary, error) {
	cardURL, err := discovery.CardURL(brand)
	if err != nil {
		return nil, err
	}
	return l.Opts.Store.Current(cardURL)
}

// Turns are conversation.Store.Turns.
func (l *Local) Turns(ctx context.Context, interfaceURL, contextID string) ([]conversation.Turn, error) {
	return l.Opts.Store.Turns(interfaceURL, contextID)
}

// ShowConversation is conversation.Store.Show.
func (l *Local) ShowConversation(ctx context.Context, contextID string) (*conversation.Record, error) {
	return l.Opts.Store.Show(contextID)
}

// SearchConversations is conversation.Store.SearchIn.
func (l *Local) SearchConversations(ctx context.Context, text string, limit int) (*SearchResult, error) {
	hits, unindexed, err := l.Opts.Store.SearchIn(text, limit)
	if err != nil {
		return nil, err
	}
	return &SearchResult{Hits: hits, Unindexed: unindexed}, nil
}

// LocalConversation is a Conversation over a *conversation.Session in this
// process (InProcess).
type LocalConversation struct {
	s *conversation.Session

	mu     sync.Mutex
	logins map[string]*conversation.PendingLogin // started and not yet ended, by LoginStart.ID
}

var _ Conversation = (*LocalConversation)(nil)

// InProcess is s as a Conversation (the in-process implementation; the
// tour uses it on a session it opened itself).
func InProcess(s *conversation.Session) *LocalConversation {
	return &LocalConversation{s: s, logins: map[string]*conversation.PendingLogin{}}
}

// Session is the conversation.Session underneath.
func (c *LocalConversation) Session() *conversation.Session { return c.s }

// Facts are the Session's card, Provider registration, sub and kid.
func (c *LocalConversation) Facts() Facts {
	f := Facts{Card: c.s.Card, Provider: c.s.Provider, Sub: c.s.Sub}
	if c.s.Signer != nil {
		f.KID = c.s.Signer.KID()
	}
	return f
}

func (c *LocalConversation) ContextID() string { return c.s.ContextID() }

func (c *LocalConversation) NameWarnings(ctx context.Context) []string { return c.s.NameWarnings(ctx) }

func (c *LocalConversation) Grant(ctx context.Context) (*delegation.Grant, error) { return c.s.Grant() }

func (c *LocalConversation) MessageIDFor(ctx context.Context, text string) (string, *conversation.Turn, error) {
	id, earlier := c.s.MessageIDFor(text)
	return id, earlier, nil
}

func (c *LocalConversation) SendStream(ctx context.Context, text, messageID string, on a2aclient.StreamFunc) (*conversation.Result, error) {
	return c.s.SendStream(ctx, text, messageID, on)
}

func (c *LocalConversation) SentUnanswered(ctx context.Context, messageID string) bool {
	return c.s.SentUnanswered(messageID)
}

func (c *LocalConversation) Unanswered(ctx context.Context) ([]conversation.Turn, error) {
	return c.s.Unanswered()
}

func (c *LocalConversation) Abandon(ctx context.Context, messageID, why string) error {
	return c.s.Abandon(messageID, why)
}

func (c *LocalConversation) History(ctx context.Context) ([]conversation.Turn, error) {
	return c.s.History()
}

func (c *LocalConversation) FileBytes(ctx context.Context, p conversation.Part) ([]byte, bool, error) {
	return c.s.FileBytes(p)
}

func (c *LocalConversation) StartNew(ctx context.Context) error { return c.s.StartNew() }

func (c *LocalConversation) LoadDraft(ctx context.Context) (conversation.Draft, error) {
	return c.s.LoadDraft()
}

func (c *LocalConversation) SaveDraft(ctx context.Context, d conversation.Draft) error {
	return c.s.SaveDraft(d)
}

// ExtendedCard fetches the extended card of the Brand
// (conversation.Session.ExtendedCard: PA JWT, and the delegation token
// when the User has delegated).
func (c *LocalConversation) ExtendedCard(ctx context.Context) (Extended, error) {
	card, err := c.s.ExtendedCard(ctx)
	if err != nil {
		return Extended{}, err
	}
	st, err := c.s.DelegationStatus()
	return Extended{Card: card, Delegated: err == nil && st.State == conversation.DelegationActive}, nil
}

// StartLogin is conversation.Session.StartLogin; the pending login (its
// device_code) stays in this process, named by a random id.
func (c *LocalConversation) StartLogin(ctx context.Context, scopes []string) (*LoginStart, error) {
	l, err := c.s.StartLogin(ctx, scopes)
	if err != nil {
		return nil, err
	}
	var b [16]byte
	rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	c.mu.Lock()
	c.logins[id] = l
	c.mu.Unlock()
	return &LoginStart{ID: id, UserCode: l.Auth.UserCode, VerificationURIComplete: l.Auth.VerificationURIComplete,
		ExpiresAt: l.Auth.ExpiresAt, Scopes: append([]string(nil), l.Auth.Scopes...), Wait: l.Wait()}, nil
}

// ErrNoLogin is PollLogin's error for an id no login started here has (or
// one that has ended).
var ErrNoLogin = errors.New("no login in progress has this id")

// PollLogin is conversation.Session.PollLogin on the login id names: at
// most one token request. The login ends (its id forgotten) with the grant
// or an error.
func (c *LocalConversation) PollLogin(ctx context.Context, id string) (*LoginPoll, error) {
	c.mu.Lock()
	l := c.logins[id]
	c.mu.Unlock()
	if l == nil {
		return nil, ErrNoLogin
	}
	g, err := c.s.PollLogin(ctx, l)
	if errors.Is(err, deviceflow.ErrPending) {
		return &LoginPoll{Wait: l.Wait()}, nil
	}
	c.mu.Lock()
	delete(c.logins, id)
	c.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return &LoginPoll{Grant: g}, nil
}

func (c *LocalConversation) Logout(ctx context.Context) error { return c.s.Logout() }
