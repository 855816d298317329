package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/pact-cli/pact/a2aclient"
	"github.com/pact-cli/pact/agent"
	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/delegation"
	"github.com/pact-cli/pact/deviceflow"
	"github.com/pact-cli/pact/discovery"
	"github.com/pact-cli/pact/doctor"
	"github.com/pact-cli/pact/httpx"
	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/receipts"
	"github.com/pact-cli/pact/secrets"
	"github.com/pact-cli/pact/serverapi"
	"github.com/pact-cli/pact/signer"
)

// Exit codes of the CLI contract (README "Exit codes").
const (
	exitOK       = 0
	exitFailure  = 1
	exitUsage    = 2
	exitAuth     = 3 // 401 on the PA JWT or the delegation token
	exitConsent  = 4 // step-up pending, access_denied, expired_token
	exitNotFound = 5 // no card, unknown Brand, TASK_NOT_FOUND, unknown kid…
	exitReceipts = 6 // receipts verify: a receipt failed
	// exitCancelled is the shell's code for a command ended by Ctrl+C
	// (128 + SIGINT).
	exitCancelled = 130
)

// exitTable maps every error kind to its exit code and --json reason: the
// first row whose matcher accepts the error wins. A new error kind is ONE
// row here (is(pkg.ErrX) for a sentinel, as(&pkg.XError{}) for a type);
// TestExitTable checks every row with its example, so a row shadowed by an
// earlier one fails the test.
//
// reason "" takes the reason the error itself carries (the A2A §6 reason,
// the OAuth error code); status is the HTTP status reported under --json
// when the error does not carry one.
var exitTable = []exitRule{
	{is(context.Canceled), exitCancelled, "CANCELLED", 0},
	{as(jqError{}), exitFailure, "JQ_ERROR", 0},
	// The message may have been delivered (§4.3): before the rows of the
	// Provider's last answer, which is not the message's fate (1).
	{as(&conversation.OutcomeUnknownError{}), exitFailure, "OUTCOME_UNKNOWN", 0},
	// Usage: bad flags, arguments, expressions (2).
	{is(profile.ErrKeyringConflict), exitUsage, "KEYRING_CONFLICT", 0}, // before usageError, which may wrap it
	{as(usageError{}), exitUsage, "USAGE", 0},
	{is(discovery.ErrBadArgument), exitUsage, "USAGE", 0},
	{is(profile.ErrInvalidInput), exitUsage, "USAGE", 0},
	{is(receipts.ErrBadID), exitUsage, "USAGE", 0},
	{is(conversation.ErrAmbiguousContext), exitUsage, "USAGE", 0},
	{is(deviceflow.ErrInvalidScope), exitUsage, "INVALID_SCOPE", 0},
	{is(deviceflow.ErrScopeNotOnCard), exitUsage, "INVALID_SCOPE", 0},
	// Authentication refused (3).
	{a2aReason(a2aclient.ReasonUnauthenticated), exitAuth, "", 0},
	{a2aReason(a2aclient.ReasonInvalidToken), exitAuth, "", 0},
	{is(deviceflow.ErrUnauthorized), exitAuth, "UNAUTHENTICATED", 401},
	{is(delegation.ErrLoginRequired), exitAuth, "LOGIN_REQUIRED", 0}, // status: the refusing response's
	// Consent needed or refused (4).
	{is(deviceflow.ErrAccessDenied), exitConsent, "ACCESS_DENIED", 0},
	{is(deviceflow.ErrExpiredToken), exitConsent, "EXPIRED_TOKEN", 0},
	{as(&agent.StepUpPending{}), exitConsent, "AUTH_REQUIRED", 0},
	// Not found (5).
	{a2aReason(a2aclient.ReasonNotFound), exitNotFound, "", 0},
	{a2aReason(a2aclient.ReasonTaskNotFound), exitNotFound, "", 0},
	{is(discovery.ErrNotFound), exitNotFound, "NOT_FOUND", 404},
	{is(httpx.ErrNoSuchHost), exitNotFound, "NO_SUCH_HOST", 0},
	{is(receipts.ErrNotFound), exitNotFound, "NOT_FOUND", 0},
	{is(conversation.ErrNoConversation), exitNotFound, "NOT_FOUND", 0},
	{is(profile.ErrNotFound), exitNotFound, "NOT_FOUND", 0},
	{is(delegation.ErrNoGrant), exitNotFound, "NO_GRANT", 0},
	// No Provider registration for the Brand: not found, as the README's
	// table says (5).
	{is(conversation.ErrNotRegistered), exitNotFound, "NOT_REGISTERED", 0},
	// A receipt failed verification (6).
	{is(receipts.ErrNotVerified), exitReceipts, "NOT_VERIFIED", 0},
	// Everything else (1).
	{as(&a2aclient.Error{Reason: a2aclient.ReasonInternal}), exitFailure, "", 0},
	{is(discovery.ErrInvalidCard), exitFailure, "INVALID_CARD", 0},
	{is(discovery.ErrCardChanged), exitFailure, "CARD_CHANGED", 0},
	{is(profile.ErrUntrustedEndpoint), exitFailure, "UNTRUSTED_ENDPOINT", 0},
	{is(profile.ErrActiveKey), exitFailure, "ACTIVE_KEY", 0},
	{is(errKeyNotLive), exitFailure, "KEY_NOT_LIVE", 0},
	{is(signer.ErrKeyMismatch), exitFailure, "KEY_MISMATCH", 0},       // a token's or KMS key is not the published one
	{is(signer.ErrKeyUnavailable), exitFailure, "KEY_UNAVAILABLE", 0}, // a token's or KMS key cannot sign now
	{is(profile.ErrNotInitialised), exitFailure, "NOT_INITIALISED", 0},
	{is(conversation.ErrNoDelegation), exitFailure, "NO_DELEGATION", 0},
	{is(secrets.ErrUnavailable), exitFailure, "KEYRING_UNAVAILABLE", 0},
	{is(secrets.ErrTooLarge), exitFailure, "TOO_LARGE", 0},
	{as(&deviceflow.OAuthError{Code: "slow_down"}), exitFailure, "", 0},
	{as(&httpx.RedirectError{}), exitFailure, "REDIRECT", 0},
	{as(&httpx.NetError{}), exitFailure, "NETWORK", 0},
	{as(&httpx.ErrBodyTooLarge{}), exitFailure, "TOO_LARGE", 0},
	{is(httpx.ErrInsecureURL), exitFailure, "INSECURE_URL", 0},
	// A pact server's answers to this device (pact serve): by their reason.
	{serverReason(serverapi.ReasonUnauthenticated), exitAuth, "", 0},
	{serverReason(serverapi.ReasonCodeRefused), exitAuth, "", 0},
	{serverReason(serverapi.ReasonNotFound), exitNotFound, "", 0},
	{serverReason(serverapi.ReasonUsage), exitUsage, "", 0},
	{as(&serverapi.APIError{}), exitFailure, "", 0},
}

