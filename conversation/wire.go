package conversation

import (
	"encoding/json"
	"fmt"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pact-cli/pact/a2aclient"
)

// UnmarshalJSON reads a Result from its JSON form (the `pact send --json`
// document, docs/json.md), the reply's message or task decoded again from
// "reply" (a2aclient.ParseReply), so that a Result that crossed a wire (the
// agent interface between `pact serve` and a device) has Text, Parts and
// StepUp as the one that was sent. Attempts does not cross.
func (r *Result) UnmarshalJSON(b []byte) error {
	type plain Result // the JSON members, without this method
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*r = Result(p)
	if len(r.Reply) == 0 || string(r.Reply) == "null" {
		return nil
	}
	if resp, err := a2aclient.ParseReply(r.Reply); err == nil {
		r.Message, r.Task = resp.Message, resp.Task
		return nil
	}
	// A reply pact accepted when it arrived (a streamed task assembled
	// from its events, say) is taken as it is.
	var env struct {
		Message *a2a.Message `json:"message"`
		Task    *a2a.Task    `json:"task"`
	}
	if err := json.Unmarshal(r.Reply, &env); err != nil {
		return fmt.Errorf("the reply of message %s: %v", r.MessageID, err)
	}
	r.Message, r.Task = env.Message, env.Task
	return nil
}
