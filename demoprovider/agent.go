package demoprovider

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Scope is one delegation scope of a Brand: id and the description shown to
// the User verbatim on consent (§5.2).
type Scope struct {
	ID          string
	Description string
}

// Scope ids the demo agents understand (§5.2: each Brand defines its own).
const (
	scopeOrdersRead   = "orders:read"
	scopeOrdersCancel = "orders:cancel"
	scopeRefundsIssue = "refunds:issue"
)

// demoUser is a Brand account of the demo: login name, password and the
// Brand's own user id (the delegation token's sub, §5.4).
type demoUser struct {
	username, password, userID, display string
}

// order is one row of a Brand's fixed order table.
type order struct {
	id, item, status, owner string
}

// brandDef is the static definition plus mutable order state of a Brand.
// Orders are mutated only under Server.mu.
type brandDef struct {
	id, name string
	skills   string
	scopes   []Scope
	users    []demoUser
	orders   map[string]*order
	// streaming: the card declares capabilities.streaming and
	// message:stream streams replies word by word (stream.go).
	streaming bool
	// extendedCard: the card declares capabilities.extendedAgentCard
	// (extcard.go).
	extendedCard bool
}

func newBrands() []*brandDef {
	example := &brandDef{
		id:           "01JEXAMPLECO",
		name:         "Example Co.",
		skills:       "Order status, cancellations and refunds.",
		streaming:    true,
		extendedCard: true,
		scopes: []Scope{
			{scopeOrdersRead, "Look up your orders and their status"},
			{scopeOrdersCancel, "Cancel an order that has not shipped"},
			{scopeRefundsIssue, "Issue a refund to your original payment method"},
		},
		users: []demoUser{
			{"jane", "jane-demo-pass", "jane-4471", "Jane"},
			{"omar", "omar-demo-pass", "omar-2290", "Omar"},
		},
		orders: map[string]*order{},
	}
	for _, o := range []order{
		{"A-88213", "wireless headphones", "shipped", "jane-4471"},
		{"A-10001", "running shoes", "processing", "jane-4471"},
		{"A-20002", "coffee grinder", "delivered", "jane-4471"},
		{"A-30003", "desk lamp", "processing", "omar-2290"},
	} {
		example.orders[o.id] = &o
	}
	other := &brandDef{
		id:     "01JOTHERSHOP",
		name:   "Other Shop",
		skills: "Order status.",
		scopes: []Scope{{scopeOrdersRead, "Look up your orders and their status"}},
		users: []demoUser{
			{"jane", "jane-demo-pass", "os-jane-0912", "Jane"},
			{"omar", "omar-demo-pass", "os-omar-7730", "Omar"},
		},
		orders: map[string]*order{},
	}
	for _, o := range []order{
		{"B-5501", "garden hose", "shipped", "os-jane-0912"},
		{"B-5502", "tent", "processing", "os-omar-7730"},
	} {
		other.orders[o.id] = &o
	}
	return []*brandDef{example, other}
}

func (b *brandDef) hasScope(id string) bool {
	return slices.ContainsFunc(b.scopes, func(s Scope) bool { return s.ID == id })
}

func (b *brandDef) userByName(name string) (demoUser, bool) {
	for _, u := range b.users {
		if u.username == name {
			return u, true
		}
	}
	return demoUser{}, false
}

func (b *brandDef) userByID(id string) (demoUser, bool) {
	for _, u := range b.users {
		if u.userID == id {
			return u, true
		}
	}
	return demoUser{}, false
}

// action is one tool call of a turn, as listed in a receipt (§5.6).
type action struct {
	Tool     string `json:"tool"`
	ArgsHash string `json:"argsHash,omitempty"`
}

// turn is what the agent sees of one message.
type turn struct {
	text      string
	delegated bool     // a valid delegation token came with the message (§5.5)
	user      string   // Brand user id when delegated
	scopes    []string // granted scopes when delegated
}

// outcome is what the agent decided.
type outcome struct {
	text          string
	close         bool     // the agent ends the conversation (§4.2)
	missingScopes []string // step-up needed (§5.5)
	scopesUsed    []string
	actions       []action
}

