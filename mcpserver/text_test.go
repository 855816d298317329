package mcpserver

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestCleanJSONCleansEveryStringAndKey(t *testing.T) {
	var v any
	json.Unmarshal([]byte(`{"a\u001b[2Jb":["x\u001b[31my",{"n":1,"s":"\u202eevil"}]}`), &v)
	got, _ := json.Marshal(cleanJSON(v))
	if string(got) != `{"a\\x1b[2Jb":["x\\x1b[31my",{"n":1,"s":"\\u202eevil"}]}` {
		t.Fatalf("cleanJSON = %s", got)
	}
}

// A hostile card's text (escape sequences, bidi controls) reaches the
// client only cleaned, in the text content and the structured content.
func TestMCP_RemoteTextPassesTheSanitiser(t *testing.T) {
	e := newEnv(t, true)
	resp, err := http.Get(e.brands[0].CardURL)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var card map[string]any
	if err := json.Unmarshal(raw, &card); err != nil {
		t.Fatal(err)
	}
	card["name"] = "Evil\x1b]0;pwned\x07 Co.\u202e"
	card["description"] = "\x1b[2J\x1b[31mwipe\x1b[0m"
	hostile, _ := json.Marshal(card)
	h := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(hostile)
	}))
	defer h.Close()
	var out CardOutput
	res := e.mustCall("get_agent_card", map[string]any{"brand": h.URL + "/.well-known/agent-card.json"}, &out)
	all, _ := json.Marshal(res)
	for _, bad := range []string{`\u001b`, `\u0007`, "\x1b", "\x07", "\u202e"} {
		if strings.Contains(string(all), bad) {
			t.Fatalf("the result carries %q: %s", bad, all)
		}
	}
	if out.Pact.Name != `Evil\x1b]0;pwned\x07 Co.\u202e` || out.Pact.Description != `\x1b[2J\x1b[31mwipe\x1b[0m` {
		t.Fatalf("cleaned = %q %q", out.Pact.Name, out.Pact.Description)
	}
}
