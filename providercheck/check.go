// Package providercheck is `pact provider check`: PACT 1.0 conformance of a
// Brand's Provider as a personal agent sees it, black-box, clause by clause.
//
// Each check is a small declared unit (Check: id, group, clause, what is
// sent, what must come back) run against the Brand's Provider with this
// profile's registration (§3.1). Run sends a bounded number of requests at
// a bounded rate, honours 429 Retry-After, sends nothing to any origin but
// the Brand's and its Provider's (PA JWTs only to URLs under the
// registration, profile.BoundMinter), and labels every message it sends
// "pact provider check: …" so that an operator recognises it.
//
// Checks that need a User (the device flow of §5.3 and what follows from
// it) run only when scopes are given, through the normal login: the
// caller's ShowLogin shows the link and opens the browser.
package providercheck

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Groups of checks, one per part of the spec (the values of --only).
const (
	GroupCard         = "card"         // §2.1 the Agent Card
	GroupRoutes       = "routes"       // §2.2 operations and routing
	GroupIdentity     = "identity"     // §3.2, §3.4 the personal-agent JWT
	GroupConversation = "conversation" // §4 messages, contexts, retries
	GroupDelegation   = "delegation"   // §5 delegated authority
	GroupErrors       = "errors"       // §6 errors
)

// Groups lists the groups in run order.
func Groups() []string {
	return []string{GroupCard, GroupRoutes, GroupIdentity, GroupConversation, GroupDelegation, GroupErrors}
}

// Status is a check's outcome.
type Status string

// The three outcomes: Fail is the only one that makes the run fail.
const (
	Pass Status = "pass"
	Fail Status = "fail"
	Skip Status = "skip"
)

// Check is one declared conformance check.
type Check struct {
	// ID is stable and unique, "group.name" (e.g. "identity.alg-none").
	ID string `json:"id"`
	// Group is one of Groups().
	Group string `json:"group"`
	// Clause is the spec clause checked, e.g. "§3.2" (or "RFC 8628 §3.5").
	Clause string `json:"clause"`
	// Title says what must hold, in plain words.
	Title string `json:"title"`
	// Sends is what the check sends (shown by --dry-run); "" = nothing
	// beyond what earlier checks fetched.
	Sends string `json:"sends"`
	// Expect is what must come back.
	Expect string `json:"expect"`
	// NeedsUser marks checks that run only with --scope: a User logs in.
	NeedsUser bool `json:"needsUser"`

	run func(context.Context, *runner) outcome
}

// Result is one check's outcome: what was sent, what came back, and why a
// check failed or was skipped. Every string that came from the Provider is
// sanitised for a terminal (iostreams.SanitizeLine).
type Result struct {
	ID     string `json:"id"`
	Group  string `json:"group"`
	Clause string `json:"clause"`
	Title  string `json:"title"`
	Status Status `json:"status"`
	Sent   string `json:"sent"`
	Got    string `json:"got"`
	// Reason says why the check failed or was skipped ("" on a pass).
	Reason string `json:"reason"`
}

// outcome is what a check's run function returns.
type outcome struct {
	status           Status
	sent, got, cause string
}

func pass(sent, got string) outcome { return outcome{status: Pass, sent: sent, got: got} }
func fail(sent, got, reason string, args ...any) outcome {
	return outcome{status: Fail, sent: sent, got: got, cause: fmt.Sprintf(reason, args...)}
}
func skip(reason string, args ...any) outcome {
	return outcome{status: Skip, cause: fmt.Sprintf(reason, args...)}
}

// Checks lists every check in run order.
func Checks() []Check {
	var all []Check
	all = append(all, cardChecks()...)
	all = append(all, routeChecks()...)
	all = append(all, identityChecks()...)
	all = append(all, conversationChecks()...)
	all = append(all, delegationChecks()...)
	all = append(all, errorChecks()...)
	return all
}

// Select returns the checks of the groups named (all when none are), in
// run order. An unknown group is an error naming the known ones.
func Select(groups []string) ([]Check, error) {
	for _, g := range groups {
		if !slices.Contains(Groups(), g) {
			return nil, fmt.Errorf("unknown check group %q: use one of %s", g, strings.Join(Groups(), ", "))
		}
	}
	var out []Check
	for _, c := range Checks() {
		if len(groups) == 0 || slices.Contains(groups, c.Group) {
			out = append(out, c)
		}
	}
	return out, nil
}
