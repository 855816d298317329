package agent

import (
	"context"
	"io"
	"time"

	"github.com/pact-cli/pact/a2aclient"
	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/delegation"
	"github.com/pact-cli/pact/discovery"
	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/receipts"
)

// Agent is a User's personal agent as every front-end sees it: the
// commands of cmd/pact, the full-screen chat (chatbackend) and `pact mcp`
// (mcpserver) parse their input, call it, and present what it reports.
//
// It has two implementations: Local, the agent run in this process over a
// User's state (a local profile; `pact serve` runs one per User), and the
// client of a `pact serve` (a server profile, package agentclient). Every
// value that crosses it is plain data with a JSON form, and every error is
// one of the typed errors the front-ends match (*StepUpPending,
// *conversation.ClosedError, *conversation.OutcomeUnknownError, …), which
// EncodeError and DecodeError carry across a wire (wire.go). Each method
// is one request of the server's API; callbacks are only the front-end's
// own (Front, a list's each).
type Agent interface {
	// Open opens the Brand named brand (a domain, an origin or a card URL,
	// discovery.CardURL) for turns, in the conversation st names: its card
	// fetched (or taken from the card cache) and checked (PACT §2.1,
	// §5.1), its signature verified (A2A §8.4) and compared with the
	// Brand's pin before anything reaches the Provider. Errors:
	// ErrNewAndContext (before any request), *discovery.CardChangedError,
	// conversation.ErrNotRegistered, discovery's, the store's.
	Open(ctx context.Context, brand string, st Start) (Conversation, error)

	// Card fetches the Brand's Agent Card (never from the cache), checks
	// it, and reports what this User's agent knows of it: the Provider
	// registration that serves it, warnings about its name, and its pin as
	// pin says (CardPin). Errors: discovery's (a card that fails the checks
	// is a *discovery.InvalidCardError carrying it), and for CardCheck and
	// CardTrust a changed card's *discovery.CardChangedError.
	Card(ctx context.Context, brand string, pin CardPin) (*CardReport, error)
	// AcceptChange records the changed card the User was shown and
	// accepted (changed.New, discovery.Accept): brand can be opened again.
	AcceptChange(ctx context.Context, brand string, changed *discovery.CardChangedError) error

	// Grants lists the stored delegation grants (PACT §5), each with its
	// Brand's name when known.
	Grants(ctx context.Context) ([]GrantEntry, error)
	// Logout forgets the delegation grant of the Brand named brand, without
	// contacting it (see the package func Logout). Errors:
	// *NoDelegationError when none is stored.
	Logout(ctx context.Context, brand string) (LoggedOut, error)

	// Conversations lists the stored conversations, most recent first.
	Conversations(ctx context.Context) ([]conversation.Summary, error)
	// CurrentConversation is the conversation a turn with the Brand named
	// brand continues, nil when there is none.
	CurrentConversation(ctx context.Context, brand string) (*conversation.Summary, error)
	// Turns are the stored turns of one conversation, oldest first.
	Turns(ctx context.Context, interfaceURL, contextID string) ([]conversation.Turn, error)
	// ShowConversation is the conversation whose contextId is contextID (or
	// a prefix naming one), with its turns and the User's messages left
	// unanswered. Errors: conversation.ErrNoConversation,
	// conversation.ErrAmbiguousContext.
	ShowConversation(ctx context.Context, contextID string) (*conversation.Record, error)
	// SearchConversations finds the stored turns holding every word of
	// text, newest first, at most limit (0 = 100).
	SearchConversations(ctx context.Context, text string, limit int) (*SearchResult, error)

	// Receipts calls each with every archived receipt lo selects, oldest
	// first, each named by its Brand (the archive is read row by row: the
	// list is never held whole). An error from each ends the listing and is
	// returned.
	Receipts(ctx context.Context, lo receipts.ListOptions, each func(ReceiptItem) error) error
	// Receipt is one archived receipt by id or unique prefix. Errors:
	// receipts.ErrNotFound, receipts.ErrBadID.
	Receipt(ctx context.Context, id string) (*ReceiptEntry, error)
	// VerifyReceipts checks archived receipts again (PACT §5.6). Errors:
	// Receipt's for an id that names none (before any is checked).
	VerifyReceipts(ctx context.Context, req VerifyRequest) ([]ReceiptCheck, error)
	// ExportReceipts is the bundle of the receipts req names: the verified
	// ones, each line with the key that verified it and its Brand's labels.
	ExportReceipts(ctx context.Context, req ExportRequest) (*Export, error)
	// ImportReceipts verifies the bundle (JSON Lines of `pact receipts
	// export`) line by line, checks each key is one the Brand publishes,
	// and adds the receipts that verify to the archive; each is told of
	// every line as it is done.
	ImportReceipts(ctx context.Context, bundle io.Reader, each func(ImportLine) error) error
}

