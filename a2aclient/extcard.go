package a2aclient

import (
	"context"
	"net/http"
	"strings"

	"github.com/pact-cli/pact/httpx"
)

// ExtendedCard GETs {req.InterfaceURL}/extendedAgentCard (A2A 1.0
// GetExtendedAgentCard, HTTP+JSON) with a fresh PA JWT (req.PAToken,
// minted for that URL) and, when req.Delegation gives one, the delegation
// token (X-A2A-User-Delegation, PACT §5.5); req.Message is not used. It
// returns the body of a 200 as received (at most MaxReplySize bytes): the
// caller checks it as a card (discovery.CheckExtended). It is not
// retried. Failures are *Error as for Send: UNSUPPORTED_OPERATION when the
// agent has none, UNAUTHENTICATED / INVALID_TOKEN on 401, NETWORK, …
func (c *Client) ExtendedCard(ctx context.Context, req Request) ([]byte, error) {
	target := strings.TrimRight(req.InterfaceURL, "/") + "/extendedAgentCard"
	pa, err := req.PAToken(ctx, target)
	if err != nil {
		return nil, err
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, &Error{Reason: ReasonBadReply, Message: err.Error()}
	}
	hreq.Header.Set("Accept", "application/a2a+json, application/json")
	delegated, aerr := authorize(ctx, hreq, pa, req)
	if aerr != nil {
		return nil, aerr
	}
	resp, err := c.HTTP.Do(hreq)
	if err != nil {
		return nil, transportError(err)
	}
	defer resp.Body.Close()
	data, rerr := httpx.ReadBody(resp.Body, MaxReplySize)
	if resp.StatusCode == http.StatusOK {
		if rerr != nil {
			return nil, &Error{HTTPStatus: 200, Reason: ReasonBadReply, Message: rerr.Error()}
		}
		return data, nil
	}
	e := errorFromResponse(resp, data)
	if e.Reason == ReasonInvalidToken && !delegated {
		e.Reason = ReasonUnauthenticated
	}
	return nil, e
}
