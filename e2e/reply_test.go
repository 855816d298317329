package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// partsReply is a §4.2 reply with text, data and file parts.
func partsReply() string {
	b, _ := json.Marshal(map[string]any{"message": map[string]any{
		"messageId": "r-1", "contextId": "ctx-1", "role": "ROLE_AGENT", "parts": []any{
			map[string]any{"text": "Here is your **invoice**."},
			map[string]any{"data": map[string]any{"order": "A-1", "total": 42}},
			map[string]any{"raw": []byte("%PDF-1.7 invoice"), "filename": "../invoice.pdf", "mediaType": "application/pdf"},
			map[string]any{"url": "https://brand.example/p.png", "filename": "photo.png", "mediaType": "image/png"},
		},
	}})
	return string(b)
}

// §4.2: `pact send` shows every part of the reply, not only the text: data
// as indented JSON, files as name, type and size; --save-files writes the
// inline files, under a safe name, never overwriting. Not a terminal: plain
// text, no escape sequences. --json is unchanged (the reply as received).
func TestSection4_2_SendShowsAndSavesNonTextParts(t *testing.T) {
	t.Parallel()
	f := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/a2a+json")
		w.Write([]byte(partsReply()))
	})
	e := hostileEnv(t, f)
	dir := filepath.Join(t.TempDir(), "files")

	r := e.must("send", f.URL(), "my invoice?", "--save-files", dir)
	for _, want := range []string{
		"Here is your **invoice**.",
		"data:\n  {\n    \"order\": \"A-1\",\n    \"total\": 42\n  }",
		"file ../invoice.pdf (application/pdf, 16 B)",
		"file photo.png (image/png) at https://brand.example/p.png",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "\x1b") {
		t.Errorf("escape sequences on a pipe: %q", r.stdout)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "invoice.pdf")); err != nil || string(b) != "%PDF-1.7 invoice" {
		t.Fatalf("saved file = %q, %v\nstderr: %s", b, err, r.stderr)
	}
	if !strings.Contains(r.stderr, "saved ../invoice.pdf (16 B) to "+filepath.Join(dir, "invoice.pdf")) {
		t.Errorf("stderr does not say where the file went:\n%s", r.stderr)
	}
	r = e.must("send", f.URL(), "again", "--save-files", dir)
	if _, err := os.Stat(filepath.Join(dir, "invoice (2).pdf")); err != nil {
		t.Errorf("the second file was not saved beside the first: %v\n%s", err, r.stderr)
	}

	// Without --save-files: a hint, nothing written.
	r = e.must("send", f.URL(), "and again")
	if !strings.Contains(r.stderr, "--save-files DIR") {
		t.Errorf("no hint about saving files:\n%s", r.stderr)
	}

	// --json: the reply as received, nothing rendered.
	r = e.must("send", f.URL(), "json please", "--json")
	var doc struct {
		Reply struct {
			Message struct {
				Parts []map[string]any `json:"parts"`
			} `json:"message"`
		} `json:"reply"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || len(doc.Reply.Message.Parts) != 4 {
		t.Fatalf("--json output = %v\n%s", err, r.stdout)
	}
	if strings.Contains(r.stdout, "data:\n") {
		t.Errorf("--json output was rendered:\n%s", r.stdout)
	}
}

// §6, §4.3: an error answer is final. A Provider that answers every message
// with INVALID_PARAMS "Unknown contextId" gets exactly one request; the
// human line says what happened in plain words and offers --new; --json
// keeps the wire detail. A 503 is retried with the same messageId.
func TestSection6_ErrorAnswerIsFinalAgainstMisbehavingProvider(t *testing.T) {
	t.Parallel()
	f := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/a2a+json")
		w.WriteHeader(400)
		w.Write([]byte(`{"error":{"code":400,"status":"INVALID_ARGUMENT","message":"Unknown contextId","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"INVALID_PARAMS","domain":"a2a-protocol.org"}]}}`))
	})
	e := hostileEnv(t, f)
	r := e.run("send", f.URL(), "--context", "ctx-forgotten", "hello")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s", r.code, r.stderr)
	}
	if n := f.sends.Load(); n != 1 {
		t.Fatalf("%d requests for one error answer, want 1 (it was retried)", n)
	}
	for _, bad := range []string{"INVALID_PARAMS", "HTTP 400", "Unknown contextId", "§", "http://", "message id"} {
		if strings.Contains(r.stderr, bad) {
			t.Errorf("human error line contains %q:\n%s", bad, r.stderr)
		}
	}
	if !strings.Contains(r.stderr, "no longer knows this conversation") || !strings.Contains(r.stderr, "--new") {
		t.Errorf("human error line does not say what happened and what to do:\n%s", r.stderr)
	}

	// --debug shows the detail on the error line.
	r = e.run("send", f.URL(), "--context", "ctx-forgotten", "hello", "--debug")
	if !strings.Contains(r.stderr, "detail: contextId ctx-forgotten: INVALID_PARAMS (HTTP 400): Unknown contextId") {
		t.Errorf("--debug lacks the wire detail:\n%s", r.stderr)
	}

	je := wantError(t, e.run("send", f.URL(), "--context", "ctx-forgotten", "hello", "--json"), 1, "INVALID_PARAMS", 400, "no longer knows", "Unknown contextId")
	_ = je
	if n := f.sends.Load(); n != 3 {
		t.Fatalf("%d requests after three sends, want 3", n)
	}

	// 503 is not an answer: retried with the same messageId (§4.3).
	g := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) })
	e2 := hostileEnv(t, g)
	r = e2.run("send", g.URL(), "hello")
	if r.code != 1 || g.sends.Load() < 2 {
		t.Fatalf("503: exit %d after %d requests, want retries", r.code, g.sends.Load())
	}
	if strings.Contains(r.stderr, "503") || !strings.Contains(r.stderr, "try again later") {
		t.Errorf("503 human line:\n%s", r.stderr)
	}
}