// Conversation is one open conversation with a Brand (Agent.Open): its
// facts for headers, the one-message call a turn is made of (SendStream,
// run by SendID), and what the User does around it.
type Conversation interface {
	// Facts are the Brand's card, the Provider registration that serves
	// it, and this personal agent's identity there, as of Open.
	Facts() Facts
	// ContextID is the conversation the next message continues ("" = the
	// next message starts one). It changes as messages are answered, the
	// Provider closes the conversation, or StartNew.
	ContextID() string
	// NameWarnings are the warnings about the card's name
	// (conversation.NameWarnings); nil when none. The chat asks once.
	NameWarnings(ctx context.Context) []string
	// Grant is the Brand's stored delegation grant (dead ones included),
	// or delegation.ErrNoGrant. It asks nothing of the Brand, and the chat
	// calls it to draw its header after every turn, login and logout: a
	// remote implementation answers from what its last answers told it.
	Grant(ctx context.Context) (*delegation.Grant, error)

	// MessageIDFor is the messageId to send text under: that of the latest
	// message of the same text on record as sent and unanswered in this
	// conversation (earlier, §4.3), else a new one.
	MessageIDFor(ctx context.Context, text string) (id string, earlier *conversation.Turn, err error)
	// SendStream sends text once under messageID (conversation.Session.
	// SendStream: PA JWT, delegation token, same-messageId retries and
	// resume, receipt verified and archived, turns stored), by
	// message:stream with on told of every event when on is set and the
	// Brand streams. It is the unit a server runs for one request; the
	// turn around it (SendID) runs in the front-end's process. Errors:
	// conversation.Session.SendStream's (*conversation.SaveError and
	// *conversation.ContextMismatchError with the Result).
	SendStream(ctx context.Context, text, messageID string, on a2aclient.StreamFunc) (*conversation.Result, error)
	// SentUnanswered reports whether messageID is on record as sent and
	// unanswered (its outcome unknown, §4.3).
	SentUnanswered(ctx context.Context, messageID string) bool
	// Unanswered are the User's messages of this conversation sent and
	// never answered, oldest first.
	Unanswered(ctx context.Context) ([]conversation.Turn, error)
	// Abandon records that the User gave up messageID, left unanswered
	// (conversation.AbandonReplaced, AbandonRemoved).
	Abandon(ctx context.Context, messageID, why string) error
	// History is the stored turns of the current conversation.
	History(ctx context.Context) ([]conversation.Turn, error)
	// FileBytes are the kept bytes of a stored file part; ok is false
	// when they were not kept.
	FileBytes(ctx context.Context, p conversation.Part) (data []byte, ok bool, err error)
	// StartNew makes the next message start a new conversation.
	StartNew(ctx context.Context) error
	// LoadDraft and SaveDraft keep what the chat had not sent.
	LoadDraft(ctx context.Context) (conversation.Draft, error)
	SaveDraft(ctx context.Context, d conversation.Draft) error

	// ExtendedCard fetches the Brand's extended Agent Card. Errors:
	// conversation.ErrNoExtendedCard when its card declares none.
	ExtendedCard(ctx context.Context) (Extended, error)
	// StartLogin begins the device flow (PACT §5.3, RFC 8628) for scopes:
	// what the User is shown. PollLogin asks once whether the User has
	// answered (at most one token request, and only once the interval has
	// passed). Login runs both for a front-end.
	StartLogin(ctx context.Context, scopes []string) (*LoginStart, error)
	PollLogin(ctx context.Context, id string) (*LoginPoll, error)
	// Logout forgets the Brand's delegation. Errors: delegation.ErrNoGrant.
	Logout(ctx context.Context) error
}

// Facts are what a front-end shows of an open conversation (the chat's
// header, line mode's title): plain data.
type Facts struct {
	Card     *discovery.Card      `json:"card"`     // checked, pinned (discovery.Card's JSON form)
	Provider profile.Registration `json:"provider"` // the registration that serves the Brand (§3.1)
	Sub      string               `json:"sub"`      // the pairwise sub at this Provider (§3.2)
	KID      string               `json:"kid"`      // the key that signs the PA JWTs
}

// Card modes of CardPin.
const (
	// CardCheck compares the card with its pin as a turn would, recording
	// a first contact and a key rotation the accepted key announced
	// (`pact card`): CardReport.PinNote.
	CardCheck = "check"
	// CardLook compares it and records nothing (MCP get_agent_card; a
	// changed card is remembered as seen): CardReport.Pin.
	CardLook = "look"
	// CardTrust records the card fetched in this request as the Brand's
	// pin (`pact card --trust`); a changed card needs Expect, its
	// fingerprint (see TrustCard): CardReport.PinNote and Trusted.
	CardTrust = "trust"
)

