package mcpserver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// Issue 18: every tool states all four hints, exactly as docs/mcp.md's
// table says, warns of third-party text, and has no ["null", …] member.
func TestMCP_ToolsCarryExactAnnotationsAndPlainSchemas(t *testing.T) {
	e := newEnv(t, true)
	want := map[string][4]bool{ // readOnly, destructive, idempotent, openWorld
		"send_message":       {false, true, false, true},
		"get_agent_card":     {true, false, true, true},
		"list_conversations": {true, false, true, false},
		"get_conversation":   {true, false, true, false},
		"start_login":        {false, false, false, true},
		"login_status":       {true, false, true, false},
		"list_receipts":      {true, false, true, false},
		"verify_receipts":    {false, false, true, true},
	}
	res, err := e.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != len(want) {
		t.Fatalf("%d tools, want %d", len(res.Tools), len(want))
	}
	for _, tool := range res.Tools {
		a := tool.Annotations
		w, ok := want[tool.Name]
		if !ok || a == nil || a.DestructiveHint == nil || a.OpenWorldHint == nil {
			t.Fatalf("%s: annotations %+v", tool.Name, a)
		}
		if got := [4]bool{a.ReadOnlyHint, *a.DestructiveHint, a.IdempotentHint, *a.OpenWorldHint}; got != w {
			t.Errorf("%s: hints %v, want %v", tool.Name, got, w)
		}
		if !strings.Contains(tool.Description, "third-party") {
			t.Errorf("%s: the description does not say the Brand's text is third-party", tool.Name)
		}
		schema, _ := json.Marshal(tool.InputSchema)
		if strings.Contains(string(schema), `"null"`) {
			t.Errorf("%s: input schema %s has a null type", tool.Name, schema)
		}
	}
}