// serverReason matches a pact server's *serverapi.APIError with reason.
func serverReason(reason string) matcher {
	return matcher{func(err error) bool {
		var e *serverapi.APIError
		return errors.As(err, &e) && e.Reason == reason
	}, &serverapi.APIError{Reason: reason}}
}

// exitRule is one row of exitTable.
type exitRule struct {
	when   matcher
	code   int
	reason string // "" = carried by the error (see carriedReason)
	status int    // HTTP status when the error carries none
}

// matcher recognises one error kind; example is an error of that kind, for
// TestExitTable.
type matcher struct {
	match   func(error) bool
	example error
}

// is matches errors that are (or wrap) the sentinel target.
func is(target error) matcher {
	return matcher{func(err error) bool { return errors.Is(err, target) }, target}
}

// as matches errors of example's type (anywhere in the chain).
func as[T error](example T) matcher {
	return matcher{func(err error) bool { var t T; return errors.As(err, &t) }, example}
}

// a2aReason matches an *a2aclient.Error with the given reason.
func a2aReason(reason string) matcher {
	return matcher{func(err error) bool {
		var ae *a2aclient.Error
		return errors.As(err, &ae) && ae.Reason == reason
	}, &a2aclient.Error{Reason: reason}}
}

// carriedReason is the reason and HTTP status an error carries itself.
func carriedReason(err error) (string, int) {
	var lr *delegation.LoginRequiredError
	if errors.As(err, &lr) {
		return "LOGIN_REQUIRED", lr.HTTPStatus
	}
	var ae *a2aclient.Error
	if errors.As(err, &ae) {
		return ae.Reason, ae.HTTPStatus
	}
	var se *serverapi.APIError
	if errors.As(err, &se) {
		return se.Reason, se.HTTPStatus
	}
	var oe *deviceflow.OAuthError
	if errors.As(err, &oe) {
		return oe.Reason(), oe.StatusCode // the response's status (400 for access_denied)
	}
	var rs responseStatus
	if errors.As(err, &rs) {
		return "ERROR", rs.ResponseStatus() // e.g. an HTML page served 200 where a card should be
	}
	return "ERROR", 0
}