// CardPin says what Agent.Card does with the Brand's pin.
type CardPin struct {
	Mode   string `json:"mode"`             // CardCheck, CardLook or CardTrust
	Expect string `json:"expect,omitempty"` // CardTrust: the fingerprint the User accepted
}

// CardReport is Agent.Card's answer.
type CardReport struct {
	Card *discovery.Card `json:"card"`
	// Provider is the registration that serves the card's interface; nil
	// when none does (or the profile is not initialised).
	Provider     *profile.Registration `json:"provider"`
	NameWarnings []string              `json:"nameWarnings"`
	PinNote      string                `json:"pinNote,omitempty"` // CardCheck, CardTrust: in plain words
	Pin          *PinLook              `json:"pin,omitempty"`     // CardLook
	Trusted      *Trusted              `json:"trusted,omitempty"` // CardTrust
}

// GrantEntry is a stored delegation grant with its Brand's name ("" when
// not known).
type GrantEntry struct {
	delegation.Grant
	BrandName string `json:"brandName"`
}

// SearchResult is Agent.SearchConversations' answer: the turns found, and
// how many turns could not be searched (added since the last search, on a
// PACT_HOME that can only be read).
type SearchResult struct {
	Hits      []conversation.Hit `json:"hits"`
	Unindexed int                `json:"unindexed"`
}

// ReceiptItem is one archived receipt as `pact receipts list --json` shows
// it: the archive's item (brand is the signed claim, the interface URL)
// and the Brand's card URL and name when known (docs/json.md).
type ReceiptItem struct {
	receipts.Item
	CardURL   string `json:"cardUrl"`
	BrandName string `json:"brandName"`
}

// ReceiptEntry is one archived receipt as `pact receipts show --json`
// shows it: the entry, its brand claim, and the Brand's card URL and name.
type ReceiptEntry struct {
	*receipts.Entry
	Brand     string `json:"brand"`
	CardURL   string `json:"cardUrl"`
	BrandName string `json:"brandName"`
}

// VerifyRequest names the receipts Agent.VerifyReceipts checks.
type VerifyRequest struct {
	IDs []string `json:"ids,omitempty"` // ids or unique prefixes; none: every receipt, rejected ones included
	// Offline checks with the keys kept in the archive, fetching nothing.
	Offline bool `json:"offline,omitempty"`
	// Named fills each check's Brand, CardURL and BrandName (--json).
	Named bool `json:"named,omitempty"`
}

// ReceiptCheck is one receipt checked again, named by its Brand when
// VerifyRequest.Named (docs/json.md, `pact receipts verify --json`).
type ReceiptCheck struct {
	receipts.Check
	Brand     string `json:"brand"`
	CardURL   string `json:"cardUrl"`
	BrandName string `json:"brandName"`
}

// ExportRequest names the receipts Agent.ExportReceipts puts in a bundle:
// IDs (or unique prefixes), or All the verified ones (of Brand, when set).
type ExportRequest struct {
	IDs   []string `json:"ids,omitempty"`
	All   bool     `json:"all,omitempty"`
	Brand string   `json:"brand,omitempty"`
}

// Export is a bundle's records, and with All how many receipts were left
// out as not verified and what of the archive could not be read.
type Export struct {
	Records []receipts.BundleRecord `json:"records"`
	Skipped int                     `json:"skipped"`
	Damaged string                  `json:"damaged,omitempty"`
}

// ImportLine is one line of a bundle, imported: the check of its
// signature (receipts.BundleCheck, updated with the Brand's keys), whether
// it got that far (Checked: its signature verified with the line's key),
// and whether it was added to the archive (a receipt already verified
// there is not; one kept as not verified is).
type ImportLine struct {
	receipts.BundleCheck
	Checked bool `json:"checked"`
	Added   bool `json:"added"`
	// NotLookedUp is set when the Brand's keys were not looked up: the
	// bundle names more Brands than one import looks up
	// (conversation.MaxLookups); the receipt is kept as not verified.
	NotLookedUp bool `json:"notLookedUp,omitempty"`
}

// LoginStart is a device authorization (PACT §5.3) waiting for the User:
// what the User is shown (never the device_code), and its id for PollLogin.
type LoginStart struct {
	ID                      string    `json:"id"`
	UserCode                string    `json:"userCode"`
	VerificationURIComplete string    `json:"verificationUriComplete"`
	ExpiresAt               time.Time `json:"expiresAt"`
	Scopes                  []string  `json:"scopes"` // asked for
	// Wait is how long until the first poll may ask (ns in JSON).
	Wait time.Duration `json:"wait"`
}

// LoginPoll is what one poll found: the grant once the User approved
// (its Scopes may be fewer than asked), else how long until the next poll
// may ask (ns in JSON).
type LoginPoll struct {
	Grant *delegation.Grant `json:"grant,omitempty"`
	Wait  time.Duration     `json:"wait"`
}
