// Package agenttest holds examples of what crosses the agent interface,
// for the tests of its wire forms (agent.EncodeError, DecodeError) here
// and in the front-ends (cmd/pact checks that an error that crossed the
// wire gives the same exit code, --json reason and message).
package agenttest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"syscall"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pact-cli/pact/a2aclient"
	"github.com/pact-cli/pact/agent"
	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/delegation"
	"github.com/pact-cli/pact/deviceflow"
	"github.com/pact-cli/pact/discovery"
	"github.com/pact-cli/pact/errs"
	"github.com/pact-cli/pact/httpx"
	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/receipts"
	"github.com/pact-cli/pact/signer"
	"github.com/pact-cli/pact/signer/keyplugin"
	"github.com/pact-cli/pact/store"
)

// Named is an example error and what it stands for.
type Named struct {
	Name string
	Err  error
}

// StepUpResult is a reply in TASK_STATE_AUTH_REQUIRED asking for
// orders:cancel and an id no card lists, as the agent returns it.
func StepUpResult() *conversation.Result {
	task := &a2a.Task{ID: "t-1", ContextID: "ctx-1", Metadata: map[string]any{"pact.missingScopes": []any{"orders:cancel", "orders:read$(id)"}},
		Status: a2a.TaskStatus{State: a2a.TaskStateAuthRequired, Message: a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("I need more permission"))}}
	return Result(map[string]any{"task": task}, "m-1")
}

// ReplyResult is a message reply with text, a data part and a verified
// receipt, sent while the Brand's grant is dead.
func ReplyResult() *conversation.Result {
	m := a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("Order A-10001 is cancelled."),
		a2a.NewDataPart(map[string]any{"order": "A-10001", "refund": 9007199254740993}))
	m.ContextID = "ctx-1"
	res := Result(map[string]any{"message": m}, "m-2")
	since := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	res.Receipt = &conversation.ReceiptStatus{ID: "ab12cd34", Verified: true}
	res.DeadGrant = &conversation.DelegationStatus{State: conversation.DelegationDead, Brand: res.Brand, BrandName: res.BrandName,
		Scopes: []string{"orders:read"}, DeadSince: &since, Login: "pact login shop.example --scope orders:read"}
	res.Streamed = true
	return res
}

// Result is the Result of the A2A response body env, as
// conversation.Session.SendStream builds it.
func Result(env map[string]any, messageID string) *conversation.Result {
	raw, err := json.Marshal(env)
	if err != nil {
		panic(err)
	}
	resp, err := a2aclient.ParseReply(raw)
	if err != nil {
		panic(err)
	}
	res := &conversation.Result{Brand: "https://shop.example/.well-known/agent-card.json", BrandName: "Shop", InterfaceURL: "https://prov.example/a2a/shop",
		MessageID: messageID, Reply: resp.Raw, Message: resp.Message, Task: resp.Task}
	switch {
	case resp.Message != nil:
		res.ContextID = resp.Message.ContextID
	case resp.Task != nil:
		res.ContextID = resp.Task.ContextID
	}
	return res
}

