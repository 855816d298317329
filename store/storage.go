package store

import "context"

// The storage interface: what the agent core keeps, for many Users, in one
// of two databases (issue 28). A Backend is a database; ForUser opens one
// User's Store, and every read and write of that Store carries the User's
// id, so that no lookup, listing or search returns another User's rows.
//
//	Backend ── ForUser(id) ──► Store (Conversations, Sends, Receipts, Grants,
//	                                  Secrets, Cards, Pins)
//	  *DB          the SQLite file of a profile (this package; the default)
//	  *postgres.DB a PostgreSQL database (package store/postgres)
//
// Both pass the conformance suite in store/storetest. What only one of them
// can do stays on its concrete type: the SQLite file's backup and restore
// (VACUUM INTO), the refusal of a file that lost its history (guard.go), the
// import of the files of a release before the database.
//
// A User is the pair (personal agent, sub) of PACT §3.2; a Backend knows it
// by a stable, opaque id. A profile's SQLite file holds one User, LocalUser.

// LocalUser is the id of the User a profile's own SQLite file holds: every
// row written before Users existed (schema version 11 and earlier) and
// every row the CLI writes there belong to it.
const LocalUser = "local"

// Backend is a database holding the state of any number of Users. Its
// methods are safe for concurrent use, by several processes too.
type Backend interface {
	// ForUser returns the Store of the User whose stable id is user. It
	// does not touch the database: the first call that needs it opens and
	// migrates it, and returns any error. An empty id is a programming
	// error (ForUser panics).
	ForUser(user string) Store
	// Check opens the database as every command does, checks it and
	// compares its schema version with this binary's; `pact doctor` fails
	// on its error.
	Check(ctx context.Context) (Health, error)
	// Where names the database for people: a file's path, or a URL
	// without its password.
	Where() string
	// Close closes the database; Stores opened from it stop working.
	Close() error
}

// Store is one User's state in a Backend. Every method reads and writes
// that User's rows only. Errors name the database and say that a failed
// write changed nothing.
type Store interface {
	// User is the id of the User this Store reads and writes.
	User() string
	// CanWrite reports whether a write could be saved now: nil, or an
	// error matching ErrCannotWrite saying why. It writes nothing.
	CanWrite(ctx context.Context) error

	Conversations
	Sends
	Receipts
	Grants
	Secrets
	Cards
	Pins
}

// Conversations are a User's conversations with Brands and their turns
// (conversations.go).
type Conversations interface {
	// CurrentConversation returns the conversation that send/chat continue
	// with the Brand at cardURL; ok is false when there is none.
	CurrentConversation(ctx context.Context, cardURL string) (c Conversation, ok bool, err error)
	// FindConversation returns the conversation (interfaceURL, contextID).
	FindConversation(ctx context.Context, interfaceURL, contextID string) (c Conversation, ok bool, err error)
	// FindContext returns the conversations whose contextId is contextID
	// or starts with it (any Brand): an exact match first, then most
	// recent first.
	FindContext(ctx context.Context, contextID string) ([]Conversation, error)
	// Conversations returns every conversation, most recent first (then
	// by contextId). Current is set only on open conversations.
	Conversations(ctx context.Context) ([]Conversation, error)
	// Turns returns a conversation's turns with their parts, oldest first
	// (in the order they were appended); none when it is unknown.
	Turns(ctx context.Context, interfaceURL, contextID string) ([]Turn, error)
	// AppendTurns adds turns to the conversation conv names (creating it
	// or updating its summary) and makes it the Brand's current one, in
	// one transaction. A User's turn whose messageId is stored is not
	// added twice, nor an agent turn answering a User's messageId
	// (Turn.Answers) already answered, whatever the reply's own messageId
	// (a Provider may reuse one: every reply is kept). The rows written do
	// not depend on how many turns the conversation has (O(1)).
	AppendTurns(ctx context.Context, conv Conversation, turns ...Turn) error
	// SetConversationState sets a conversation's state ("closed", PACT
	// §4.2); an unknown conversation is no error.
	SetConversationState(ctx context.Context, interfaceURL, contextID, state string) error
	// ForgetCurrent stops continuing any conversation with the Brand at
	// cardURL; the conversations are kept.
	ForgetCurrent(ctx context.Context, cardURL string) error
	// SearchTurns finds the turns holding every word of text as a
	// substring, case-insensitively, in any script (CJK and Thai too),
	// newest first, at most limit (0 = 100). The words are matched as
	// given, never read as a query language.
	SearchTurns(ctx context.Context, text string, limit int) (Search, error)
	// Blob returns the kept bytes of a file part by their hex SHA-256; ok
	// is false when they were not kept.
	Blob(ctx context.Context, sha256 string) (data []byte, ok bool, err error)
}

