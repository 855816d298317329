package main

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/pact-cli/pact/agent"
	"github.com/pact-cli/pact/agent/agenttest"
	"github.com/pact-cli/pact/serverapi"
)

// Issue 29 (one core): an error that crossed the agent interface's wire
// (agent.EncodeError, DecodeError: a server profile's agent) is reported
// as the same error of a local profile's: the same exit code, --json
// reason, HTTP status, message and error members, and the same human line.
func TestIssue29_AnErrorFromARemoteAgentExitsAsALocalOne(t *testing.T) {
	a := &app{io: nil}
	for _, ex := range agenttest.Errors() {
		b, err := json.Marshal(agent.EncodeError(ex.Err))
		if err != nil {
			t.Fatal(err)
		}
		var w *agent.WireError
		if err := json.Unmarshal(b, &w); err != nil {
			t.Fatal(err)
		}
		got := agent.DecodeError(w)
		oc, or, os := classify(ex.Err)
		gc, gr, gs := classify(got)
		if oc != gc || or != gr || os != gs {
			t.Errorf("%s: classified (%d, %s, %d), want (%d, %s, %d)", ex.Name, gc, gr, gs, oc, or, os)
		}
		if jsonMessage(got) != jsonMessage(ex.Err) {
			t.Errorf("%s: --json message %q, want %q", ex.Name, jsonMessage(got), jsonMessage(ex.Err))
		}
		od, gd := errorDetails(map[string]any{}, ex.Err), errorDetails(map[string]any{}, got)
		if !reflect.DeepEqual(od, gd) {
			t.Errorf("%s: --json members %v, want %v", ex.Name, gd, od)
		}
		if a.humanError(got) != a.humanError(ex.Err) {
			t.Errorf("%s: says %q, want %q", ex.Name, a.humanError(got), a.humanError(ex.Err))
		}
	}
}

// Every kind of error the exit table knows, but those only a command
// itself makes, classifies the same once it crossed the agent interface's
// wire: a new row needs its sentinel in agent.Sentinels or its type in the
// wire's typed errors.
func TestIssue29_EveryExitTableKindCrossesTheWire(t *testing.T) {
	local := map[error]bool{errKeyNotLive: true}
	for _, r := range exitTable {
		ex := r.when.example
		switch ex.(type) {
		case usageError, jqError:
			continue // a command's own
		case *serverapi.APIError:
			continue // the device's client of pact serve makes it from the API's envelope
		}
		if local[ex] {
			continue
		}
		b, err := json.Marshal(agent.EncodeError(ex))
		if err != nil {
			t.Fatal(err)
		}
		var w *agent.WireError
		if err := json.Unmarshal(b, &w); err != nil {
			t.Fatal(err)
		}
		oc, or, _ := classify(ex)
		gc, gr, _ := classify(agent.DecodeError(w))
		if oc != gc || or != gr {
			t.Errorf("%T %v: classified (%d, %s) after the wire, want (%d, %s)", ex, ex, gc, gr, oc, or)
		}
	}
}