// Errors are examples of every typed error that crosses the agent
// interface with its members (agent.ErrorKinds), with the causes they come
// with, and of errors that cross as words and sentinels.
func Errors() []Named {
	pin := func(iface, key string) store.Pin {
		return store.Pin{Brand: "https://shop.example/.well-known/agent-card.json", ProviderOrigin: "https://prov.example",
			InterfaceURL: iface, KeyThumbprint: key, PinnedAt: time.Date(2026, 4, 1, 12, 0, 0, 0, time.UTC)}
	}
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	timeout := &net.DNSError{Err: "i/o timeout", Name: "prov.example", IsTimeout: true}
	step := agent.NewStepUp(&discovery.Card{URL: "https://shop.example/.well-known/agent-card.json",
		Delegation: &discovery.Delegation{Scopes: map[string]string{"orders:cancel": "Cancel an order"}}}, StepUpResult())
	invalidParams := &a2aclient.Error{HTTPStatus: 400, Reason: a2aclient.ReasonInvalidParams, Status: "INVALID_ARGUMENT",
		Message: "Unknown contextId ctx-9", Metadata: map[string]string{"contextId": "ctx-9"}, Fields: []string{"message.contextId"}, Attempts: 1}
	return []Named{
		{"step-up pending", &agent.StepUpPending{StepUp: step}},
		{"not granted", &agent.NotGrantedError{Asked: []string{"orders:cancel"}, Granted: []string{"orders:read"}, Missing: []string{"orders:cancel"}}},
		{"card change not accepted", &agent.NotAcceptedError{Brand: "shop.example"}},
		{"no delegation to log out", &agent.NoDelegationError{Brand: "shop.example"}},
		{"closed conversation", &conversation.ClosedError{ContextID: "ctx-1", Err: &a2aclient.Error{HTTPStatus: 400, Reason: a2aclient.ReasonUnsupportedOperation,
			Status: "FAILED_PRECONDITION", Message: "This conversation is closed", Attempts: 1}}},
		{"stale context", &conversation.StaleContextError{ContextID: "ctx-9", Resent: true, Err: invalidParams}},
		{"outcome unknown, connection refused", &conversation.OutcomeUnknownError{MessageID: "m-1", ContextID: "ctx-1", Err: &a2aclient.Error{
			Reason: a2aclient.ReasonNetwork, Attempts: 4, Earlier: true,
			Err: &httpx.NetError{Msg: "nothing is listening at prov.example", Err: &url.Error{Op: "Post", URL: "https://prov.example/a2a/shop/message:send", Err: refused}}}}},
		{"outcome unknown, closed", &conversation.OutcomeUnknownError{MessageID: "m-1", ContextID: "ctx-1", Received: true, Closed: true,
			Err: &a2aclient.Error{HTTPStatus: 400, Reason: a2aclient.ReasonUnsupportedOperation, Message: "closed"}}},
		{"reply not saved", &conversation.SaveError{Err: fmt.Errorf("writing the conversation: %w", errors.New("disk full"))}},
		{"context mismatch", &conversation.ContextMismatchError{Want: "ctx-1", Got: "ctx-2"}},
		{"delegation dead", &delegation.LoginRequiredError{Brand: "https://shop.example/.well-known/agent-card.json", InterfaceURL: "https://prov.example/a2a/shop",
			Reason: "the Brand refused it", Scopes: []string{"orders:read", "orders:cancel"}, HTTPStatus: 401, BrandName: "Shop", Arg: "shop.example"}},
		{"card changed", &discovery.CardChangedError{Brand: "shop.example", Old: pin("https://prov.example/a2a/shop", "k1"),
			New: pin("https://evil.example/a2a", "k2"), Changes: []string{"interface", "signing key"}, Expected: "ab12-cd34"}},
		{"invalid card", &discovery.InvalidCardError{URL: "https://shop.example/.well-known/agent-card.json", FinalURL: "https://shop.example/card.json",
			Raw: json.RawMessage(`{"name":"Shop"}`), Reason: "no usable supportedInterfaces entry", Signature: &discovery.Signature{Verified: false, Problems: []string{"bad"}}}},
		{"card not found", fmt.Errorf("%w: %w", discovery.ErrNotFound, &discovery.StatusError{URL: "https://shop.example/.well-known/agent-card.json", StatusCode: 404})},
		{"access denied", &deviceflow.OAuthError{StatusCode: 400, Code: "access_denied", Description: "The User said no"}},
		{"slow down", &deviceflow.OAuthError{StatusCode: 400, Code: "slow_down"}},
		{"redirect refused", &httpx.RedirectError{URL: "https://elsewhere.example/", Reason: "a credentialed request is never redirected", Credentialed: true}},
		{"body too large", fmt.Errorf("reading the card: %w", &httpx.ErrBodyTooLarge{Limit: 1 << 20})},
		{"network timeout", &a2aclient.Error{Reason: a2aclient.ReasonNetwork, Attempts: 4,
			Err: &httpx.NetError{Msg: "prov.example did not answer in time", Err: timeout}}},
		{"pa jwt refused", &a2aclient.Error{HTTPStatus: 401, Reason: a2aclient.ReasonUnauthenticated, WWWAuthenticate: `Bearer error="invalid_token"`, ClockOffset: 2 * time.Minute}},
		{"rate limited", &a2aclient.Error{HTTPStatus: 429, Reason: a2aclient.ReasonRateLimited, RetryAfter: 90 * time.Second}},
		{"invalid token, two kinds", fmt.Errorf("%w: %w", delegation.ErrInvalidToken, &a2aclient.Error{HTTPStatus: 401, Reason: a2aclient.ReasonInvalidToken})},
		{"not registered", fmt.Errorf("%w: Shop (interface https://prov.example/a2a/shop) is served by a Provider this profile is not registered with", conversation.ErrNotRegistered)},
		{"no conversation", fmt.Errorf("%w: %q (see `pact conversations`)", conversation.ErrNoConversation, "ctx-x")},
		{"receipt not found", errs.New(`no receipt "abcd" in the archive`, receipts.ErrNotFound)},
		{"no archive", agent.ErrNoArchive},
		{"no login", agent.ErrNoLogin},
		{"new and context", agent.ErrNewAndContext},
		{"not initialised", profile.ErrNotInitialised},
		{"untrusted endpoint", fmt.Errorf("the token endpoint: %w", profile.ErrUntrustedEndpoint)},
		{"unauthorized at the AS", &deviceflow.UnauthorizedError{ClockOffset: time.Minute, Hint: "your clock is 60 s behind"}},
		{"expired code", deviceflow.ErrExpiredToken},
		{"cancelled", fmt.Errorf("sending: %w", context.Canceled)},
		{"deadline", context.DeadlineExceeded},
		{"key unavailable", fmt.Errorf("the signing key k1 (AWS KMS key arn:aws:kms:eu-west-2:111122223333:key/k1) cannot sign: %w",
			&keyplugin.Error{Kind: keyplugin.KindDisabled, Op: "Sign"})},
		{"key mismatch", fmt.Errorf("%w: the signing key k1 (token \"pact\", object \"pa-key\") made a signature its published key does not verify", signer.ErrKeyMismatch)},
		{"plain", errors.New("something else went wrong")},
	}
}
