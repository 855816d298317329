package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pact-cli/pact/discovery"
)

// detailer is an error that carries wire detail (protocol reason, HTTP
// status, the server's own message, the request) next to its plain-words
// Error(): a2aclient.Error, conversation.StaleContextError,
// deviceflow.OAuthError, httpx.NetError, discovery.StatusError, ...
type detailer interface{ Detail() string }

// errDetail is the wire detail of the outermost error in err's chain that
// has one, or "".
func errDetail(err error) string {
	var d detailer
	if errors.As(err, &d) {
		return d.Detail()
	}
	return ""
}

// jsonMessage is the "message" of a --json error envelope: the plain words,
// then the wire detail in brackets (scripts and bug reports keep it).
func jsonMessage(err error) string {
	msg := err.Error()
	var cc *discovery.CardChangedError
	if errors.As(err, &cc) {
		// Its Error() carries an aligned old/new table for people; the
		// JSON has them as "old" and "new": the message is one sentence.
		first, _, _ := strings.Cut(msg, "\n")
		msg = fmt.Sprintf("%s; if the Brand really changed this, accept exactly this card with `%s`",
			strings.TrimSuffix(strings.TrimSpace(first), "."), cc.TrustCommand())
	}
	if d := errDetail(err); d != "" && !strings.Contains(msg, d) {
		msg += " [" + d + "]"
	}
	return msg
}

// humanError is the text of a human "error:" line: plain words only, and
// the wire detail on a second line under --debug.
func (a *app) humanError(err error) string {
	msg := safe(err.Error())
	if a.debug {
		if d := errDetail(err); d != "" {
			msg += "\n  detail: " + safe(d)
		}
	}
	return msg
}
