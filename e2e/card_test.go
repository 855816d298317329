package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestSection2_1_CardFailingTheChecksIsShownWithItsProblem: `pact card
// --json` on a card without an HTTP+JSON 1.0 interface prints the card as
// received and the problem (the contract's card shape), and exits 1.
func TestSection2_1_CardFailingTheChecksIsShownWithItsProblem(t *testing.T) {
	t.Parallel()
	f := newFakeProvider(t, nil)
	f.Card = func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(cardJSON(f.Iface(), map[string]any{
			"supportedInterfaces": []any{map[string]any{"url": f.Iface(), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}},
		})))
	}
	e := hostileEnv(t, f)
	r := e.run("card", f.URL(), "--json")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var out struct {
		Card map[string]any `json:"card"`
		Pact struct {
			CardURL  string   `json:"cardUrl"`
			Problems []string `json:"problems"`
		} `json:"pact"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("stdout is not the card document: %v\n%s", err, r.stdout)
	}
	if out.Card["name"] != "Hostile Co." || len(out.Pact.Problems) != 1 || !strings.Contains(out.Pact.Problems[0], "HTTP+JSON") {
		t.Fatalf("card document = %+v", out)
	}
	if !strings.Contains(r.stderr, "HTTP+JSON") {
		t.Errorf("stderr does not say what is wrong: %s", r.stderr)
	}
}

// TestIssue31_16_HTMLPageWhereACardShouldBe: a site that answers its card
// URL with a web page (HTTP 200, text/html) is told as such, not as a JSON
// parse error, and --json keeps the status it was served with.
func TestIssue31_16_HTMLPageWhereACardShouldBe(t *testing.T) {
	f := newFakeProvider(t, nil)
	f.Card = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte("\n<!DOCTYPE html>\n<html><head><title>Shop</title></head><body>Welcome</body></html>\n"))
	}
	e := hostileEnv(t, f)
	r := e.run("card", f.URL())
	if r.code != 1 || !strings.Contains(r.stderr, "answered with an HTML page (a web page), not an Agent Card") || strings.Contains(r.stderr, "invalid character") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	r = e.run("card", f.URL(), "--json")
	var out struct {
		Error struct {
			Reason     string `json:"reason"`
			HTTPStatus int    `json:"httpStatus"`
			Message    string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("stdout: %v\n%s", err, r.stdout)
	}
	if r.code != 1 || out.Error.Reason != "INVALID_CARD" || out.Error.HTTPStatus != 200 || !strings.Contains(out.Error.Message, "HTML page") {
		t.Fatalf("exit %d, error %+v", r.code, out.Error)
	}
}
