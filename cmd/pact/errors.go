package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/pact-cli/pact/a2aclient"
	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/delegation"
	"github.com/pact-cli/pact/discovery"
	"github.com/pact-cli/pact/httpx"
	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/secrets"
)

// Exit codes of the CLI contract.
const (
	exitOK       = 0
	exitFailure  = 1
	exitUsage    = 2
	exitAuth     = 3 // 401 on the PA JWT or the delegation token
	exitConsent  = 4 // step-up pending, access_denied, expired_token
	exitNotFound = 5 // no card, unknown Brand, TASK_NOT_FOUND
	exitReceipts = 6 // receipts verify: a receipt failed
	// exitCancelled is the shell's code for a command ended by Ctrl+C
	// (128 + SIGINT).
	exitCancelled = 130
)

// codedError carries an explicit exit code and --json reason.
type codedError struct {
	code   int
	reason string
	err    error
}

func (e *codedError) Error() string { return e.err.Error() }
func (e *codedError) Unwrap() error { return e.err }

// silentError has already been reported (e.g. a --json document on stdout).
type silentError struct{ code int }

func (silentError) Error() string { return "" }

// classify maps an error to its exit code, --json reason and HTTP status.
func classify(err error) (code int, reason string, status int) {
	var ce *codedError
	if errors.As(err, &ce) {
		return ce.code, ce.reason, 0
	}
	if errors.Is(err, context.Canceled) {
		return exitCancelled, "CANCELLED", 0
	}
	var ae *a2aclient.Error
	if errors.As(err, &ae) {
		code = exitFailure
		switch ae.Reason {
		case a2aclient.ReasonUnauthenticated, a2aclient.ReasonInvalidToken:
			code = exitAuth
		case a2aclient.ReasonNotFound, a2aclient.ReasonTaskNotFound:
			code = exitNotFound
		}
		return code, ae.Reason, ae.HTTPStatus
	}
	var ue usageError
	switch {
	case errors.Is(err, profile.ErrKeyringConflict):
		return exitUsage, "KEYRING_CONFLICT", 0
	case errors.As(err, &ue), errors.Is(err, discovery.ErrBadArgument), errors.Is(err, profile.ErrInvalidInput):
		return exitUsage, "USAGE", 0
	case errors.Is(err, discovery.ErrNotFound):
		return exitNotFound, "NOT_FOUND", 404
	case errors.Is(err, profile.ErrUntrustedEndpoint):
		return exitFailure, "UNTRUSTED_ENDPOINT", 0
	case errors.Is(err, discovery.ErrInvalidCard):
		return exitFailure, "INVALID_CARD", 0
	case errors.Is(err, discovery.ErrCardChanged):
		return exitFailure, "CARD_CHANGED", 0
	case errors.Is(err, profile.ErrNotInitialised):
		return exitFailure, "NOT_INITIALISED", 0
	case errors.Is(err, conversation.ErrNotRegistered):
		return exitFailure, "NOT_REGISTERED", 0
	case errors.Is(err, secrets.ErrUnavailable):
		return exitFailure, "KEYRING_UNAVAILABLE", 0
	}
	var lr *delegation.LoginRequiredError
	if errors.As(err, &lr) {
		return exitAuth, "LOGIN_REQUIRED", lr.HTTPStatus
	}
	var closed *conversation.ClosedError
	if errors.As(err, &closed) {
		return exitFailure, a2aclient.ReasonUnsupportedOperation, 400
	}
	if code, reason, ok := classifyDelegation(err); ok {
		return code, reason, 0
	}
	var (
		re *httpx.RedirectError
		ne *httpx.NetError
		tl *httpx.ErrBodyTooLarge
	)
	switch {
	case errors.As(err, &re):
		return exitFailure, "REDIRECT", 0
	case errors.Is(err, httpx.ErrNoSuchHost):
		return exitNotFound, "NO_SUCH_HOST", 0
	case errors.As(err, &ne):
		return exitFailure, "NETWORK", 0
	case errors.As(err, &tl):
		return exitFailure, "TOO_LARGE", 0
	case errors.Is(err, httpx.ErrInsecureURL):
		return exitFailure, "INSECURE_URL", 0
	}
	return exitFailure, "ERROR", 0
}

// report prints err (as JSON on stdout under --json, else on stderr) and
// returns the exit code.
func (a *app) report(err error) int {
	var se silentError
	if errors.As(err, &se) {
		return se.code
	}
	code, reason, status := classify(err)
	if reason == "CANCELLED" {
		err = errors.New("cancelled (interrupted); nothing more was done")
	}
	var je jqError
	if a.json && !errors.As(err, &je) {
		body := map[string]any{"error": errorDetails(map[string]any{"reason": reason, "message": jsonMessage(err), "httpStatus": status}, err)}
		// Under --jq the envelope goes through the expression too, so
		// `--jq '.error.reason // .contextId'` reads both outcomes.
		var filtered bytes.Buffer
		if a.jq == nil || a.writeJQ(&filtered, body, a.io.IsStdoutTTY()) != nil {
			enc := json.NewEncoder(a.io.Out)
			enc.SetIndent("", "  ")
			enc.Encode(body)
		} else if strings.TrimSpace(filtered.String()) != "null" {
			// An expression written for the success shape yields null
			// on the error envelope: print nothing rather than "null".
			a.io.Out.Write(filtered.Bytes())
		}
		if a.jq != nil {
			// The expression may have filtered the envelope away: people
			// still see what went wrong.
			a.io.Eprintf("%s %s\n", a.io.ErrStyles().Error.Render("error:"), safe(err.Error()))
		}
		return code
	}
	st := a.io.ErrStyles()
	a.io.Eprintf("%s %s\n", st.Error.Render("error:"), a.humanError(err))
	return code
}
