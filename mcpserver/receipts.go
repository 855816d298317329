package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pact-cli/pact/agent"
	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/receipts"
)

// ---- receipts

// ReceiptsInput is list_receipts' input.
type ReceiptsInput struct {
	Brand string `json:"brand,omitempty" jsonschema:"only this Brand's receipts (a domain, an origin, a card URL or an interface URL)"`
	Since string `json:"since,omitempty" jsonschema:"only receipts at or after this time (RFC 3339, or YYYY-MM-DD)"`
	Limit int    `json:"limit,omitempty" jsonschema:"keep only the newest N receipts (default 100)"`
}

// defaultReceiptLimit is how many receipts list_receipts returns when the
// call sets no limit: a model's context is not the place for an archive.
const defaultReceiptLimit = 100

// ReceiptItem mirrors an item of `pact receipts list --json`: brand is the
// receipt's signed brand claim (the interface URL), cardUrl and brandName
// name the Brand as pact knows it ("" when it does not).
type ReceiptItem struct {
	ID         string   `json:"id"`
	Brand      string   `json:"brand" jsonschema:"the receipt's brand claim: the interface URL"`
	GrantID    string   `json:"grantId"`
	User       string   `json:"user"`
	ScopesUsed []string `json:"scopesUsed"`
	Actions    []any    `json:"actions"`
	TS         string   `json:"ts"`
	Verified   bool     `json:"verified"`
	Problems   []string `json:"problems" jsonschema:"why a receipt kept apart failed; empty when verified"`
	CardURL    string   `json:"cardUrl" jsonschema:"the Brand's Agent Card URL"`
	BrandName  string   `json:"brandName" jsonschema:"the card's name"`
	// InterfaceURL is the brand claim under the name the other results
	// give the interface URL (as `pact receipts list --json`).
	InterfaceURL string   `json:"interfaceUrl" jsonschema:"the A2A interface URL (the same as brand)"`
	Replayed     bool     `json:"replayed" jsonschema:"the Brand returned this same receipt on more than one turn: it proves the first only"`
	Notes        []string `json:"notes" jsonschema:"why a verified receipt means less than it seems (replayed, Brand labels set aside); empty otherwise"`
	Restored     bool     `json:"restored" jsonschema:"it came back with pact restore and was not checked since: not verified, whatever the backup said, until pact receipts verify checks it"`
	// URI is the receipt's MCP resource.
	URI string `json:"uri"`
}

// ReceiptList is list_receipts' result.
type ReceiptList struct {
	Receipts []ReceiptItem `json:"receipts"`
	// Total is how many receipts matched before limit.
	Total int `json:"total"`
	// Problems names archive entries that could not be read (they are
	// left out of receipts).
	Problems   []string    `json:"problems"`
	ThirdParty *ThirdParty `json:"thirdParty" jsonschema:"which members hold the Brands' words"`
}

