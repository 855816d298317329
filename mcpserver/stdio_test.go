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

// filterOf is a lineFilter over in whose own answers go to out.
func filterOf(in string, out io.Writer) (*lineFilter, *lockedWriter) {
	b := newBook(nil)
	w := &lockedWriter{w: out, book: b}
	return &lineFilter{in: bufio.NewReader(strings.NewReader(in)), out: w, book: b}, w
}

type answer struct {
	ID    json.RawMessage `json:"id"`
	Error struct {
		Code int `json:"code"`
	} `json:"error"`
}

func answers(t *testing.T, out string) []answer {
	t.Helper()
	var got []answer
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var a answer
		if err := json.Unmarshal([]byte(line), &a); err != nil {
			t.Fatalf("answer %q: %v", line, err)
		}
		got = append(got, a)
	}
	return got
}

// TestStdio_LinesThatAreNoMessageAreAnsweredAndSkipped: the filter passes
// on the JSON-RPC messages, answers the rest (parse error -32700 with id
// null for non-JSON; -32600 for JSON that is no message, with its id when
// it has one, for a batch, for a null id) and never stops early.
func TestStdio_LinesThatAreNoMessageAreAnsweredAndSkipped(t *testing.T) {
	in := strings.Join([]string{
		`garbage`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`[]`,
		`{"id":"a"}`,
		`42`,
		"\t",
		`[{"jsonrpc":"2.0","id":7,"method":"ping"},{"jsonrpc":"2.0","id":8,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":true,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
	}, "\n")
	var out bytes.Buffer
	f, w := filterOf(in, &out)
	// The request read is owed an answer: answer it so that EOF comes.
	go func() {
		for f.book.owedCount() == 0 {
			time.Sleep(time.Millisecond)
		}
		w.Write([]byte(`{"jsonrpc":"2.0","id":"pact-1","result":{}}` + "\n"))
	}()
	passed, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" + `{"id":"pact-1","jsonrpc":"2.0","method":"ping"}` + "\n"
	if string(passed) != want {
		t.Fatalf("passed on:\n%s\nwant:\n%s", passed, want)
	}
	got := answers(t, out.String())
	codes := []int{-32700, -32600, -32600, -32600, -32600, -32600, -32600, 0}
	ids := []string{"null", "null", `"a"`, "null", "null", "null", "null", "1"}
	if len(got) != len(codes) {
		t.Fatalf("%d answers, want %d:\n%s", len(got), len(codes), out.String())
	}
	for i := range got {
		if got[i].Error.Code != codes[i] || string(got[i].ID) != ids[i] {
			t.Errorf("answer %d: id %s code %d, want id %s code %d", i, got[i].ID, got[i].Error.Code, ids[i], codes[i])
		}
	}
}

// TestStdio_IDsAreEchoedExactly: the SDK sees pact's ids; each answer
// carries the client's id byte for byte.
func TestStdio_IDsAreEchoedExactly(t *testing.T) {
	for _, id := range []string{`1.5`, `9007199254740993`, `-0`, `1e3`, `"a<b>&"`, `"pact-1"`, `0`} {
		var out bytes.Buffer
		f, w := filterOf(`{"jsonrpc":"2.0","id":`+id+`,"method":"ping"}`+"\n", &out)
		line, err := bufio.NewReader(f).ReadBytes('\n')
		if err != nil {
			t.Fatal(err)
		}
		var seen struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(line, &seen); err != nil || !strings.HasPrefix(seen.ID, idPrefix) {
			t.Fatalf("the SDK saw %s", line)
		}
		w.Write([]byte(`{"jsonrpc":"2.0","id":"` + seen.ID + `","result":{}}` + "\n"))
		if want := `{"id":` + id + `,"jsonrpc":"2.0","result":{}}` + "\n"; out.String() != want {
			t.Errorf("answer %q, want %q", out.String(), want)
		}
	}
}

// TestStdio_CancelledRequestIsNotAnswered: the cancellation reaches the
// SDK under pact's id, and the answer the SDK still writes is dropped;
// other answers pass.
func TestStdio_CancelledRequestIsNotAnswered(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":5,"method":"tools/call"}` + "\n" +
		`{"jsonrpc":"2.0","id":6,"method":"ping"}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5,"reason":"user"}}` + "\n"
	var out bytes.Buffer
	f, w := filterOf(in, &out)
	r := bufio.NewReader(f)
	var lines []string
	for i := 0; i < 3; i++ {
		l, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, l)
	}
	if !strings.Contains(lines[2], `"requestId":"pact-1"`) {
		t.Fatalf("the cancellation reached the SDK as %s", lines[2])
	}
	w.Write([]byte(`{"jsonrpc":"2.0","id":"pact-1","error":{"code":-32603,"message":"context canceled"}}` + "\n"))
	w.Write([]byte(`{"jsonrpc":"2.0","id":"pact-2","result":{}}` + "\n"))
	if want := `{"id":6,"jsonrpc":"2.0","result":{}}` + "\n"; out.String() != want {
		t.Fatalf("written:\n%s\nwant only:\n%s", out.String(), want)
	}
	// Nothing is owed any more: the end of input does not wait.
	start := time.Now()
	if _, err := io.ReadAll(r); err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatalf("waited %v for a cancelled request", time.Since(start))
	}
}
