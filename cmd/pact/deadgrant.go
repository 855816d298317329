package main

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/delegation"
)

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

// delegationDied is a send stopped because the Brand's delegation died on
// it (*delegation.LoginRequiredError: its token refused and not
// refreshable). The grant is now dead, so the next send goes identity-only
// (noteDeadGrant): the error says so, lest the next run's success look like
// chance (issue 31, item 16: after `pact demo serve` restarts, the first
// send failed "run pact login" and the next ones went). It classifies as
// the refusal it wraps (LOGIN_REQUIRED, exit 3).
type delegationDied struct {
	lr  *delegation.LoginRequiredError
	err error
}

func (e delegationDied) Unwrap() error { return e.err }

func (e delegationDied) Error() string {
	cause := ""
	if e.lr.HTTPStatus == http.StatusUnauthorized {
		cause = " The Brand may have revoked it, or its Provider forgot it (a Provider that restarted, as the demo does)."
	}
	return fmt.Sprintf("%s, and nothing was sent.%s To act on your account again, run `%s`; until then messages go with your identity only: run this command again to send it that way",
		e.lr.What(), cause, e.lr.Login())
}

// explainDeadGrant tells a send stopped by a delegation that died on it as
// delegationDied; other errors are returned as they are.
func explainDeadGrant(err error) error {
	var lr *delegation.LoginRequiredError
	if !errors.As(err, &lr) {
		return err
	}
	return delegationDied{lr: lr, err: err}
}
