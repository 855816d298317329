// Package tui is the full-screen chat that `pact chat BRAND` opens on a terminal.
//
// The package knows nothing about A2A, keys or stores: it talks to a [Backend], which the
// conversation layer implements with an adapter. The screen is a header (Brand, Provider,
// identity, delegation state), a scrollback of turns, a status line, a multi-line input and a
// one-line help of the keys that work in the current view.
package tui

import (
	"context"
	"errors"
	"time"
)

// Role says who a [Turn] comes from and how it is drawn.
type Role int

const (
	// RoleUser is a message the User typed.
	RoleUser Role = iota
	// RoleAgent is a reply from the Brand's agent (§4.2).
	RoleAgent
	// RoleSystem is a notice from pact itself (new conversation, scopes granted, …).
	RoleSystem
	// RoleError is an inline error, in the same words the CLI prints.
	RoleError
)

// String returns "user", "agent", "system" or "error".
func (r Role) String() string {
	switch r {
	case RoleUser:
		return "user"
	case RoleAgent:
		return "agent"
	case RoleSystem:
		return "system"
	case RoleError:
		return "error"
	}
	return "unknown"
}

// ReceiptMark is what the chat shows of a receipt (§5.6) carried by an agent reply.
type ReceiptMark struct {
	// ID is the local archive id of the receipt (as `pact receipts show ID` takes it).
	ID string
	// Verified is true when the JWS verified against the Brand's jwks_uri (§5.6).
	Verified bool
	// Problems lists every failed check when Verified is false, in the CLI's words.
	Problems []string
	// Missing is set when pact's receipt archive does not hold the receipt (it could not
	// be archived when it came, or was left out since): pact has no copy to show or check,
	// so it is not Verified whatever was noted of it before.
	Missing bool
	// Restored is set when the receipt came back with `pact restore` and pact has not
	// checked it since: not Verified, whatever the backup said, until `pact receipts
	// verify` checks it against the Brand's published keys (receipts.Entry.Restored).
	Restored bool
	// ScopesUsed is the receipt's claims.scopesUsed.
	ScopesUsed []string
	// Actions names each action of claims.actions (its tool, optionally with an argsHash).
	Actions []string
	// TS is claims.ts.
	TS time.Time
}

// Turn is one entry of the scrollback.
type Turn struct {
	// ID is a stable id (e.g. the A2A messageId); it may be empty for local notices.
	ID string
	// Role says who wrote it.
	Role Role
	// Text is plain text. Terminal control sequences in it are removed before drawing.
	Text string
	// At is when it was sent or received; shown as HH:MM in its own location.
	At time.Time
	// Receipt is set on agent replies that carried a receipt (§5.6).
	Receipt *ReceiptMark
	// Parts are the reply's parts other than text (data, files), in order.
	Parts []Part
	// State is how far a User's message got (RoleUser only); the zero value is a message
	// that was answered, as every turn of History is unless the Backend says otherwise.
	State SendState
}

// SendState is how far a User's message got, shown next to its "You" label.
type SendState int

const (
	// Delivered: the message was sent and answered (or is history).
	Delivered SendState = iota
	// Sending: the message is on its way and its answer not here yet.
	Sending
	// Unanswered: the message was sent (or may have been) but its answer never arrived:
	// the chat stopped waiting (Esc) or was left while waiting. Sending it again with the
	// same messageId fetches the answer without the Brand's agent acting twice (§4.3).
	Unanswered
	// Failed: the message was not sent, or the Provider refused it; it waits at the head
	// of the queue to be sent again or edited.
	Failed
)

// String returns "delivered", "sending", "unanswered" or "failed".
func (s SendState) String() string {
	switch s {
	case Sending:
		return "sending"
	case Unanswered:
		return "unanswered"
	case Failed:
		return "failed"
	}
	return "delivered"
}

// PartKind says what a non-text [Part] carries.
type PartKind int

const (
	// PartData is structured data (an A2A data part), shown as indented JSON.
	PartData PartKind = iota
	// PartFile is a file, inline (Data) or by reference (URL).
	PartFile
)