func (s *Server) listReceipts(ctx context.Context, _ *mcp.CallToolRequest, in ReceiptsInput) (*mcp.CallToolResult, ReceiptList, error) {
	if in.Limit < 0 {
		return nil, ReceiptList{}, errors.New("limit must be 0 (all) or more")
	}
	lo := receipts.ListOptions{Brand: in.Brand} // the Brand by receipts.BrandFilter, as pact receipts list --brand
	if in.Since != "" {
		var err error
		if lo.Since, err = time.Parse(time.RFC3339, in.Since); err != nil {
			if lo.Since, err = time.Parse(time.DateOnly, in.Since); err != nil {
				return nil, ReceiptList{}, fmt.Errorf("since %q is not a time: give RFC 3339 (2026-05-01T09:00:00Z) or a date (2026-05-01)", clean(in.Since))
			}
		}
	}
	limit := in.Limit
	if limit == 0 {
		limit = defaultReceiptLimit
	}
	// The archive selects (brand, since) and gives the oldest first; the
	// newest limit are kept as they come, so memory stays bounded, and
	// Total counts every match.
	out := ReceiptList{Receipts: []ReceiptItem{}, Problems: []string{}}
	var ring []agent.ReceiptItem // the newest limit; ring[Total%limit] is the oldest once full
	err := s.cfg.Agent.Receipts(ctx, lo, func(it agent.ReceiptItem) error {
		if len(ring) < limit {
			ring = append(ring, it)
		} else {
			ring[out.Total%limit] = it
		}
		out.Total++
		return nil
	})
	if errors.Is(err, agent.ErrNoArchive) {
		return nil, ReceiptList{}, err
	}
	if err != nil {
		out.Problems = append(out.Problems, clean(err.Error()))
	}
	kept := ring
	if out.Total > limit {
		i := out.Total % limit
		kept = append(append([]agent.ReceiptItem{}, ring[i:]...), ring[:i]...)
	}
	lines := []string{}
	if out.Total > len(kept) {
		lines = append(lines, fmt.Sprintf("The newest %d of %d receipts (limit gives more):", len(kept), out.Total))
	}
	for _, it := range kept {
		ref := conversation.BrandRef{CardURL: it.CardURL, Name: it.BrandName} // named as `pact receipts list` names it
		ri := ReceiptItem{ID: it.ID, Brand: clean(it.Brand), GrantID: clean(it.GrantID), User: clean(it.User), ScopesUsed: cleanAll(it.ScopesUsed),
			Actions: []any{}, TS: clean(it.TS), Verified: it.Verified, Problems: cleanAll(it.Problems),
			CardURL: clean(ref.CardURL), BrandName: clean(ref.Name), InterfaceURL: clean(it.Brand), Replayed: it.Replayed, Notes: cleanAll(it.Notes), Restored: it.Restored, URI: receiptURI(it.ID)}
		var tools []string
		for _, a := range it.Actions {
			v := rawJSON(a)
			ri.Actions = append(ri.Actions, v)
			if m, ok := v.(map[string]any); ok {
				if t, ok := m["tool"].(string); ok {
					tools = append(tools, t)
				}
			}
		}
		out.Receipts = append(out.Receipts, ri)
		v := "verified"
		if ri.Restored {
			v = "NOT verified: restored from a backup, not re-checked (`pact receipts verify` checks it)"
		} else if !ri.Verified {
			v = "NOT verified"
		} else if ri.Replayed {
			v = "verified for its first turn only (REPLAYED: " + strings.Join(ri.Notes, "; ") + ")"
		}
		lines = append(lines, fmt.Sprintf("%s  %s  %s  scopes %s  actions %s  %s", receipts.ShortID(ri.ID), ri.TS, agent.ReceiptLabel(conversation.BrandRef{Name: ri.BrandName, CardURL: ri.CardURL}, ri.Brand),
			strings.Join(ri.ScopesUsed, " "), strings.Join(tools, ", "), v))
	}
	out.ThirdParty = thirdParty("the Brands that signed these receipts", "/receipts/*/brand", "/receipts/*/grantId", "/receipts/*/user", "/receipts/*/scopesUsed",
		"/receipts/*/actions", "/receipts/*/ts", "/receipts/*/problems", "/receipts/*/brandName", "/problems")
	r := newReply()
	if len(lines) == 0 {
		r.say("pact: no receipts.")
	} else {
		r.say("pact: the receipts, each with its signed claims (the Brand's words) and pact's verdict:")
		r.quote("the Brands' signed claims and names", lines...)
	}
	if len(out.Problems) > 0 {
		r.say("pact: archive entries that could not be read:").quote("pact's findings, which may quote the archive", out.Problems...)
	}
	return r.result(out), out, nil
}

// VerifyInput is verify_receipts' input.
type VerifyInput struct {
	IDs []string `json:"ids,omitempty" jsonschema:"receipt ids or unique prefixes (4+ characters); none = every verified receipt"`
}

// VerifyOutput mirrors `pact receipts verify --json`.
type VerifyOutput struct {
	Verified   int              `json:"verified"`
	Failed     int              `json:"failed"`
	Unchecked  int              `json:"unchecked"`
	Results    []receipts.Check `json:"results"`
	ThirdParty *ThirdParty      `json:"thirdParty" jsonschema:"which members may quote the Brands' words"`
}

func (s *Server) verifyReceipts(ctx context.Context, _ *mcp.CallToolRequest, in VerifyInput) (*mcp.CallToolResult, VerifyOutput, error) {
	checked, err := s.cfg.Agent.VerifyReceipts(ctx, agent.VerifyRequest{IDs: in.IDs})
	if errors.Is(err, agent.ErrNoArchive) {
		return nil, VerifyOutput{}, err
	}
	if err != nil {
		return nil, VerifyOutput{}, toolError(err)
	}
	checks := make([]receipts.Check, len(checked))
	for i, c := range checked {
		checks[i] = c.Check
	}
	tally := agent.Count(checks) // the count of pact receipts verify
	out := VerifyOutput{Verified: tally.Verified, Failed: tally.Failed, Unchecked: tally.Unchecked, Results: []receipts.Check{}}
	lines := []string{}
	for _, c := range checks {
		c.Problems = cleanAll(c.Problems)
		switch {
		case c.Verified:
			lines = append(lines, receipts.ShortID(c.ID)+"  verified")
		case c.Unchecked:
			lines = append(lines, receipts.ShortID(c.ID)+"  not checked: "+strings.Join(c.Problems, "; "))
		default:
			lines = append(lines, receipts.ShortID(c.ID)+"  FAILED: "+strings.Join(c.Problems, "; "))
		}
		out.Results = append(out.Results, c)
	}
	out.ThirdParty = thirdParty("the Brands' receipts and keys", "/results/*/problems")
	r := newReply().say("pact: " + tally.String() + ".")
	if len(lines) > 0 {
		r.say("pact: each receipt's outcome (the findings may quote the receipt's claims):").quote("pact's findings on the Brands' receipts", lines...)
	}
	return r.result(out), out, nil
}
