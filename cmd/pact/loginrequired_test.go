package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pact-cli/pact/delegation"
	"github.com/pact-cli/pact/iostreams"
)

// A grant the Provider dropped: the Brand is named "Name (host)", never by
// its card URL; the shell hint uses what the User typed, quoted; in chat
// line mode the hint is /login with the grant's scopes.
func TestLoginRequired_NamesTheBrandAndFitsTheHintToWhereItIsShown(t *testing.T) {
	lr := &delegation.LoginRequiredError{
		Brand: "http://127.0.0.1:28791/.well-known/agent-card.json", BrandName: "Example Co. Support",
		Arg: "http://127.0.0.1:28791", Scopes: []string{"orders:read", "it's"}, Reason: "the Provider refused it", HTTPStatus: 401,
	}
	err := fmt.Errorf("sending: %w", lr)
	msg := lr.Error()
	if !strings.Contains(msg, "the delegation for Example Co. Support (127.0.0.1:28791) is no longer usable") ||
		!strings.Contains(msg, "run `pact login http://127.0.0.1:28791 --scope orders:read --scope 'it'\\''s'` again") ||
		strings.Contains(msg, "agent-card.json") {
		t.Fatalf("shell message: %s", msg)
	}
	io, _, _, errb := iostreams.Test()
	a := &app{io: io}
	if code := a.reportLine(err); code != exitAuth {
		t.Fatalf("exit %d", code)
	}
	line := errb.String()
	if !strings.Contains(line, "Example Co. Support (127.0.0.1:28791)") || !strings.Contains(line, "type /login orders:read 'it'\\''s' to delegate again") ||
		strings.Contains(line, "pact login") || strings.Contains(line, "agent-card.json") {
		t.Fatalf("chat line: %s", line)
	}
}