// Part is a non-text part of an agent reply (A2A Part with data, raw bytes or a URL).
// Every string in it is remote text: the chat sanitises it before drawing.
type Part struct {
	Kind PartKind
	// JSON is the data of a PartData, as JSON (any formatting; the chat indents it).
	JSON []byte
	// Name and MediaType are the part's filename and mediaType as sent; either may be empty.
	Name, MediaType string
	// Data holds an inline file's bytes (nil for a file by URL); /save writes them.
	Data []byte
	// URL is a file by reference; it is shown, never fetched.
	URL string
	// Note says why a stored file's bytes are not here (too big to keep), shown in
	// place of its size.
	Note string
}

// Header is the state shown at the top of the screen.
type Header struct {
	// BrandName is the Agent Card's name; BrandDomain is the host the card came from.
	BrandName, BrandDomain string
	// NameWarnings are pact's warnings about the name (it mixes scripts
	// within a word, or looks like a Brand the User accepted on another
	// origin: conversation.NameWarnings); the header flags the name.
	NameWarnings []string
	// Signature is "signed by DOMAIN ✓" when the card's signature verified against the
	// Brand's own keys (A2A §8.4), "unsigned" otherwise; "" shows nothing.
	Signature string
	// Provider names the Provider, shown after "via": the card's provider.organization
	// and/or the registered Provider URL (§3.1).
	Provider string
	// KID is the key id of the signing key in use (§3.2); shown shortened to 8 characters.
	KID string
	// Sub is the pairwise sub sent to this Provider (§3.2); shown shortened.
	Sub string
	// Scopes are the delegation scopes currently granted (§5.4); nil with no delegation.
	Scopes []string
	// ExpiresAt is the delegation token's exp. The zero time means identity only (§3).
	ExpiresAt time.Time
	// DelegationLost is set, with ExpiresAt zero, when the stored delegation stopped working
	// (the Provider refused it and it could not be renewed): the chat continues with
	// identity only and the header says so until a /login succeeds.
	DelegationLost bool
}

// Scope is one delegation scope of a Brand (§5.2).
type Scope struct {
	// ID is the scope id as listed on the card, e.g. "orders:cancel".
	ID string
	// Description is the card's description, shown verbatim.
	Description string
}

// StepUp is the Provider's request for more scopes: a TASK_STATE_AUTH_REQUIRED task (§5.5).
type StepUp struct {
	// Text is the task's status message text ("I need permission to issue refunds.").
	Text string
	// MissingScopes are the ids from pact.missingScopes with their card descriptions.
	MissingScopes []Scope
}

// DeviceCode is what the User needs to approve a device authorization (§5.3, RFC 8628).
// It never holds the device_code itself, which is a secret.
type DeviceCode struct {
	// UserCode is the RFC 8628 user_code, e.g. "WDJB-MJHT".
	UserCode string
	// VerificationURIComplete is the Brand's login link to show (and open).
	VerificationURIComplete string
	// ExpiresAt is when the code expires (now + expires_in).
	ExpiresAt time.Time
	// BrowserOpened tells whether a browser was started on the link; BrowserErr says why
	// not.
	BrowserOpened bool
	BrowserErr    error
	// BrowserExit, when not nil, receives once how the browser program started on the link
	// ended: nil, or why it failed (e.g. "xdg-open exited with status 3"). The login panel
	// then says so instead of claiming the link is open.
	BrowserExit <-chan error
}

// Reply is the outcome of one Send or Resend.
type Reply struct {
	// Turns are the new turns to show after the User's message, oldest first: the agent's
	// reply and any notices. The User's own message is added by the chat, not by the Backend.
	Turns []Turn
	// StepUp is set when the Provider answered with a step-up task (§5.5) instead of a reply.
	StepUp *StepUp
	// PACT 1.0 replies carry no "conversation ended" signal (§4.2): a conversation the
	// Brand's agent ended is found closed only when the next message gets
	// UNSUPPORTED_OPERATION, which Send reports as ErrContextClosed.
}

