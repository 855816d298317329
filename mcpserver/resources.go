package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pact-cli/pact/agent"
	"github.com/pact-cli/pact/receipts"
)

// receiptURIPrefix starts the URI of an archived receipt's resource.
const receiptURIPrefix = "pact://receipts/"

func receiptURI(id string) string { return receiptURIPrefix + id }

// codeResourceNotFound is MCP 2025-11-25's error for a resource that does
// not exist (the SDK answers -32602, invalid params).
const codeResourceNotFound = -32002

// notFound is the answer for a receipt uri that names none.
func notFound(uri string) error {
	data, _ := json.Marshal(map[string]string{"uri": uri})
	return &jsonrpc.Error{Code: codeResourceNotFound, Message: "Resource not found", Data: data}
}

// resourceNotFound makes every "Resource not found" of resources/read,
// the SDK's own for a URI no template matches included, -32002.
func resourceNotFound(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		var je *jsonrpc.Error
		if method == "resources/read" && errors.As(err, &je) && je.Code == jsonrpc.CodeInvalidParams && je.Message == "Resource not found" {
			return nil, &jsonrpc.Error{Code: codeResourceNotFound, Message: je.Message, Data: je.Data}
		}
		return res, err
	}
}

func (s *Server) addResources() {
	s.mcp.AddReceivingMiddleware(resourceNotFound)
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:  "receipt",
		Title: "A signed receipt from pact's archive",
		Description: "One archived receipt (PACT §5.6) as `pact receipts show --json` prints it: the compact JWS as received, " +
			"the public JWK that verified it and its thumbprint, the claims, and whether it verified. {id} is the full id or a unique prefix " +
			"(4+ characters, e.g. the 12 that send_message returns). Anyone can check the JWS with the JWK, without pact.",
		MIMEType:    "application/json",
		URITemplate: receiptURIPrefix + "{id}",
	}, s.readReceipt)
}

func (s *Server) readReceipt(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	id := strings.TrimPrefix(uri, receiptURIPrefix)
	if id == uri || id == "" || strings.Contains(id, "/") {
		return nil, notFound(uri)
	}
	rec, err := s.cfg.Agent.Receipt(ctx, id)
	if errors.Is(err, receipts.ErrNotFound) || errors.Is(err, agent.ErrNoArchive) {
		return nil, notFound(uri)
	}
	if err != nil {
		return nil, errors.New(clean(err.Error()))
	}
	e := rec.Entry
	// The entry's strings (claims included) are the Brand's: cleaned.
	raw, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	text, err := json.MarshalIndent(rawJSON(raw), "", "  ")
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(text)}}}, nil
}
