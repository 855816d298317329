package main

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"
)

// TestMCP_MalformedLineIsAnsweredAndTheServerGoesOn: the real binary over
// pipes. A line that is not JSON gets a JSON-RPC parse error (-32700, id
// null), one that is JSON but no JSON-RPC message an invalid request
// (-32600); each is skipped and every request around them is answered.
// Then, stdin closed with a request still owed, the answer still comes
// before pact exits 0.
func TestMCP_MalformedLineIsAnsweredAndTheServerGoesOn(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	if out, err := pactCmd(home, "init", "--issuer", "https://pa.example.com").CombinedOutput(); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	cmd := pactCmd(home, "mcp")
	cmd.Stdin = strings.NewReader(strings.Join([]string{
		`garbage`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/li`,
		`{"id":7,"hello":"world"}`,
		``,
		`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"list_receipts","arguments":{}}}`,
	}, "\n") + "\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("pact mcp: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("pact mcp did not exit at the end of input\nstdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}

	type answer struct {
		ID    any `json:"id"`
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
		Result json.RawMessage `json:"result"`
	}
	var answers []answer
	dec := json.NewDecoder(&stdout)
	for {
		var a answer
		if err := dec.Decode(&a); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("stdout is not JSON-RPC messages: %v\n%s", err, stdout.String())
		}
		answers = append(answers, a)
	}
	code := func(id any) int {
		for _, a := range answers {
			if a.ID == id && a.Error != nil {
				return a.Error.Code
			}
		}
		return 0
	}
	answered := func(id float64) bool {
		for _, a := range answers {
			if a.ID == id && a.Error == nil && len(a.Result) > 0 {
				return true
			}
		}
		return false
	}
	nullErrs := 0
	for _, a := range answers {
		if a.ID == nil && a.Error != nil {
			if a.Error.Code != -32700 {
				t.Errorf("an unparsable line answered with code %d, want -32700", a.Error.Code)
			}
			nullErrs++
		}
	}
	if nullErrs != 2 || code(float64(7)) != -32600 || !answered(1) || !answered(3) || !answered(4) {
		t.Fatalf("answers: %d parse errors (want 2), id 7 code %d (want -32600), initialize %v, tools/list %v, tools/call %v\nstdout:\n%s\nstderr:\n%s",
			nullErrs, code(float64(7)), answered(1), answered(3), answered(4), stdout.String(), stderr.String())
	}
	if !strings.Contains(stderr.String(), "skipped") {
		t.Errorf("the skipped lines are not reported on stderr:\n%s", stderr.String())
	}
}
