package server

import (
	"bytes"
	"encoding/json"
	"os"
	"sort"
	"strings"
	"testing"
)

// TestIssue29_OpenAPIServedEqualsDocsAndDocumentsEveryRoute: the document
// served at /v1/openapi.json is docs/openapi.json byte for byte; every
// mounted route (method and path) is an operation of it, and every
// operation of it is mounted; operation ids are unique.
func TestIssue29_OpenAPIServedEqualsDocsAndDocumentsEveryRoute(t *testing.T) {
	ts := startServer(t, nil)
	resp, served := ts.get("/v1/openapi.json")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	docs, err := os.ReadFile("../docs/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(served, docs) {
		t.Fatal("the served OpenAPI document differs from docs/openapi.json: copy server/openapi.json to docs/openapi.json")
	}
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(docs, &doc); err != nil || doc.OpenAPI != "3.1.0" {
		t.Fatalf("not an OpenAPI 3.1 document: %v %q", err, doc.OpenAPI)
	}
	documented := map[string]bool{}
	ids := map[string]bool{}
	for path, ops := range doc.Paths {
		for method, raw := range ops {
			if method == "parameters" {
				continue
			}
			var op struct {
				OperationID string                     `json:"operationId"`
				Responses   map[string]json.RawMessage `json:"responses"`
			}
			json.Unmarshal(raw, &op)
			if op.OperationID == "" || ids[op.OperationID] || len(op.Responses) == 0 {
				t.Errorf("%s %s: operationId %q (unique?) and responses needed", method, path, op.OperationID)
			}
			ids[op.OperationID] = true
			documented[strings.ToUpper(method)+" "+path] = true
		}
	}
	mounted := map[string]bool{}
	for _, rt := range ts.srv.Routes() {
		p := rt.Pattern
		if p == "/{$}" {
			p = "/"
		}
		key := rt.Method + " " + p
		mounted[key] = true
		if !documented[key] {
			t.Errorf("%s is mounted but not in docs/openapi.json", key)
		}
	}
	var extra []string
	for k := range documented {
		if !mounted[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	if len(extra) > 0 {
		t.Errorf("documented but not mounted: %v", extra)
	}
}
