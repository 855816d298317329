package mcpserver

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pact-cli/pact/demoprovider"
)

// docMembers returns the members of the example documented in
// docs/json.md under `<!-- shape: NAME … -->` (of its first element when it
// is an array): what the matching --json command prints.
func docMembers(t *testing.T, name string) []string {
	t.Helper()
	doc, err := os.ReadFile("../docs/json.md")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("(?s)<!-- shape: " + regexp.QuoteMeta(name) + "(?: open: [^ ]+)? -->\\s*```json\\n(.*?)```")
	m := re.FindSubmatch(doc)
	if m == nil {
		t.Fatalf("docs/json.md has no shape %q", name)
	}
	var v any
	if err := json.Unmarshal(m[1], &v); err != nil {
		t.Fatal(err)
	}
	if a, ok := v.([]any); ok {
		v = a[0]
	}
	var keys []string
	for k := range v.(map[string]any) {
		keys = append(keys, k)
	}
	return keys
}

// structured decodes a result's structuredContent as a JSON object.
func structured(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	data, _ := json.Marshal(res.StructuredContent)
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("structuredContent %s: %v", data, err)
	}
	return m
}

func missing(got map[string]any, want []string) []string {
	var out []string
	for _, k := range want {
		if _, ok := got[k]; !ok {
			out = append(out, k)
		}
	}
	return out
}

// TestMCP_StructuredContentMirrorsTheJSONShapes: send_message carries every
// member of `pact send --json` (brandName included) and each list_receipts
// item every member of a `pact receipts list --json` item (cardUrl,
// brandName, problems); the text names the Brand by name and domain.
func TestMCP_StructuredContentMirrorsTheJSONShapes(t *testing.T) {
	e := newEnv(t, true)
	b := e.brands[0].SiteURL
	var started LoginStarted
	e.mustCall("start_login", map[string]any{"brand": b, "scopes": []string{"orders:read"}}, &started)
	e.approve(started.VerificationURIComplete, demoprovider.ScriptedUser{})
	e.waitLogin(b)

	res := e.mustCall("send_message", map[string]any{"brand": b, "text": "show my orders"}, nil)
	sent := structured(t, res)
	if m := missing(sent, docMembers(t, "send")); len(m) > 0 || sent["brandName"] != "Example Co. Support" {
		t.Fatalf("send_message lacks %v of pact send --json (brandName %v)", m, sent["brandName"])
	}

	res = e.mustCall("list_receipts", map[string]any{}, nil)
	items, _ := structured(t, res)["receipts"].([]any)
	if len(items) != 1 {
		t.Fatalf("list_receipts = %v", structured(t, res))
	}
	item := items[0].(map[string]any)
	if m := missing(item, docMembers(t, "receipts-list")); len(m) > 0 {
		t.Fatalf("list_receipts item lacks %v of pact receipts list --json: %v", m, item)
	}
	if !strings.HasSuffix(item["cardUrl"].(string), "/.well-known/agent-card.json") || item["brandName"] != "Example Co. Support" {
		t.Fatalf("list_receipts item names the Brand %v / %v", item["cardUrl"], item["brandName"])
	}
	if p, ok := item["problems"].([]any); !ok || len(p) != 0 {
		t.Fatalf("problems of a verified receipt = %v, want []", item["problems"])
	}
	// The words for the model (the first block; the second is the
	// structured result serialized, interface URL included).
	if txt := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(txt, "Example Co. Support (127.0.0.1:") || strings.Contains(txt, e.brands[0].InterfaceURL) {
		t.Fatalf("list_receipts text does not name the Brand by name and domain: %s", txt)
	}
}

// TestMCP_ErrorsSpeakTheToolsInputs: the remedies name the tools' inputs
// (new: true, brand or context), not the CLI's flags, and a denied login
// has no zero expiry.
func TestMCP_ErrorsSpeakTheToolsInputs(t *testing.T) {
	e := newEnv(t, true)
	b := e.brands[0].SiteURL
	e.mustCall("send_message", map[string]any{"brand": b, "text": "hello"}, nil)
	res := e.call("send_message", map[string]any{"brand": b, "text": "hi", "context": "no-such-context"}, nil)
	if !res.IsError || !strings.Contains(text(res), "new: true") || strings.Contains(text(res), "--new") {
		t.Fatalf("unknown context: error %v %q, want the remedy new: true", res.IsError, text(res))
	}
	res = e.call("get_conversation", map[string]any{}, nil)
	if !res.IsError || !strings.Contains(text(res), "give brand") || strings.Contains(text(res), "not both") {
		t.Fatalf("get_conversation {}: %q", text(res))
	}
	e.toolError("get_conversation", map[string]any{"brand": b, "context": "x"}, "not both")

	var started LoginStarted
	e.mustCall("start_login", map[string]any{"brand": b, "scopes": []string{"orders:read"}}, &started)
	e.approve(started.VerificationURIComplete, demoprovider.ScriptedUser{Deny: true})
	if st := e.waitLogin(b); st.Status != StatusDenied {
		t.Fatalf("after denial: %+v", st)
	}
	res = e.mustCall("login_status", map[string]any{"brand": b}, nil)
	if st := structured(t, res); st["expiresAt"] != nil {
		t.Fatalf("denied login_status has expiresAt %v", st["expiresAt"])
	}
}
