package main

import "github.com/pact-cli/pact/conversation"

// noteDeadGrant tells people, in one line on stderr, that a message went
// identity-only because the Brand's delegation grant is dead. Under --json
// the result's "deadGrant" says it instead.
func (a *app) noteDeadGrant(d *conversation.DelegationStatus) {
	if d == nil || a.json {
		return
	}
	since := ""
	if d.DeadSince != nil {
		since = " since " + d.DeadSince.Local().Format(humanTime)
	}
	a.io.Eprintf("%s sent without your delegation: it is dead%s (the Brand no longer accepts it; to act on your account again, run %s)\n",
		a.io.ErrStyles().Warning.Render("!"), since, line(d.Login))
}
