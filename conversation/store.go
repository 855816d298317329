package conversation

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"sort"
	"time"

	"github.com/pact-cli/pact/store"
)

// Conversation states.
const (
	StateOpen   = "open"
	StateClosed = "closed" // the Provider closed it (§4.2)
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

// Record is a conversation with its messages.
type Record struct {
	Summary
	Turns []Turn `json:"turns"`
}

type index struct {
	// Current maps a Brand's card URL to the key of the conversation that
	// `pact send`/`chat` continue.
	Current       map[string]string  `json:"current"`
	Conversations map[string]Summary `json:"conversations"`
}

// Store keeps a profile's conversations under dir: index.json plus one file
// per conversation. Every write is atomic and locked (store.Update), so two
// pact processes can share a profile.
type Store struct{ dir string }

// NewStore returns the conversation store in dir
// ({data}/profiles/NAME/conversations).
func NewStore(dir string) *Store { return &Store{dir: dir} }

// Key is the file key of a conversation: a hash of (interface URL, contextId),
// since contextIds are opaque Provider strings.
func Key(interfaceURL, contextID string) string {
	h := sha256.Sum256([]byte(interfaceURL + "\x00" + contextID))
	return hex.EncodeToString(h[:12])
}

func (s *Store) indexPath() string            { return filepath.Join(s.dir, "index.json") }
func (s *Store) recordPath(key string) string { return filepath.Join(s.dir, key+".json") }

// Current returns the conversation to continue with the Brand at cardURL,
// or nil when there is none.
func (s *Store) Current(cardURL string) (*Summary, error) {
	var idx index
	if _, err := store.ReadJSON(s.indexPath(), &idx); err != nil {
		return nil, err
	}
	key, ok := idx.Current[cardURL]
	if !ok {
		return nil, nil
	}
	sum, ok := idx.Conversations[key]
	if !ok {
		return nil, nil
	}
	return &sum, nil
}

// Find returns the summary of a stored context of the Brand, or nil.
func (s *Store) Find(interfaceURL, contextID string) (*Summary, error) {
	var idx index
	if _, err := store.ReadJSON(s.indexPath(), &idx); err != nil {
		return nil, err
	}
	if sum, ok := idx.Conversations[Key(interfaceURL, contextID)]; ok {
		return &sum, nil
	}
	return nil, nil
}

// List returns every stored conversation, most recent first.
func (s *Store) List() ([]Summary, error) {
	var idx index
	if _, err := store.ReadJSON(s.indexPath(), &idx); err != nil {
		return nil, err
	}
	current := map[string]bool{}
	for _, key := range idx.Current {
		current[key] = true
	}
	out := make([]Summary, 0, len(idx.Conversations))
	for key, sum := range idx.Conversations {
		sum.Current = current[key] && sum.State == StateOpen
		out = append(out, sum)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].LastMessageAt.Equal(out[j].LastMessageAt) {
			return out[i].LastMessageAt.After(out[j].LastMessageAt)
		}
		return out[i].ContextID < out[j].ContextID
	})
	return out, nil
}

// Turns returns the stored messages of a conversation, oldest first.
func (s *Store) Turns(interfaceURL, contextID string) ([]Turn, error) {
	var rec Record
	if _, err := store.ReadJSON(s.recordPath(Key(interfaceURL, contextID)), &rec); err != nil {
		return nil, err
	}
	return rec.Turns, nil
}

// Append adds turns to the conversation sum names (creating it), makes it
// the Brand's current conversation, and updates the index. A turn whose
// messageId is already stored is not added twice (a retried send).
func (s *Store) Append(sum Summary, turns ...Turn) error {
	if sum.ContextID == "" || sum.InterfaceURL == "" {
		return fmt.Errorf("conversation: contextId and interface URL are required")
	}
	key := Key(sum.InterfaceURL, sum.ContextID)
	if sum.State == "" {
		sum.State = StateOpen
	}
	err := store.Update(s.recordPath(key), 0o600, func(rec *Record) error {
		seen := map[string]bool{}
		for _, t := range rec.Turns {
			seen[t.Role+"\x00"+t.MessageID] = true
		}
		for _, t := range turns {
			if !seen[t.Role+"\x00"+t.MessageID] {
				rec.Turns = append(rec.Turns, t)
			}
		}
		rec.Summary = sum
		rec.Summary.Current = false
		return nil
	})
	if err != nil {
		return err
	}
	return store.Update(s.indexPath(), 0o600, func(idx *index) error {
		if idx.Current == nil {
			idx.Current = map[string]string{}
		}
		if idx.Conversations == nil {
			idx.Conversations = map[string]Summary{}
		}
		sum.Current = false
		idx.Current[sum.Brand] = key
		idx.Conversations[key] = sum
		return nil
	})
}

// MarkClosed records that the Provider closed a conversation (§4.2); the
// next message to the Brand starts a new one.
func (s *Store) MarkClosed(interfaceURL, contextID string) error {
	key := Key(interfaceURL, contextID)
	err := store.Update(s.indexPath(), 0o600, func(idx *index) error {
		sum, ok := idx.Conversations[key]
		if !ok {
			return nil
		}
		sum.State = StateClosed
		idx.Conversations[key] = sum
		return nil
	})
	if err != nil {
		return err
	}
	return store.Update(s.recordPath(key), 0o600, func(rec *Record) error {
		if rec.ContextID != "" {
			rec.State = StateClosed
		}
		return nil
	})
}

// Forget stops continuing any conversation with the Brand (`--new`); the
// stored conversations are kept.
func (s *Store) Forget(cardURL string) error {
	return store.Update(s.indexPath(), 0o600, func(idx *index) error {
		delete(idx.Current, cardURL)
		return nil
	})
}