// Sends are a User's messages on record before they leave, by messageId
// (PACT §4.3), and the chat's drafts (sends.go).
type Sends interface {
	// RecordSend puts s on record (SendSending unless set), replacing an
	// earlier record of the same messageId (a second attempt).
	RecordSend(ctx context.Context, s Send) error
	// SetSendState records how a send ended; an unknown messageId is no
	// error.
	SetSendState(ctx context.Context, messageID, state, why string) error
	// SendState returns the state of the send of messageID ("" when none).
	SendState(ctx context.Context, messageID string) (string, error)
	// AbandonSend records that the User gave up the send of messageID
	// while it was still SendSending (replaced or removed): it becomes
	// SendAbandoned with why, and Unanswered no longer returns it. A send
	// in another state, or none, is left as it is; abandoned reports
	// whether one was changed.
	AbandonSend(ctx context.Context, messageID, why string) (abandoned bool, err error)
	// Unanswered returns the sends to the Brand at cardURL still in state
	// SendSending, oldest first.
	Unanswered(ctx context.Context, cardURL string) ([]Send, error)
	// SaveDraft keeps the chat's draft for the Brand (an empty one removes
	// it); LoadDraft returns it (zero when none).
	SaveDraft(ctx context.Context, cardURL string, d Draft) error
	LoadDraft(ctx context.Context, cardURL string) (Draft, error)
}

// Receipts are a User's receipt archive (PACT §5.6) with the turns each
// receipt came with (receipts.go).
type Receipts interface {
	// PutReceipt archives r: added, or replacing the row with its id,
	// except that a verified row is never replaced by a rejected one.
	PutReceipt(ctx context.Context, r Receipt) error
	// PutReceipts archives several receipts in one transaction.
	PutReceipts(ctx context.Context, rs []Receipt) error
	// PutTurnReceipt archives r as the receipt of turn (the interface URL
	// and the User's messageId); others counts the other turns it had
	// already come with: more than 0 is a replay.
	PutTurnReceipt(ctx context.Context, r Receipt, turn string) (others int, err error)
	// EachReceipt calls fn for every receipt f selects, oldest first (by
	// ts, then id), one row at a time; fn's error stops the walk.
	EachReceipt(ctx context.Context, f ReceiptFilter, fn func(Receipt) error) error
	// ReceiptsByPrefix returns the full rows whose id starts with prefix
	// (lower-case hex), at most max.
	ReceiptsByPrefix(ctx context.Context, prefix string, max int) ([]Receipt, error)
	// ReceiptCount is the number of archived receipts.
	ReceiptCount(ctx context.Context) (int, error)
}

// Grants are a User's delegation grants' public metadata (PACT §5), one
// JSON document per interface URL (grants.go). Their tokens are Secrets.
type Grants interface {
	Grant(ctx context.Context, interfaceURL string) (doc []byte, ok bool, err error)
	PutGrant(ctx context.Context, interfaceURL, brand string, doc []byte) error
	DeleteGrant(ctx context.Context, interfaceURL string) error
	// Grants returns every document, by brand then interface URL.
	Grants(ctx context.Context) ([][]byte, error)
}

// SealedSecret is a secret as a Sealer sealed it (package seal): the store
// keeps it and never sees the plaintext. KeyVersion names the data key
// that sealed it, so that the key can be rotated.
type SealedSecret struct {
	KeyVersion string
	Ciphertext []byte // the nonce, then the AES-GCM ciphertext and tag
}

// Secrets are a User's secrets kept in the database, sealed (delegation
// access and refresh tokens, when they do not live in the keyring), by
// name (secrets.go).
type Secrets interface {
	PutSecret(ctx context.Context, name string, s SealedSecret) error
	// Secret returns the secret kept under name; ok is false when none.
	Secret(ctx context.Context, name string) (s SealedSecret, ok bool, err error)
	// DeleteSecret removes it (absent is no error).
	DeleteSecret(ctx context.Context, name string) error
	// SecretNames lists the names kept, sorted (a key rotation reseals them).
	SecretNames(ctx context.Context) ([]string, error)
}

// Cards are a User's Agent Card cache and the notes kept about cards
// (cards.go, notes.go).
type Cards interface {
	Card(ctx context.Context, url string) (c CachedCard, ok bool, err error)
	PutCard(ctx context.Context, c CachedCard) error
	ForgetCard(ctx context.Context, url string) error
	// Note returns the value kept under key; SetNote replaces it.
	Note(ctx context.Context, key string) (value string, ok bool, err error)
	SetNote(ctx context.Context, key, value string) error
}

// Pins are a User's Brand pins and the one card state: a changed card seen
// by any command stops them all until the User accepts a card (pins.go).
type Pins interface {
	Pin(ctx context.Context, brand string) (p Pin, ok bool, err error)
	// SetPin keeps p (a zero PinnedAt is now) and ends any change seen.
	SetPin(ctx context.Context, p Pin) error
	// NoteCardChange remembers a changed card of brand until SetPin.
	NoteCardChange(ctx context.Context, brand string, next Pin, changes []string) error
	// CardChange returns the change last seen for brand; ok is false when
	// none is pending.
	CardChange(ctx context.Context, brand string) (next Pin, changes []string, ok bool, err error)
}
