package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pact-cli/pact/demoprovider"
)

// pactCmd is the real pact binary (this test binary as "pact", see
// TestMain) with an isolated PACT_HOME and a file keyring.
func pactCmd(home string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Args[0] = "pact"
	cmd.Env = append(os.Environ(), "PACT_HOME="+home, "PACT_KEYRING=file", "NO_COLOR=1", "PACT_PROFILE=", "PACT_DEBUG=",
		"PACT_NO_BROWSER=1", "PACT_BROWSER=", "BROWSER=")
	return cmd
}

// The "done when" of `pact mcp`: an independent MCP client, given only
// `pact mcp` as its server command and a profile registered with the demo
// Provider, lists the tools, reads a card, holds a conversation, starts a
// login and sees it granted after the User approves, and lists the
// resulting verified receipts.
func TestMCP_E2E_ClientDrivesTheRealBinaryOverStdio(t *testing.T) {
	e := newPactEnv(t, demoprovider.Config{PollInterval: time.Second},
		"NO_COLOR=1", "PACT_PROFILE=", "PACT_DEBUG=", "PACT_NO_BROWSER=1", "PACT_BROWSER=", "BROWSER=")
	waitHTTP(t, e.issuer+"/.well-known/jwks.json")

	var stderr lockedBuffer
	// --debug: the HTTP and MCP traces go to stderr, never stdout, and
	// carry no secret (checked at the end).
	cmd := e.command(context.Background(), "--debug", "mcp")
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-client", Version: "v0"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\nstderr:\n%s", err, stderr.String())
	}
	defer cs.Close()
	call := func(name string, args map[string]any, out any) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v\nstderr:\n%s", name, err, stderr.String())
		}
		var text strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				text.WriteString(tc.Text)
			}
		}
		if res.IsError {
			t.Fatalf("%s: tool error: %s", name, text.String())
		}
		data, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s: %s: %v", name, data, err)
		}
		return text.String()
	}

	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 8 {
		t.Fatalf("tools: %+v %v", tools, err)
	}
	brand := e.brand
	var card struct {
		Pact struct {
			Name       string
			Delegation struct{ Scopes map[string]string }
			Signature  struct{ Verified bool }
		}
	}
	call("get_agent_card", map[string]any{"brand": brand}, &card)
	if !strings.HasPrefix(card.Pact.Name, "Example Co.") || card.Pact.Delegation.Scopes["orders:read"] == "" {
		t.Fatalf("card: %+v", card)
	}
	var hello struct{ ContextID, Text string }
	call("send_message", map[string]any{"brand": brand, "text": "hello"}, &hello)
	if hello.ContextID == "" || hello.Text == "" {
		t.Fatalf("send: %+v", hello)
	}
	var started struct {
		Status, UserCode, VerificationURIComplete string
		BrowserOpened                             bool
	}
	call("start_login", map[string]any{"brand": brand, "scopes": []string{"orders:read"}}, &started)
	if started.Status != "pending" || started.UserCode == "" || started.BrowserOpened {
		t.Fatalf("start_login: %+v", started)
	}
	u := demoprovider.ScriptedUser{Username: "jane", Password: "jane-demo-pass"}
	if err := u.Visit(ctx, started.VerificationURIComplete); err != nil {
		t.Fatal(err)
	}
	var st struct {
		Status        string
		ScopesGranted []string
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		call("login_status", map[string]any{"brand": brand}, &st)
		if st.Status != "pending" || time.Now().After(deadline) {
			break
		}
	}
	if st.Status != "granted" || len(st.ScopesGranted) != 1 || st.ScopesGranted[0] != "orders:read" {
		t.Fatalf("login_status: %+v", st)
	}
	var orders struct {
		Receipt struct {
			ID       string
			Verified bool
		}
	}
	call("send_message", map[string]any{"brand": brand, "text": "show my orders"}, &orders)
	if !orders.Receipt.Verified {
		t.Fatalf("send under the grant: %+v", orders)
	}
	var list struct {
		Receipts []struct {
			ID       string
			Verified bool
		}
	}
	call("list_receipts", map[string]any{}, &list)
	if len(list.Receipts) != 1 || !list.Receipts[0].Verified || !strings.HasPrefix(list.Receipts[0].ID, orders.Receipt.ID) {
		t.Fatalf("list_receipts: %+v", list)
	}
	cs.Close()
	if !strings.Contains(stderr.String(), "[redacted]") {
		t.Fatalf("no --debug trace on stderr:\n%s", stderr.String())
	}
	// No secret of the profile reached the log either.
	data, err := os.ReadFile(filepath.Join(e.dir, "pact", "data", "secrets.json"))
	if err != nil {
		t.Fatal(err)
	}
	var secrets map[string]string
	json.Unmarshal(data, &secrets)
	tokens := 0
	for name := range secrets {
		if strings.Contains(name, "/delegation/") {
			tokens++
		}
	}
	if tokens == 0 {
		t.Fatalf("no delegation token in the keyring to look for: %v", len(secrets))
	}
	for name, v := range secrets {
		if len(v) >= 8 && strings.Contains(stderr.String(), v) {
			t.Fatalf("stderr carries the secret %s", name)
		}
	}
}

// waitHTTP waits (at most 15 s) until url answers 200.
func waitHTTP(t *testing.T, url string) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		resp, err := (&http.Client{Timeout: time.Second}).Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not answer: %v", url, err)
		}
	}
}

// Stdout is the protocol's: a client that writes requests gets JSON-RPC
// messages on stdout and nothing else, even with --debug and a failing
// tool; the server exits when the client closes stdin.
func TestMCP_StdoutCarriesOnlyProtocolMessages(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	if out, err := pactCmd(home, "init", "--issuer", "https://pa.example.com").CombinedOutput(); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	cmd := pactCmd(home, "--debug", "mcp")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdoutPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	for _, m := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_agent_card","arguments":{"brand":"http://127.0.0.1:1"}}}`,
	} {
		if _, err := io.WriteString(stdin, m+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdoutPipe)
		sc.Buffer(nil, 1<<22)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	ids := map[float64]bool{}
	timeout := time.After(20 * time.Second)
	for !ids[2] || !ids[3] {
		var line string
		var ok bool
		select {
		case line, ok = <-lines:
			if !ok {
				t.Fatalf("stdout closed after answers %v\nstderr:\n%s", ids, stderr.String())
			}
		case <-timeout:
			t.Fatalf("no answer to every request: %v\nstderr:\n%s", ids, stderr.String())
		}
		var msg struct {
			JSONRPC string   `json:"jsonrpc"`
			ID      *float64 `json:"id"`
			Result  struct {
				IsError bool `json:"isError"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &msg); err != nil || msg.JSONRPC != "2.0" {
			t.Fatalf("stdout line is not a JSON-RPC message: %q", line)
		}
		if msg.ID != nil {
			ids[*msg.ID] = true
			if *msg.ID == 3 && !msg.Result.IsError {
				t.Fatalf("an unreachable Brand is not a tool error: %s", line)
			}
		}
	}
	if !ids[1] || !ids[2] {
		t.Fatalf("answers %v, want 1, 2 and 3", ids)
	}
	stdin.Close()
	for line := range lines {
		t.Fatalf("stdout after the last answer: %q", line)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("pact mcp: %v\nstderr:\n%s", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("pact mcp did not exit when stdin closed")
	}
	if !strings.Contains(stderr.String(), "tools/list") {
		t.Fatalf("--debug did not trace the MCP messages on stderr:\n%s", stderr.String())
	}
}