var (
	// Compiled on first use, not at package init: every pact process pays for
	// package init (issue 21).
	orderRe  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\b([a-z]-\d{4,5})\b`) })
	byeRe    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\b(good)?bye\b`) })
	ordersRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\borders\b`) })
)

// argsHash is base64url(SHA-256(canonical JSON of the tool arguments)).
func argsHash(orderID string) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf(`{"orderId":%q}`, orderID)))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

func statusPhrase(s string) string {
	switch s {
	case "shipped":
		return "has shipped and is on its way"
	case "processing":
		return "is being processed and has not shipped yet"
	case "delivered":
		return "was delivered"
	case "cancelled":
		return "was cancelled"
	case "refunded":
		return "was delivered and refunded"
	}
	return "is " + s
}

// respond runs the Brand's deterministic agent for one turn. It must be
// called with Server.mu held (it may change order state).
func (b *brandDef) respond(t turn) outcome {
	text := strings.TrimSpace(t.text)
	lower := strings.ToLower(text)
	orderID := ""
	if m := orderRe().FindStringSubmatch(text); m != nil {
		orderID = strings.ToUpper(m[1])
	}
	switch {
	case byeRe().MatchString(lower):
		// "Example Co." ends with its own period: no "Co.." (one per sentence).
		return outcome{text: fmt.Sprintf("Thanks for contacting %s. Goodbye!", strings.TrimSuffix(b.name, ".")), close: true}
	case strings.Contains(lower, "markdown"):
		return outcome{text: b.markdownHelp()}
	case strings.Contains(lower, "cancel"):
		return b.account(t, scopeOrdersCancel, orderID, "cancel")
	case strings.Contains(lower, "refund"):
		return b.account(t, scopeRefundsIssue, orderID, "refund")
	case orderID != "":
		if t.delegated {
			return b.account(t, scopeOrdersRead, orderID, "status")
		}
		o, ok := b.orders[orderID]
		if !ok {
			return outcome{text: fmt.Sprintf("I couldn't find order %s. Please check the number and try again.", orderID)}
		}
		return outcome{text: fmt.Sprintf("Order %s (%s) %s.", o.id, o.item, statusPhrase(o.status))}
	case ordersRe().MatchString(lower):
		if t.delegated {
			return b.account(t, scopeOrdersRead, "", "list")
		}
		return outcome{text: "I can check an order for you. What is your order number?"}
	}
	greet := fmt.Sprintf("Hello! This is %s support.", b.name)
	if t.delegated {
		if u, ok := b.userByID(t.user); ok {
			greet = fmt.Sprintf("Hello %s! This is %s support.", u.display, b.name)
		}
	}
	return outcome{text: greet + " What is your order number?"}
}

// account handles a turn that acts on the User's Brand account: it needs a
// delegation token carrying scope (§5.5).
func (b *brandDef) account(t turn, scope, orderID, verb string) outcome {
	if !b.hasScope(scope) {
		return outcome{text: fmt.Sprintf("Sorry, I can't %s orders in this chat.", verb)}
	}
	if !t.delegated {
		return outcome{text: fmt.Sprintf("To %s orders on your account I need your permission (%s). Ask your assistant to connect your %s account.", verbPhrase(verb), scope, b.name)}
	}
	if !slices.Contains(t.scopes, scope) {
		return outcome{
			text:          fmt.Sprintf("I need your permission to %s (%s).", scopePhrase(scope), scope),
			missingScopes: []string{scope},
		}
	}
	used := []string{scope}
	if verb == "list" {
		var lines []string
		for _, id := range sortedOrderIDs(b.orders) {
			if o := b.orders[id]; o.owner == t.user {
				lines = append(lines, fmt.Sprintf("%s (%s) %s", o.id, o.item, statusPhrase(o.status)))
			}
		}
		out := outcome{scopesUsed: used, actions: []action{{Tool: "lookup_orders"}}}
		if len(lines) == 0 {
			out.text = "You have no orders with us."
		} else {
			out.text = "Your orders: " + strings.Join(lines, "; ") + "."
		}
		return out
	}
	if orderID == "" {
		return outcome{text: fmt.Sprintf("Which order would you like to %s? Please give me the order number.", verbPhrase(verb))}
	}
	o, ok := b.orders[orderID]
	if !ok || o.owner != t.user {
		return outcome{text: fmt.Sprintf("I couldn't find order %s on your account.", orderID), scopesUsed: used,
			actions: []action{{Tool: "lookup_order", ArgsHash: argsHash(orderID)}}}
	}
	switch verb {
	case "status":
		return outcome{text: fmt.Sprintf("Order %s (%s) %s.", o.id, o.item, statusPhrase(o.status)), scopesUsed: used,
			actions: []action{{Tool: "lookup_order", ArgsHash: argsHash(orderID)}}}
	case "cancel":
		acts := []action{{Tool: "cancel_order", ArgsHash: argsHash(orderID)}}
		if o.status != "processing" {
			return outcome{text: fmt.Sprintf("Order %s %s, so it can't be cancelled.", o.id, statusPhrase(o.status)), scopesUsed: used, actions: acts}
		}
		o.status = "cancelled"
		return outcome{text: fmt.Sprintf("Order %s is cancelled. You won't be charged.", o.id), scopesUsed: used, actions: acts}
	default: // refund
		acts := []action{{Tool: "issue_refund", ArgsHash: argsHash(orderID)}}
		if o.status != "delivered" {
			return outcome{text: fmt.Sprintf("Order %s %s, so it can't be refunded.", o.id, statusPhrase(o.status)), scopesUsed: used, actions: acts}
		}
		o.status = "refunded"
		return outcome{text: fmt.Sprintf("Order %s is refunded to your original payment method. It posts in 3-5 days.", o.id), scopesUsed: used, actions: acts}
	}
}

func verbPhrase(verb string) string {
	switch verb {
	case "list", "status":
		return "look up"
	}
	return verb
}

func scopePhrase(scope string) string {
	switch scope {
	case scopeOrdersRead:
		return "look up your orders"
	case scopeOrdersCancel:
		return "cancel orders"
	case scopeRefundsIssue:
		return "issue refunds"
	}
	return "do that"
}

func sortedOrderIDs(m map[string]*order) []string {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
