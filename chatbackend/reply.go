package chatbackend

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/receipts"
	"github.com/pact-cli/pact/store"
	"github.com/pact-cli/pact/tui"
)

// agentTurn is the reply of res as a turn, with its receipt mark.
func (b *Backend) agentTurn(res *conversation.Result) tui.Turn {
	t := tui.Turn{Role: tui.RoleAgent, Text: res.Text(), At: time.Now()}
	var md map[string]any
	if res.Message != nil {
		t.ID = res.Message.ID
		md = res.Message.Metadata
		t.Parts = parts(res.Message.Parts)
	} else if res.Task != nil {
		t.ID = string(res.Task.ID)
		md = res.Task.Metadata
		if m := res.Task.Status.Message; m != nil {
			t.Parts = parts(m.Parts)
		}
	}
	if rs := res.Receipt; rs != nil {
		m := &tui.ReceiptMark{ID: rs.ID, Verified: rs.Verified, Problems: append([]string(nil), rs.Problems...)}
		b.fillClaims(m, md)
		t.Receipt = m
	}
	return t
}

// archiveVerdict makes the verdict of m, the receipt mark of a stored turn, the archive's
// (agent.Agent.Receipt: the entry as receipts.Archive.Get checks it), never the turn's own
// copy of it: a restore puts that back as the file had it (issue 31 item 6), and it says
// nothing of a receipt that could not be archived (item 5), which is Missing. A receipt
// a restore put back is Restored, never Verified, until `pact receipts verify` checks it. Without an
// archive (Options.Receipts nil) m is left as it is.
func (b *Backend) archiveVerdict(ctx context.Context, m *tui.ReceiptMark) {
	if b.opts.Receipts == nil || m.ID == "" {
		return
	}
	e, err := b.opts.Receipts.Receipt(ctx, m.ID)
	switch {
	case errors.Is(err, receipts.ErrNotFound):
		m.Verified, m.Missing = false, true
		m.Problems = []string{"it could not be archived when it came, or was left out of the archive since"}
	case err != nil:
		m.Verified = false
		m.Problems = []string{"pact could not read it from its archive: " + err.Error()}
	default:
		m.Verified, m.Restored = e.Verified, e.Restored
		if !e.Verified {
			m.Problems = append([]string(nil), e.Problems...)
		}
	}
}

// fillClaims completes m with the receipt's claims (§5.6): from the archive entry when
// there is one, else from the reply's metadata (md, may be nil).
func (b *Backend) fillClaims(m *tui.ReceiptMark, md map[string]any) {
	var raw json.RawMessage
	if b.opts.Receipts != nil && m.ID != "" {
		if e, err := b.opts.Receipts.Receipt(context.Background(), m.ID); err == nil {
			raw = e.Claims
			if !e.Verified && len(m.Problems) == 0 {
				m.Problems = append([]string(nil), e.Problems...)
			}
		}
	}
	if raw == nil && md != nil {
		if rc, ok, err := receipts.FromMetadata(md); ok && err == nil {
			raw = rc.Claims
		}
	}
	var c receipts.Claims
	if raw == nil || json.Unmarshal(raw, &c) != nil {
		return
	}
	m.ScopesUsed = append([]string(nil), c.ScopesUsed...)
	for _, a := range c.Actions {
		var act struct {
			Tool     string `json:"tool"`
			ArgsHash string `json:"argsHash"`
		}
		if json.Unmarshal(a, &act) != nil || act.Tool == "" {
			continue
		}
		s := act.Tool
		if act.ArgsHash != "" {
			s += " (argsHash " + short(act.ArgsHash, 12) + ")"
		}
		m.Actions = append(m.Actions, s)
	}
	if ts, err := time.Parse(time.RFC3339, c.TS); err == nil {
		m.TS = ts.Local()
	}
}

func short(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// parts converts the non-text parts of a reply for the chat, by the same
// rule the store keeps them with (conversation.PartsOf): data as JSON, raw
// bytes as an inline file, a URL as a file by reference (A2A Part). Text
// parts are the turn's Text.
func parts(ps []*a2a.Part) []tui.Part {
	var out []tui.Part
	for _, p := range conversation.PartsOf(ps) {
		tp := tui.Part{Kind: tui.PartFile, Name: p.Name, MediaType: p.MediaType, Data: p.Data, URL: p.URL}
		if p.Kind == store.PartData {
			tp = tui.Part{Kind: tui.PartData, JSON: []byte(p.JSON), Name: p.Name, MediaType: p.MediaType}
		}
		out = append(out, tp)
	}
	return out
}
