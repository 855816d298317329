package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pact-cli/pact/a2aclient"
	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/delegation"
	"github.com/pact-cli/pact/deviceflow"
	"github.com/pact-cli/pact/discovery"
	"github.com/pact-cli/pact/iostreams"
	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/store"
)

// TestExitTable checks every row of exitTable with its own example, wrapped
// as a command would wrap it: the row is reached (no earlier row shadows
// it) and gives its code and reason.
func TestExitTable(t *testing.T) {
	for i, r := range exitTable {
		err := fmt.Errorf("doing something: %w", r.when.example)
		code, reason, _ := classify(err)
		wantReason := r.reason
		if wantReason == "" {
			wantReason, _ = carriedReason(err)
		}
		if code != r.code || reason != wantReason {
			t.Errorf("row %d (%T %v): classify = %d %q, want %d %q (an earlier row shadows it?)",
				i, r.when.example, r.when.example, code, reason, r.code, wantReason)
		}
		if !r.when.match(err) {
			t.Errorf("row %d: its matcher does not accept its own example", i)
		}
	}
}

// TestExitTable_CodesOfTheContract: each code of the CLI contract has a
// row, and the codes are the contract's.
func TestExitTable_CodesOfTheContract(t *testing.T) {
	have := map[int]bool{}
	for _, r := range exitTable {
		have[r.code] = true
		switch r.code {
		case exitFailure, exitUsage, exitAuth, exitConsent, exitNotFound, exitReceipts, exitCancelled:
		default:
			t.Errorf("row %v: exit code %d is not in the contract", r.when.example, r.code)
		}
	}
	for _, c := range []int{exitFailure, exitUsage, exitAuth, exitConsent, exitNotFound, exitReceipts, exitCancelled} {
		if !have[c] {
			t.Errorf("no row exits %d", c)
		}
	}
	if exitOK != 0 || exitFailure != 1 || exitUsage != 2 || exitAuth != 3 || exitConsent != 4 || exitNotFound != 5 || exitReceipts != 6 || exitCancelled != 130 {
		t.Error("the exit codes changed")
	}
}

// Cases the rows' examples do not show: carried reasons and statuses, the
// first matching row winning, wording that keeps its kind, unknown errors.
func TestClassify(t *testing.T) {
	closed := &conversation.ClosedError{ContextID: "c1", Err: &a2aclient.Error{HTTPStatus: 400, Reason: a2aclient.ReasonUnsupportedOperation}}
	cases := []struct {
		name   string
		err    error
		code   int
		reason string
		status int
	}{
		{"unknown error", errors.New("boom"), exitFailure, "ERROR", 0},
		{"A2A reason and status carried", &a2aclient.Error{HTTPStatus: 404, Reason: a2aclient.ReasonTaskNotFound}, exitNotFound, "TASK_NOT_FOUND", 404},
		{"401 on the PA JWT", &a2aclient.Error{HTTPStatus: 401, Reason: a2aclient.ReasonUnauthenticated}, exitAuth, "UNAUTHENTICATED", 401},
		{"closed conversation", closed, exitFailure, "UNSUPPORTED_OPERATION", 400},
		{"OAuth code carried", &deviceflow.OAuthError{StatusCode: 400, Code: "invalid_client"}, exitFailure, "INVALID_CLIENT", 400},
		{"OAuth access_denied is consent", &deviceflow.OAuthError{StatusCode: 400, Code: "access_denied"}, exitConsent, "ACCESS_DENIED", 400},
		{"interrupted while a request failed", fmt.Errorf("%w: %w", context.Canceled, &a2aclient.Error{Reason: a2aclient.ReasonNetwork}), exitCancelled, "CANCELLED", 0},
		{"explained keeps its kind", explained{"no delegation is stored for x", delegation.ErrNoGrant}, exitNotFound, "NO_GRANT", 0},
		{"unknown kid", fmt.Errorf("retire: %w", profile.ErrNotFound), exitNotFound, "NOT_FOUND", 0},
		{"usage wrapping a not-found stays usage", usageError{fmt.Errorf("x: %w", profile.ErrNotFound)}, exitUsage, "USAGE", 0},
		{"login required", &delegation.LoginRequiredError{Brand: "b"}, exitAuth, "LOGIN_REQUIRED", 0},
	}
	for _, c := range cases {
		code, reason, status := classify(c.err)
		if code != c.code || reason != c.reason || status != c.status {
			t.Errorf("%s: got %d %q %d, want %d %q %d", c.name, code, reason, status, c.code, c.reason, c.status)
		}
	}
}

