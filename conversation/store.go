package conversation

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pact-cli/pact/store"
)

// Conversation states.
const (
	StateOpen   = "open"
	StateClosed = "closed" // the Provider closed it (§4.2)
	// StateUnknown: the Provider answered that it does not know the
	// conversation (INVALID_PARAMS on its contextId: it restarted, or the
	// conversation expired). It is not continued any more.
	StateUnknown = "unknown"
)

// Turn is one stored message of a conversation.
type Turn struct {
	MessageID string    `json:"messageId"`
	Role      string    `json:"role"` // "user" or "agent"
	Text      string    `json:"text"`
	At        time.Time `json:"at"`
	TaskState string    `json:"taskState,omitempty"` // for a task reply (§5.5)
	ReceiptID string    `json:"receiptId,omitempty"`
	// ReceiptVerified is set when the reply carried a receipt (§5.6).
	ReceiptVerified *bool `json:"receiptVerified,omitempty"`
	// ReceiptRestored is set (ReceiptVerified then false) when the
	// receipt was put back by `pact restore` and not checked again since:
	// an online `pact receipts verify` checks it (store.Turn.ReceiptRestored).
	ReceiptRestored bool `json:"receiptRestored,omitempty"`
	// Parts are the turn's non-text parts (data, files), in order.
	Parts []Part `json:"parts,omitempty"`
	// State is set on a User's message whose answer never arrived:
	// "unanswered" (History only; see Session.Unanswered).
	State string `json:"state,omitempty"`

	// parts are the parts to store with the turn (Append), file bytes included.
	parts []store.Part
	// answers is, on an agent turn to store (Append), the messageId of the
	// User's message it answers (store.Turn.Answers).
	answers string
}

// Summary describes one stored conversation (`pact conversations --json`).
type Summary struct {
	Brand         string    `json:"brand"` // card URL
	BrandName     string    `json:"brandName,omitempty"`
	InterfaceURL  string    `json:"interfaceUrl"`
	ContextID     string    `json:"contextId"`
	LastMessageAt time.Time `json:"lastMessageAt"`
	State         string    `json:"state"`
	// Current marks, in List, the conversation that `pact send` and
	// `pact chat` continue with its Brand.
	Current bool `json:"current"`
}

// Record is a conversation with its messages
// (`pact conversations show --json`).
type Record struct {
	Summary
	Turns []Turn `json:"turns"`
}

// Store keeps a User's conversations in their store (store.Conversations,
// store.Sends): one row per conversation, one per turn, so appending a
// turn costs the same however long the conversation is. Every write is one
// transaction; several pact processes can share a profile.
type Store struct{ db store.Store }

// NewStore returns the conversation store in db (the User's store).
func NewStore(db store.Store) *Store { return &Store{db: db} }

func toSummary(c store.Conversation) Summary {
	return Summary{Brand: c.Brand, BrandName: c.BrandName, InterfaceURL: c.InterfaceURL, ContextID: c.ContextID,
		LastMessageAt: c.LastMessageAt, State: c.State, Current: c.Current}
}

func toTurn(t store.Turn) Turn {
	return Turn{MessageID: t.MessageID, Role: t.Role, Text: t.Text, At: t.At, TaskState: t.TaskState,
		ReceiptID: t.ReceiptID, ReceiptVerified: t.ReceiptVerified, ReceiptRestored: t.ReceiptRestored, Parts: toParts(t.Parts)}
}

// Current returns the conversation to continue with the Brand at cardURL,
// or nil when there is none.
func (s *Store) Current(cardURL string) (*Summary, error) {
	c, ok, err := s.db.CurrentConversation(context.Background(), cardURL)
	if err != nil || !ok {
		return nil, err
	}
	sum := toSummary(c)
	sum.Current = false
	return &sum, nil
}

// Find returns the summary of a stored context of the Brand, or nil.
func (s *Store) Find(interfaceURL, contextID string) (*Summary, error) {
	c, ok, err := s.db.FindConversation(context.Background(), interfaceURL, contextID)
	if err != nil || !ok {
		return nil, err
	}
	sum := toSummary(c)
	sum.Current = false
	return &sum, nil
}

// List returns every stored conversation, most recent first.
func (s *Store) List() ([]Summary, error) {
	cs, err := s.db.Conversations(context.Background())
	if err != nil {
		return nil, err
	}
	out := make([]Summary, len(cs))
	for i, c := range cs {
		out[i] = toSummary(c)
	}
	return out, nil
}

// Turns returns the stored messages of a conversation, oldest first.
func (s *Store) Turns(interfaceURL, contextID string) ([]Turn, error) {
	ts, err := s.db.Turns(context.Background(), interfaceURL, contextID)
	if err != nil {
		return nil, err
	}
	out := make([]Turn, len(ts))
	for i, t := range ts {
		out[i] = toTurn(t)
	}
	return out, nil
}

