package a2aclient

import (
	"context"
	"errors"
	"net/http"

	"github.com/pact-cli/pact/httpx"
)

// authorize sets PACT's headers on a request to the Provider: the PA JWT pa
// as the bearer token (PACT §3.2), `A2A-Version: 1.0`, and, when
// req.Delegation gives one, the delegation token in X-A2A-User-Delegation
// (PACT §5.5). delegated says whether a delegation token was sent; a
// failure to get one is an INVALID_TOKEN *Error and nothing is sent.
func authorize(ctx context.Context, hreq *http.Request, pa string, req Request) (delegated bool, e *Error) {
	hreq.Header.Set("Authorization", "Bearer "+pa)
	hreq.Header.Set("A2A-Version", "1.0")
	if req.Delegation == nil {
		return false, nil
	}
	tok, err := req.Delegation(ctx)
	if err != nil {
		return false, &Error{Reason: ReasonInvalidToken, Message: err.Error(), Err: err}
	}
	if tok == "" {
		return false, nil
	}
	hreq.Header.Set("X-A2A-User-Delegation", "Bearer "+tok)
	return true, nil
}

// transportError is the *Error of a request that got no answer from
// http.Client.Do: a refused redirect (httpx never follows one with a
// credential) is a verdict on the Provider's answer, REDIRECT, not retried
// and said as what it is; anything else is a NETWORK failure.
func transportError(err error) *Error {
	var refused *httpx.RedirectError
	if errors.As(err, &refused) {
		return &Error{Reason: ReasonRedirect, Err: refused}
	}
	return &Error{Reason: ReasonNetwork, Err: httpx.Describe(err)}
}
