package agent

import (
	"strconv"
	"strings"

	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/delegation"
	"github.com/pact-cli/pact/deviceflow"
	"github.com/pact-cli/pact/discovery"
	"github.com/pact-cli/pact/iostreams"
)

// Scope is a scope id with the Brand's description of it, from the card's
// delegation scheme (PACT §5.2). Both are the Brand's text: front-ends
// sanitise them before showing them.
type Scope struct {
	ID          string `json:"id"`
	Description string `json:"description"`
}

// StepUp is the "needs these scopes" event: the Brand answered with a task
// in TASK_STATE_AUTH_REQUIRED (PACT §5.5). The missing scope ids are split
// by the card's delegation scheme: Scopes are the ones the card declares
// (with their descriptions), the only ones pact ever asks the User for;
// Unknown are the others, which are the Brand's text, never a permission:
// they are never asked for, shown as one, or put into a command.
type StepUp struct {
	Brand     string // the card URL
	BrandName string // the card's name (the Brand's text)
	// Text is the task's status message (the Brand's text).
	Text    string
	Scopes  []Scope
	Unknown []string
	// Result is the reply that asked for the scopes.
	Result *conversation.Result
}

// NewStepUp is res's step-up on s's card, or nil when res is no step-up.
func NewStepUp(s *conversation.Session, res *conversation.Result) *StepUp {
	if res == nil {
		return nil
	}
	su := res.StepUp()
	if su == nil {
		return nil
	}
	known, unknown := su.Check(s.Card.Delegation)
	out := &StepUp{Brand: s.Card.URL, BrandName: s.Card.Name(), Text: su.Text, Unknown: unknown, Result: res}
	for _, id := range known {
		out.Scopes = append(out.Scopes, Scope{ID: id, Description: s.Card.Delegation.Scopes[id]})
	}
	return out
}

// IDs are the ids of Scopes, in the Brand's order.
func (su *StepUp) IDs() []string {
	ids := make([]string, len(su.Scopes))
	for i, sc := range su.Scopes {
		ids[i] = sc.ID
	}
	return ids
}

// Askable reports whether the User may be asked to approve the step-up:
// the Brand named at least one scope and every one it named is on its card.
// A step-up naming an undeclared id is not asked at all (not even for the
// declared ones): the Brand's request is flawed, and the User is told so.
func (su *StepUp) Askable() bool { return len(su.Scopes) > 0 && len(su.Unknown) == 0 }

// Undeclared says, in pact's words, that the Brand asked for ids its card
// does not list and that pact does not ask for them ("" when it did not).
// The ids are quoted (strconv.Quote), so that none reads as pact's words.
func (su *StepUp) Undeclared() string {
	if len(su.Unknown) == 0 {
		return ""
	}
	q := make([]string, len(su.Unknown))
	for i, sc := range su.Unknown {
		q[i] = strconv.Quote(sc)
	}
	return "the Brand asked for permissions its card does not list (" + strings.Join(q, ", ") + "); pact does not ask for those, tell the Brand"
}

// Words says what the step-up needs in plain words, with remedy(ids) as the
// way to grant the declared scopes (e.g. the CLI's `pact login` command,
// the chat's /login, MCP's start_login), then the undeclared ids, flagged.
// With no scope named at all it says so, with none(): how to log in anyway.
func (su *StepUp) Words(remedy func(ids []string) string, none string) string {
	var parts []string
	if len(su.Scopes) > 0 {
		parts = append(parts, "the Brand needs more permission ("+strings.Join(su.IDs(), ", ")+"): "+remedy(su.IDs()))
	}
	if u := su.Undeclared(); u != "" {
		parts = append(parts, u)
	}
	if len(parts) == 0 {
		return "the Brand needs more permission but did not say which; " + none
	}
	return strings.Join(parts, "; ")
}

// LoginCommand is the CLI's remedy for Words: the `pact login` command for
// ids on brand (a card URL, named by its origin when it is the well-known
// card: discovery.BrandArg), each word shell-quoted (iostreams.CommandHint).
func LoginCommand(brand string) func(ids []string) string {
	return func(ids []string) string {
		words := []string{"pact", "login", discovery.BrandArg(brand)}
		for _, sc := range ids {
			words = append(words, "--scope", sc)
		}
		return "run `" + iostreams.CommandHint(words...) + "` and send again"
	}
}

// ChatLogin is the chats' remedy for Words (the full-screen chat and
// line-mode `pact chat`): their /login command for ids.
func ChatLogin(ids []string) string {
	return "type /login " + strings.Join(ids, " ") + " to approve, then send again"
}

// ChatNoScopes is the chats' words for Words when the Brand named no scope.
const ChatNoScopes = "type /login with the permissions you need, then send again"

// StepUpPending is a step-up the front-end left unanswered, or one the User
// may not be asked for (see StepUp.Askable): the turn ends with the reply
// that asked (StepUp.Result). The CLI exits 4 (AUTH_REQUIRED).
type StepUpPending struct{ StepUp *StepUp }

// Error is the CLI's words: the `pact login` command for the declared
// scopes, the undeclared ones flagged.
func (e *StepUpPending) Error() string {
	if e.StepUp == nil {
		return "the Brand needs more permission"
	}
	return e.StepUp.Words(LoginCommand(e.StepUp.Brand), "try `pact login` with the permissions you need, then send again")
}

// Granted is nil when g holds every scope the step-up asked for, else the
// *NotGrantedError that keeps the message from being sent again (§5.5).
func (su *StepUp) Granted(g *delegation.Grant) error {
	var held []string
	if g != nil {
		held = g.Scopes
	}
	if cmp := CompareGrant(su.IDs(), held); len(cmp.Missing) > 0 {
		return &NotGrantedError{Asked: su.IDs(), Granted: held, Missing: cmp.Missing}
	}
	return nil
}

// NotGrantedError ends a turn whose step-up login granted fewer scopes than
// the Brand asked for: the message is not sent again. It unwraps to
// deviceflow.ErrAccessDenied (a consent outcome).
type NotGrantedError struct {
	Asked   []string
	Granted []string
	Missing []string // asked and not granted
}

func (e *NotGrantedError) Error() string {
	return "the permission the Brand asked for was not granted; the message was not sent again"
}

func (e *NotGrantedError) Unwrap() error { return deviceflow.ErrAccessDenied }