// ErrNoConversation means no stored conversation has that contextId.
var ErrNoConversation = errors.New("no stored conversation with that context id")

// ErrAmbiguousContext means a contextId prefix names several conversations.
var ErrAmbiguousContext = errors.New("the context id is ambiguous")

// Show returns the stored conversation whose contextId is contextID (or
// starts with it, when that names one conversation), with its turns.
// Errors: ErrNoConversation; a prefix naming several conversations.
func (s *Store) Show(contextID string) (*Record, error) {
	ctx := context.Background()
	cs, err := s.db.FindContext(ctx, contextID)
	if err != nil {
		return nil, err
	}
	switch {
	case len(cs) == 0 || contextID == "":
		return nil, fmt.Errorf("%w: %q (see `pact conversations`)", ErrNoConversation, contextID)
	case len(cs) > 1 && cs[0].ContextID != contextID:
		return nil, fmt.Errorf("%w: %q matches %d conversations; give more characters", ErrAmbiguousContext, contextID, len(cs))
	}
	rec := &Record{Summary: toSummary(cs[0])}
	rec.Turns, err = s.Turns(rec.InterfaceURL, rec.ContextID)
	if err == nil {
		// The User's messages of this conversation whose answer never arrived.
		var sends []store.Send
		sends, err = s.db.Unanswered(ctx, rec.Brand)
		for _, x := range sends {
			if x.InterfaceURL == rec.InterfaceURL && x.ContextID == rec.ContextID {
				rec.Turns = append(rec.Turns, Turn{MessageID: x.MessageID, Role: "user", Text: x.Text, At: x.At, State: TurnUnanswered})
			}
		}
	}
	if rec.Turns == nil {
		rec.Turns = []Turn{}
	}
	return rec, err
}

// Hit is one turn found by Search (`pact conversations search --json`).
type Hit struct {
	Brand        string `json:"brand"`
	BrandName    string `json:"brandName,omitempty"`
	InterfaceURL string `json:"interfaceUrl"`
	ContextID    string `json:"contextId"`
	Turn
}

// Search finds the stored turns holding every word of text as a substring
// (case-insensitive; any script, CJK and Thai included: store.SearchTurns),
// newest first, at most limit (0 = 100).
func (s *Store) Search(text string, limit int) ([]Hit, error) {
	hits, _, err := s.SearchIn(text, limit)
	return hits, err
}

// SearchIn is Search, with how many turns could not be searched (added
// since the last search, on a PACT_HOME that can only be read).
func (s *Store) SearchIn(text string, limit int) ([]Hit, int, error) {
	res, err := s.db.SearchTurns(context.Background(), text, limit)
	if err != nil {
		return nil, 0, err
	}
	hs := res.Hits
	out := make([]Hit, len(hs))
	for i, h := range hs {
		out[i] = Hit{Brand: h.Conversation.Brand, BrandName: h.Conversation.BrandName, InterfaceURL: h.Conversation.InterfaceURL,
			ContextID: h.Conversation.ContextID, Turn: toTurn(h.Turn)}
	}
	return out, res.Unindexed, nil
}

// Append adds turns to the conversation sum names (creating it), makes it
// the Brand's current conversation, and updates its summary, in one
// transaction. A User's turn whose messageId is already stored is not added
// twice (a retried send), nor a reply to a User's message already answered
// (store.Turn.Answers).
func (s *Store) Append(sum Summary, turns ...Turn) error {
	if sum.ContextID == "" || sum.InterfaceURL == "" {
		return fmt.Errorf("conversation: contextId and interface URL are required")
	}
	conv := store.Conversation{Brand: sum.Brand, BrandName: sum.BrandName, InterfaceURL: sum.InterfaceURL,
		ContextID: sum.ContextID, LastMessageAt: sum.LastMessageAt, State: sum.State}
	rows := make([]store.Turn, len(turns))
	for i, t := range turns {
		rows[i] = store.Turn{MessageID: t.MessageID, Role: t.Role, Text: t.Text, At: t.At, TaskState: t.TaskState,
			ReceiptID: t.ReceiptID, ReceiptVerified: t.ReceiptVerified, Parts: t.parts, Answers: t.answers}
	}
	return s.db.AppendTurns(context.Background(), conv, rows...)
}

// MarkClosed records that the Provider closed a conversation (§4.2); the
// next message to the Brand starts a new one.
func (s *Store) MarkClosed(interfaceURL, contextID string) error {
	return s.db.SetConversationState(context.Background(), interfaceURL, contextID, StateClosed)
}

// MarkUnknown records that the Provider no longer knows a conversation.
func (s *Store) MarkUnknown(interfaceURL, contextID string) error {
	return s.db.SetConversationState(context.Background(), interfaceURL, contextID, StateUnknown)
}

// Forget stops continuing any conversation with the Brand (`--new`); the
// stored conversations are kept.
func (s *Store) Forget(cardURL string) error {
	return s.db.ForgetCurrent(context.Background(), cardURL)
}
