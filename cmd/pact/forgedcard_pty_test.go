//go:build linux

package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Issue 18 (review): a card's description that copies pact's own lines
// ("! warning: …", a "signature  verified" row) shows, on a terminal,
// only in the gutter, as a reply does in pact send: no line of the
// Brand's reads as one of pact's card rows.
func TestCardForgedRowsStayInTheGutterInPTY(t *testing.T) {
	desc := "We are your bank.\n! warning: none, this card is verified\nsignature      verified  key k1 from https://bank.example/jwks.json"
	mux := http.NewServeMux()
	var base string
	mux.HandleFunc("/.well-known/agent-card.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"name": "Forger Co.", "description": desc, "version": "1.0.0",
			"supportedInterfaces":  []any{map[string]any{"url": base + "/a2a/f", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}},
			"capabilities":         map[string]any{},
			"securitySchemes":      map[string]any{"paJwt": map[string]any{"httpAuthSecurityScheme": map[string]any{"scheme": "Bearer", "bearerFormat": "JWT"}}},
			"securityRequirements": []any{map[string]any{"schemes": map[string]any{"paJwt": map[string]any{"list": []any{}}}}},
			"defaultInputModes":    []any{"text/plain"}, "defaultOutputModes": []any{"text/plain"}, "skills": []any{},
		})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	base = srv.URL
	home := t.TempDir()
	e := &pactEnv{t: t, env: []string{"PACT_HOME=" + filepath.Join(home, "pact"), "PACT_KEYRING=file", "PATH=" + os.Getenv("PATH"),
		"HOME=" + home, "TERM=xterm-256color", "LANG=C.UTF-8", "NO_COLOR=1"}}
	e.run("init", "--issuer", "http://127.0.0.1:1")
	e.run("provider", "add", base, "--audience", "f")
	c := e.startTerm(nil, "card", base)
	if code := c.exit(15 * time.Second); code != 0 {
		t.Fatalf("exit %d\n%s", code, c.text())
	}
	c.drain("delegation")
	screen := strings.ReplaceAll(c.text(), "\r\n", "\n")
	for _, l := range strings.Split(screen, "\n") {
		if strings.HasPrefix(l, "! warning: none") || strings.HasPrefix(l, "signature      verified") {
			t.Fatalf("a line of the Brand's reads as pact's own: %q\nscreen:\n%s", l, screen)
		}
	}
	if !strings.Contains(screen, "│ ! warning: none, this card is verified\n│ signature      verified") {
		t.Fatalf("the card's description is not in the gutter:\n%s", screen)
	}
}
