package agent

import (
	"context"
	"time"

	"github.com/pact-cli/pact/delegation"
)

// Login is the device flow (PACT §5.3, RFC 8628) on c for every
// front-end: c.StartLogin asks the Brand's authorization server for a
// device authorization, shown is told what the User is to see (the
// user_code and the verification_uri_complete to open in the User's own
// browser; pact never fetches the login page), then c.PollLogin is asked,
// at the pace it gives, until the User approves, refuses or the code
// expires. The grant's Scopes are what the User approved, which may be
// fewer than asked. Errors: ctx's, StartLogin's and PollLogin's
// (deviceflow.ErrAccessDenied and ErrExpiredToken are consent outcomes).
func Login(ctx context.Context, c Conversation, scopes []string, shown func(*LoginStart)) (*delegation.Grant, error) {
	start, err := c.StartLogin(ctx, scopes)
	if err != nil {
		return nil, err
	}
	if shown != nil {
		shown(start)
	}
	wait := start.Wait
	for {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		p, err := c.PollLogin(ctx, start.ID)
		if err != nil {
			return nil, err
		}
		if p.Grant != nil {
			return p.Grant, nil
		}
		wait = max(p.Wait, minPollWait)
	}
}

// minPollWait is the least Login waits between two polls, whatever the
// answer says (a server's answer of 0 is no reason to spin).
const minPollWait = 200 * time.Millisecond
