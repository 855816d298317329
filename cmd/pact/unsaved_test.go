package main

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/iostreams"
)

// A reply that arrived but could not be saved (a full disk) is still
// printed, with the receipt's JWS, and the command fails as before; under
// --json the reply document carries the error member.
func TestSendPrintsTheReplyAndReceiptWhenSavingFails(t *testing.T) {
	msg := a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("refund issued"))
	res := &conversation.Result{Brand: "https://b.example/.well-known/agent-card.json", Reply: []byte(`{"message":{}}`), Message: msg,
		Receipt: &conversation.ReceiptStatus{ID: strings.Repeat("ab", 32), Verified: true, JWS: "eyJhbGciOiJFUzI1NiJ9.eyJ9.c2ln"}}
	saveErr := &conversation.SaveError{Err: syscall.ENOSPC}

	io, _, out, errOut := iostreams.Test()
	a := &app{io: io}
	err := a.printUnsaved(res, saveErr, "")
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("error = %v", err)
	}
	if !strings.Contains(out.String(), "refund issued") || !strings.Contains(errOut.String(), res.Receipt.JWS) {
		t.Fatalf("stdout %q stderr %q", out, errOut)
	}

	io, _, out, _ = iostreams.Test()
	a = &app{io: io, json: true}
	err = a.printUnsaved(res, saveErr, "")
	var se silentError
	if !errors.As(err, &se) || se.code == 0 {
		t.Fatalf("--json error = %v", err)
	}
	for _, want := range []string{`"reply"`, `"error"`, `"message": "the reply arrived but saving`, res.Receipt.JWS} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--json lacks %s:\n%s", want, out)
		}
	}
}
