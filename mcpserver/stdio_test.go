package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"
)

// TestStdio_LinesThatAreNoMessageAreAnsweredAndSkipped: the filter passes
// on the JSON-RPC messages, answers the rest (parse error -32700 with id
// null for non-JSON, -32600 for JSON that is no message, with its id when
// it has one) and never stops early.
func TestStdio_LinesThatAreNoMessageAreAnsweredAndSkipped(t *testing.T) {
	in := strings.Join([]string{
		`garbage`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`[]`,
		`{"id":"a"}`,
		`42`,
		"\t",
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
	}, "\n")
	var out bytes.Buffer
	o := &owed{ids: map[string]bool{}, done: make(chan struct{}, 1)}
	f := &lineFilter{in: bufio.NewReader(strings.NewReader(in)), out: &lockedWriter{w: &out, owed: o}, owed: o}
	// The request read is owed an answer: answer it so that EOF comes.
	go func() {
		time.Sleep(50 * time.Millisecond)
		(&lockedWriter{w: io.Discard, owed: o}).Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"))
	}()
	passed, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" + `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"
	if string(passed) != want {
		t.Fatalf("passed on:\n%s\nwant:\n%s", passed, want)
	}
	type answer struct {
		ID    any `json:"id"`
		Error struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	var got []answer
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var a answer
		if err := json.Unmarshal([]byte(line), &a); err != nil {
			t.Fatalf("answer %q: %v", line, err)
		}
		got = append(got, a)
	}
	if len(got) != 4 || got[0].ID != nil || got[0].Error.Code != -32700 || got[1].Error.Code != -32600 ||
		got[2].ID != "a" || got[2].Error.Code != -32600 || got[3].ID != nil || got[3].Error.Code != -32600 {
		t.Fatalf("answers = %+v", got)
	}
}

// TestStdio_EndOfInputWaitsForOwedAnswersOnly: a cancelled request is not
// waited for.
func TestStdio_EndOfInputWaitsForOwedAnswersOnly(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":5,"method":"tools/call"}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}` + "\n"
	o := &owed{ids: map[string]bool{}, done: make(chan struct{}, 1)}
	f := &lineFilter{in: bufio.NewReader(strings.NewReader(in)), out: &lockedWriter{w: io.Discard, owed: o}, owed: o}
	start := time.Now()
	if _, err := io.ReadAll(f); err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatalf("waited %v for a cancelled request", time.Since(start))
	}
}
