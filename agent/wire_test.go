package agent_test

import (
	"encoding/json"
	"errors"
	"net"
	"reflect"
	"strings"
	"testing"

	"github.com/pact-cli/pact/a2aclient"
	"github.com/pact-cli/pact/agent"
	"github.com/pact-cli/pact/agent/agenttest"
	"github.com/pact-cli/pact/conversation"
)

// overTheWire is err as a device gets it from a pact serve: encoded, sent
// as JSON, decoded.
func overTheWire(t *testing.T, err error) error {
	t.Helper()
	b, jerr := json.Marshal(agent.EncodeError(err))
	if jerr != nil {
		t.Fatal(jerr)
	}
	var w *agent.WireError
	if jerr := json.Unmarshal(b, &w); jerr != nil {
		t.Fatal(jerr)
	}
	return agent.DecodeError(w)
}

// detail is the wire detail the CLI shows of err (errors.As, as
// cmd/pact's errDetail).
func detail(err error) string {
	var d interface{ Detail() string }
	if errors.As(err, &d) {
		return d.Detail()
	}
	return ""
}

// link is the first link of err's chain, in errors.As order, that kind
// encodes: its members and its cause's words.
func link(t *testing.T, err error, kind string) (data string, cause string, ok bool) {
	t.Helper()
	if err == nil {
		return "", "", false
	}
	w := agent.EncodeError(err)
	if w.Kind == kind {
		c := ""
		if len(w.Causes) > 0 {
			c = w.Causes[0].Message
		}
		return string(w.Data), c, true
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return link(t, u.Unwrap(), kind)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if d, c, ok := link(t, e, kind); ok {
				return d, c, true
			}
		}
	}
	return "", "", false
}

// The agent interface's errors cross the wire as the front-ends match
// them: the same words and wire detail, the same answer to errors.Is for
// every sentinel, the same timeout, and errors.As finds every typed error
// of the chain with the same members and cause. Every typed error kind
// has an example (agenttest.Errors).
func TestWire_EveryTypedErrorCrossesWithItsMembers(t *testing.T) {
	seen := map[string]bool{}
	for _, ex := range agenttest.Errors() {
		t.Run(ex.Name, func(t *testing.T) {
			orig := ex.Err
			got := overTheWire(t, orig)
			if got.Error() != orig.Error() {
				t.Errorf("Error() = %q, want %q", got.Error(), orig.Error())
			}
			if detail(got) != detail(orig) {
				t.Errorf("Detail = %q, want %q", detail(got), detail(orig))
			}
			for name, s := range agent.Sentinels {
				if errors.Is(got, s) != errors.Is(orig, s) {
					t.Errorf("errors.Is(%s) = %v, want %v", name, errors.Is(got, s), errors.Is(orig, s))
				}
			}
			var on, gn net.Error
			if (errors.As(orig, &on) && on.Timeout()) != (errors.As(got, &gn) && gn.Timeout()) {
				t.Errorf("timeout differs")
			}
			for _, kind := range agent.ErrorKinds() {
				od, oc, ook := link(t, orig, kind)
				if ook {
					seen[kind] = true
				}
				gd, gc, gok := link(t, got, kind)
				if ook != gok || od != gd || oc != gc {
					t.Errorf("%s: got (%v %s, cause %q), want (%v %s, cause %q)", kind, gok, gd, gc, ook, od, oc)
				}
			}
		})
	}
	for _, kind := range agent.ErrorKinds() {
		if !seen[kind] {
			t.Errorf("no example of the typed error %q in agenttest.Errors", kind)
		}
	}
}