// ErrContextClosed is wrapped by the error Send returns when the Provider closed the
// conversation (UNSUPPORTED_OPERATION on a known contextId, §4.2). The chat then asks the
// User before starting a new conversation and sending the message again; unless the error
// also wraps ErrSentUnanswered (the message may have reached the Brand before): then it
// says so and sends nothing again.
var ErrContextClosed = errors.New("the Brand closed this conversation")

// ErrContextUnknown is wrapped by the error Send returns when the Provider no longer knows
// the conversation (it restarted, or the conversation expired). The chat offers to start a
// new conversation and send the message again.
var ErrContextUnknown = errors.New("the Brand no longer knows this conversation")

// ErrDelegationLost is wrapped by the error Send returns when the stored delegation can no
// longer be used or renewed. The Backend has dropped to identity only (Header reports
// DelegationLost); the chat says so in one line and keeps the message for a new try.
var ErrDelegationLost = errors.New("the delegation stopped working")

// ErrSentUnanswered is wrapped by the error Send returns when the message may have reached
// the Brand (a network failure, a timeout, a 5xx, or a retry of a message sent before): it
// stays on record as sent and unanswered, never a draft or a new message; Enter asks for
// its answer again under the same messageId (§4.3).
var ErrSentUnanswered = errors.New("the message may have reached the Brand")

// Drafts is implemented by a Backend that keeps what the User had not sent when the chat
// was left: the input and the queued messages, in order. The chat loads them when it opens
// (the queue held until Enter) and saves them when it ends, however it ends (Ctrl+C, /quit,
// a terminating signal).
type Drafts interface {
	LoadDraft() (input string, queue []string)
	SaveDraft(input string, queue []string) error
}

// Abandoner is implemented by a Backend that keeps the record of the messages sent: the
// chat tells it when the User replaces (edits, replaced is true) or removes a message that
// was sent and left unanswered (Unanswered): its turn, whose ID is the messageId for a
// turn of History, "" for one sent in this chat (the Backend then knows it by its text).
// The message may have been delivered; it is no longer offered to be sent again when the
// chat opens.
type Abandoner interface {
	Abandon(t Turn, replaced bool) error
}

// Backend is the conversation with one Brand, as the chat sees it.
//
// Send, Resend, Login and Logout run on their own goroutine while the other methods may be
// called from the UI goroutine, so an implementation must be safe for that; the chat never
// runs two of Send, Resend and Login at the same time.
type Backend interface {
	// Header returns the header state. It is called when the chat opens and again after
	// every reply, login and logout; it must not block on the network.
	Header() Header
	// History returns the earlier turns of the current context, oldest first.
	History() []Turn
	// Send sends one message (§4.1) in the current context and returns what to show.
	// Cancelling ctx (Esc) abandons the wait; the message may have reached the Brand.
	// A Send that repeats the text of a cancelled Send (Enter after Esc) is a retry and
	// should reuse its messageId so the Provider answers it once (§4.3).
	// The error wraps ErrContextClosed when the Provider closed the context (§4.2).
	Send(ctx context.Context, text string) (Reply, error)
	// Resend sends the last text again after a step-up was approved: same context, new
	// messageId (§5.5).
	Resend(ctx context.Context) (Reply, error)
	// NewConversation forgets the current contextId; the next Send starts a new one (§4.2).
	NewConversation() error
	// Login runs the device flow (§5.3) for scopes (ids on the card). shown is called once
	// the user_code and link are known (and the browser was tried); granted is what the
	// User approved, which may be fewer than asked. Cancelling ctx (Esc) abandons it.
	Login(ctx context.Context, scopes []string, shown func(DeviceCode)) (granted []string, err error)
	// Logout forgets the Brand's delegation token (`pact logout`).
	Logout() error
	// Card returns a short human summary of the Agent Card (several lines are fine).
	Card() string
	// Scopes returns the Brand's delegation scopes (§5.1), nil when it offers none.
	Scopes() []Scope
}