// An error found before flags are parsed (an unknown subcommand) still
// honours --json.
func TestUnknownSubcommandUnderJSON(t *testing.T) {
	io, _, out, errb := iostreams.Test()
	if code := run([]string{"--json", "key", "frob"}, io); code != exitUsage {
		t.Fatalf("exit %d, want 2; stderr %s", code, errb)
	}
	if !strings.Contains(out.String(), `"reason": "USAGE"`) || !strings.Contains(out.String(), "pact key --help") {
		t.Fatalf("stdout %s", out)
	}
}

// protectDashArgs moves only foreign dash arguments of annotated commands.
func TestProtectDashArgs(t *testing.T) {
	root := newRootCmd(&app{})
	cases := []struct{ in, want string }{
		{"key retire -abc", "key retire -- -abc"},
		{"key retire --json -abc", "key retire --json -- -abc"},
		{"key retire -abc --profile p", "key retire --profile p -- -abc"},
		{"key retire -- -abc", "key retire -- -abc"},
		{"key retire abc", "key retire abc"},
		{"key retire -h", "key retire -h"},
		{"key retire --help", "key retire --help"},
		{"key retire --Abc", "key retire -- --Abc"},
		{"key list -abc", "key list -abc"}, // not annotated: pflag reports it
		{"send -abc x", "send -abc x"},
	}
	for _, c := range cases {
		got := strings.Join(protectDashArgs(root, strings.Fields(c.in)), " ")
		if got != c.want {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
}

// CARD_CHANGED under --json: the message is one line (old and new are
// members of their own), still naming the way to accept the change.
func TestCardChangedJSONMessageIsOneSentence(t *testing.T) {
	err := fmt.Errorf("send: %w", &discovery.CardChangedError{
		Brand:   "example.com",
		Old:     store.Pin{ProviderOrigin: "https://a.example", InterfaceURL: "https://a.example/a2a/X", PinnedAt: time.Now()},
		New:     store.Pin{ProviderOrigin: "https://b.example", InterfaceURL: "https://b.example/a2a/X"},
		Changes: []string{"another Provider", "another interface URL"},
	})
	msg := jsonMessage(err)
	if strings.Contains(msg, "\n") || strings.Contains(msg, "accepted  ") || strings.Contains(msg, "≠") {
		t.Fatalf("JSON message holds the table: %q", msg)
	}
	for _, want := range []string{"changed since you accepted it", "another Provider", "nothing was sent", "pact card example.com --trust"} {
		if !strings.Contains(msg, want) {
			t.Errorf("JSON message %q lacks %q", msg, want)
		}
	}
	if h := err.Error(); !strings.Contains(h, "≠") {
		t.Errorf("the human message lost its table: %q", h)
	}
}

// Hostile re-review: the Brand in the --json CARD_CHANGED message's command
// is shell-quoted.
func TestCardChangedJSONMessageQuotesTheBrand(t *testing.T) {
	brand := "http://127.0.0.1:1/a&b;c/$(id)/agent-card.json"
	msg := jsonMessage(&discovery.CardChangedError{Brand: brand, Old: store.Pin{PinnedAt: time.Now()}, New: store.Pin{ProviderOrigin: "https://b.example"}, Changes: []string{"another Provider"}})
	if !strings.Contains(msg, "`pact card '"+brand+"' --trust --expect ") {
		t.Errorf("the Brand is not quoted: %q", msg)
	}
}
