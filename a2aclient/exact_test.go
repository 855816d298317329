package a2aclient

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	pactreply "github.com/pact-cli/pact/reply"
)

// A data part's numbers are kept as written (issue 20): 9007199254740993
// (2^53 + 1) does not become …992 in any output of the part, in a message,
// a task's status message and its artifacts.
func TestParseReply_DataPartNumbersAreExact(t *testing.T) {
	for _, body := range []string{
		`{"message":{"role":"ROLE_AGENT","messageId":"m1","contextId":"c1","parts":[{"text":"hi"},{"data":{"orderId":9007199254740993,"total":12.50}}]}}`,
		`{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED","message":{"role":"ROLE_AGENT","messageId":"m2","parts":[{"data":{"orderId":9007199254740993,"total":12.50}}]}},
			"artifacts":[{"artifactId":"a1","parts":[{"data":{"orderId":9007199254740993,"total":12.50}}]}]}}`,
	} {
		r, err := ParseReply([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		var parts []*a2a.Part
		if r.Message != nil {
			parts = r.Message.Parts
		} else {
			parts = append(r.Task.Status.Message.Parts, r.Task.Artifacts[0].Parts...)
		}
		n := 0
		for _, p := range parts {
			d, ok := p.Content.(a2a.Data)
			if !ok {
				continue
			}
			n++
			b, _ := json.Marshal(d.Value)
			if string(b) != `{"orderId":9007199254740993,"total":12.50}` {
				t.Errorf("data part printed as %s", b)
			}
		}
		if n == 0 {
			t.Fatalf("no data part in %s", body)
		}
		// As `pact send` prints it for people.
		if out := pactreply.Render(parts, pactreply.Options{}); !strings.Contains(out, "9007199254740993") {
			t.Errorf("printed for people as:\n%s", out)
		}
	}
}
