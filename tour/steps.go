package tour

import (
	"github.com/pact-cli/pact/store"
)

// Step is one step of the tour as `pact --json demo` prints it: its number
// (from 1), name and spec section ("§3.1", "" for the closing step), a
// short plain note on what the step shows, the messages exchanged (role
// "user" or "agent"), the receipts received or verified (§5.6), and what
// happened as values: the members that do not apply to a step are null
// (objects) or empty (slices, contextId). Slices are never nil.
type Step struct {
	Step     int           `json:"step"`
	Name     string        `json:"name"`
	Section  string        `json:"section"`
	Notes    []string      `json:"notes"`
	Messages []StepMessage `json:"messages"`
	Receipts []StepReceipt `json:"receipts"`
	// ContextID is the conversation's contextId (§4) in the steps that
	// send messages.
	ContextID    string            `json:"contextId"`
	Identity     *StepIdentity     `json:"identity"`
	Registration *StepRegistration `json:"registration"`
	Card         *StepCard         `json:"card"`
	Token        *StepToken        `json:"token"`
	// Logins are the device-flow logins the step started (§5.3).
	Logins     []StepLogin     `json:"logins"`
	Grant      *StepGrant      `json:"grant"`
	StepUp     *StepStepUp     `json:"stepUp"`
	CardChange *StepCardChange `json:"cardChange"`
	// Commands are the commands to try next (the closing step).
	Commands []string `json:"commands"`
}

// StepIdentity is the throw-away profile's identity (§3.1).
type StepIdentity struct {
	Issuer  string `json:"issuer"`
	KID     string `json:"kid"`
	Alg     string `json:"alg"`
	JWKSURI string `json:"jwksUri"`
}

// StepRegistration is the personal agent's registration with the demo
// Provider (§3.1).
type StepRegistration struct {
	Provider string `json:"provider"`
	Issuer   string `json:"issuer"`
	Audience string `json:"audience"`
}

// StepCard is the Brand's Agent Card as discovered (§2.1): brand is the
// card URL, site the Brand's domain.
type StepCard struct {
	Brand        string   `json:"brand"`
	BrandName    string   `json:"brandName"`
	Site         string   `json:"site"`
	InterfaceURL string   `json:"interfaceUrl"`
	Signed       bool     `json:"signed"`
	KID          string   `json:"kid"`
	Alg          string   `json:"alg"`
	KeyURL       string   `json:"keyUrl"`
	Scopes       []string `json:"scopes"`
}

// StepToken describes the PA JWT of the first request (§3.2): its header
// and claims, never the token itself.
type StepToken struct {
	Alg             string `json:"alg"`
	KID             string `json:"kid"`
	Iss             string `json:"iss"`
	Sub             string `json:"sub"`
	Aud             string `json:"aud"`
	LifetimeSeconds int64  `json:"lifetimeSeconds"`
}

// StepLogin is one device-flow login (§5.3): the scopes asked for, the
// user_code and the link the User opens.
type StepLogin struct {
	Scopes   []string `json:"scopes"`
	UserCode string   `json:"userCode"`
	Link     string   `json:"link"`
}

// StepGrant is the grant after a login (§5.3).
type StepGrant struct {
	GrantID string   `json:"grantId"`
	Scopes  []string `json:"scopes"`
}

// StepStepUp is a step-up answer (§5.5): the scopes the turn lacked.
type StepStepUp struct {
	MissingScopes []string `json:"missingScopes"`
}

// StepCardChange is the card change pact caught (A2A §8.4): what was
// accepted (old), what the card says now (new) and the differences.
type StepCardChange struct {
	Changes []string  `json:"changes"`
	Old     store.Pin `json:"old"`
	New     store.Pin `json:"new"`
}

// StepMessage is one message of a Step.
type StepMessage struct {
	Role string `json:"role"`
	Text string `json:"text"`
}

// StepReceipt is one receipt of a Step: its full id (64 hex characters),
// whether it verified, and why not.
type StepReceipt struct {
	ID       string   `json:"id"`
	Verified bool     `json:"verified"`
	Problems []string `json:"problems"`
}
