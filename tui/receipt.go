package tui

import (
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/pact-cli/pact/iostreams"
)

// receiptPanel shows the claims of the last receipt of the current conversation (§5.6).
type receiptPanel struct{ r *ReceiptMark }

func (p *receiptPanel) key(c *chat, k tea.KeyPressMsg) (tea.Cmd, bool) {
	if keyMatches(k, c.keys.Close) {
		c.closePanel()
	}
	return nil, true
}

func (p *receiptPanel) paste(*chat, string) (tea.Cmd, bool) { return nil, true }

func (p *receiptPanel) status(*chat, time.Time) string { return "" }

func (p *receiptPanel) help(c *chat) []string { return helpItems(c.keys.Close, c.keys.Quit) }

func (p *receiptPanel) view(c *chat, w int, _ time.Time) []string {
	r := p.r
	var body []string
	switch {
	case r.Verified:
		body = append(body, c.st.ok.Render("✓ verified")+" — signed by the Brand's Provider")
	case r.Missing:
		body = append(body, c.st.bad.Render("✗ not in pact's archive")+" — pact has no copy of this receipt to show or check")
		for _, pr := range r.Problems {
			body = append(body, "  "+clean(pr))
		}
	case r.Restored:
		body = append(body, c.st.status.Render("? restored, not re-checked")+" — it came back with pact restore, and pact does not take a backup's word that it verified",
			"  `pact receipts verify` checks it against the Brand's published keys")
	default:
		body = append(body, c.st.bad.Render("✗ verification failed")+" — kept apart, not archived as verified")
		for _, pr := range r.Problems {
			body = append(body, "  "+clean(pr))
		}
	}
	body = append(body, "")
	if !r.TS.IsZero() {
		// As every table writes a time.
		body = append(body, "Time: "+r.TS.Local().Format(iostreams.HumanTime))
	}
	body = append(body, "Scopes used: "+cleanList(r.ScopesUsed), "Actions:")
	if len(r.Actions) == 0 {
		body = append(body, "  none")
	}
	for _, a := range r.Actions {
		body = append(body, "• "+clean(a))
	}
	return c.panelFrame(w, "Receipt "+clean(shortReceiptID(r.ID)), body)
}

// shortReceiptID shows a full receipt id (64 hex characters, as the
// conversation keeps it) by its first 12, as every table does; anything
// else as given.
func shortReceiptID(id string) string {
	if len(id) != 64 {
		return id
	}
	for _, c := range id {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return id
		}
	}
	return id[:12]
}