// responseStatus is an error about an HTTP response that says its status
// (discovery.InvalidCardError, discovery.StatusError).
type responseStatus interface{ ResponseStatus() int }

// classify maps an error to its exit code, --json reason and HTTP status
// through exitTable; an error no row knows is a failure (1, "ERROR").
func classify(err error) (code int, reason string, status int) {
	for _, r := range exitTable {
		if !r.when.match(err) {
			continue
		}
		carried, carriedStatus := carriedReason(err)
		reason, status = r.reason, r.status
		if reason == "" {
			reason = carried
		}
		if carriedStatus != 0 {
			status = carriedStatus
		}
		return r.code, reason, status
	}
	return exitFailure, "ERROR", 0
}

// explained shows msg to the User while classifying as err (a sentinel of
// exitTable): a command's own wording for a table kind.
type explained struct {
	msg string
	err error
}

func (e explained) Error() string { return e.msg }
func (e explained) Unwrap() error { return e.err }

// keyringError is an OS keyring that does not answer, in the plain words
// and with the fix doctor gives; the backend's own error is its detail
// (shown under --debug, and in brackets under --json).
type keyringError struct {
	msg   string
	cause error
}

func (e keyringError) Error() string  { return e.msg }
func (e keyringError) Unwrap() error  { return e.cause }
func (e keyringError) Detail() string { return e.cause.Error() }

func (a *app) keyringError(err error) error {
	var ke keyringError
	if errors.As(err, &ke) {
		return err
	}
	summary, fix := doctor.KeyringUnavailable(&profile.Profile{Name: a.profile, Dirs: a.dirs()}, a.initFlags...)
	return keyringError{msg: summary + "; " + fix, cause: err}
}

// silentError has already been reported (e.g. a --json document on stdout)
// and only carries the exit code.
type silentError struct{ code int }

func (silentError) Error() string { return "" }

// report prints err (as JSON on stdout under --json, else on stderr) and
// returns the exit code.
func (a *app) report(err error) int {
	var se silentError
	if errors.As(err, &se) {
		return se.code
	}
	code, reason, status := classify(err)
	if reason == "KEYRING_UNAVAILABLE" {
		err = a.keyringError(err)
	}
	if reason == "CANCELLED" {
		err = errors.New("cancelled (interrupted); nothing more was done")
	}
	var je jqError
	if a.json && !errors.As(err, &je) {
		body := map[string]any{"error": errorDetails(map[string]any{"reason": reason, "message": jsonMessage(err), "httpStatus": status}, err)}
		// Under --jq the envelope goes through the expression too, so
		// `--jq '.error.reason // .contextId'` reads both outcomes.
		var filtered bytes.Buffer
		if a.jq == nil || a.writeJQ(&filtered, body, a.io.IsStdoutTTY() && !a.jsonLines) != nil {
			enc := json.NewEncoder(a.io.Out)
			if !a.jsonLines {
				enc.SetIndent("", "  ")
			}
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