// What the front-ends read off the typed errors survives the wire: the
// step-up's reply (its task, so StepUp and Words), the unknown outcome's
// words and --json members, the transport cause the chat names.
func TestWire_FrontEndsReadTheSameFacts(t *testing.T) {
	for _, ex := range agenttest.Errors() {
		got := overTheWire(t, ex.Err)
		var op, gp *agent.StepUpPending
		if errors.As(ex.Err, &op) {
			if !errors.As(got, &gp) || gp.StepUp.Result.Task == nil || gp.StepUp.Result.StepUp() == nil ||
				!reflect.DeepEqual(gp.StepUp.Result.StepUp(), op.StepUp.Result.StepUp()) || gp.StepUp.Askable() != op.StepUp.Askable() ||
				gp.StepUp.Words(agent.ChatLogin, "x") != op.StepUp.Words(agent.ChatLogin, "x") {
				t.Errorf("%s: step-up %+v, want %+v", ex.Name, gp, op)
			}
		}
		var ou, gu *conversation.OutcomeUnknownError
		if errors.As(ex.Err, &ou) {
			if !errors.As(got, &gu) || gu.What() != ou.What() || gu.Remedy("x") != ou.Remedy("x") || !reflect.DeepEqual(gu.ErrorDetails(), ou.ErrorDetails()) {
				t.Errorf("%s: outcome unknown %v, want %v", ex.Name, gu, ou)
			}
		}
		var oa, ga *a2aclient.Error
		if errors.As(ex.Err, &oa) {
			if !errors.As(got, &ga) || ga.Error() != oa.Error() || ga.Detail() != oa.Detail() || ga.Reason != oa.Reason || ga.HTTPStatus != oa.HTTPStatus {
				t.Errorf("%s: a2a error %v, want %v", ex.Name, ga, oa)
			}
		}
	}
}

// A Result crosses the wire as its --json form and comes back whole: the
// reply's message or task decoded again, so Text, Parts and StepUp are the
// same (a data part's large number exact), with the receipt, the dead
// grant and Streamed.
func TestWire_ResultRoundTrip(t *testing.T) {
	for _, res := range []*conversation.Result{agenttest.ReplyResult(), agenttest.StepUpResult()} {
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		var back conversation.Result
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(&back, res) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", back, *res)
		}
		if back.Text() == "" || back.Text() != res.Text() || !reflect.DeepEqual(back.StepUp(), res.StepUp()) {
			t.Fatalf("text %q, step-up %+v", back.Text(), back.StepUp())
		}
	}
	if b, _ := json.Marshal(agenttest.ReplyResult()); !strings.Contains(string(b), "9007199254740993") {
		t.Fatalf("a large number was not kept exact: %s", b)
	}
}

// A SendStream request's answer (the last Server-Sent Event) gives back
// the Result and the error together: a reply that arrived but could not be
// saved is shown all the same.
func TestWire_SendAnswerKeepsResultAndError(t *testing.T) {
	res := agenttest.ReplyResult()
	save := &conversation.SaveError{Err: errors.New("disk full")}
	b, err := json.Marshal(agent.Answer(res, save))
	if err != nil {
		t.Fatal(err)
	}
	var a agent.SendAnswer
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	got, gerr := a.Returned()
	var se *conversation.SaveError
	if !reflect.DeepEqual(got, res) || !errors.As(gerr, &se) || gerr.Error() != save.Error() {
		t.Fatalf("answer: %+v, %v", got, gerr)
	}
	if _, gerr := (agent.SendAnswer{Result: res}).Returned(); gerr != nil {
		t.Fatalf("no error came back as %v", gerr)
	}
}

// A stream event crosses as the Provider's event, the text so far, resumed
// and the task; the A2A event is decoded again from the Provider's JSON.
func TestWire_StreamEventRoundTrip(t *testing.T) {
	raw := json.RawMessage(`{"statusUpdate":{"taskId":"t-1","contextId":"ctx-1","status":{"state":"TASK_STATE_WORKING"}}}`)
	ev := a2aclient.StreamEvent{Raw: raw, Text: "Looking it up", Resumed: true, TaskID: "t-1"}
	b, err := agent.EncodeStreamEvent(ev)
	if err != nil {
		t.Fatal(err)
	}
	got, err := agent.DecodeStreamEvent(b)
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Raw) != string(raw) || got.Text != ev.Text || !got.Resumed || got.TaskID != "t-1" || got.Event == nil {
		t.Fatalf("event %+v", got)
	}
}
