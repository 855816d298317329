package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// View draws the screen: header, rule, scrollback or panel, status, input, help.
// Its cost depends on the window size, not on the length of the conversation.
func (m Model) View() string {
	c := m.c
	w, h := c.width, c.scrollHeight()
	now := c.now()
	out := make([]string, 0, c.height+2)
	out = append(out, renderHeader(&c.st, c.header, now, w)...)
	out = append(out, c.st.rule.Render(strings.Repeat("─", w)))

	var area []string
	switch c.mode {
	case modeLogin:
		area = c.loginPanel(w, now)
	case modeReceipt:
		area = c.receiptPanel(w)
	default:
		area = c.sb.visible(w, h)
	}
	if len(area) > h {
		area = area[:h]
	}
	out = append(out, area...)
	for range h - len(area) {
		out = append(out, "")
	}
	out = append(out, fit(c.statusLine(now), w))
	out = append(out, c.ta.View())
	help := c.st.help.Render(fit(c.helpLine(w), w))
	if c.osc52 != "" {
		help = c.osc52 + help // zero-width; emitted inside the frame so it never races it
	}
	out = append(out, help)
	return strings.Join(out, "\n")
}

// statusLine is the line above the input: a flash message, the wait, or the scroll state.
func (c *chat) statusLine(now time.Time) string {
	switch {
	case c.flash != "":
		return c.st.status.Render(clean(c.flash))
	case c.pending != nil:
		return c.spin.View() + c.st.status.Render(" waiting for "+c.brandName()+" "+elapsed(now.Sub(c.pending.started)))
	case c.mode == modeConfirmNew:
		return c.st.status.Render("Start a new conversation? (y/n)")
	case c.mode == modeChat && c.sb.unseen && !c.sb.follow:
		return c.st.status.Render("↓ new messages below · End")
	case c.mode == modeChat && !c.sb.follow && len(c.sb.entries) > 0:
		return c.st.dim.Render(fmt.Sprintf("message %d of %d · End returns to the bottom", min(c.sb.top.turn+1, len(c.sb.entries)), len(c.sb.entries)))
	}
	return ""
}

// elapsed formats a wait: "3s", "1m05s".
func elapsed(d time.Duration) string {
	s := int(max(d, 0).Seconds())
	if s < 60 {
		return fmt.Sprintf("%ds", s)
	}
	return fmt.Sprintf("%dm%02ds", s/60, s%60)
}

// helpLine lists the keys of the current view, most important first, as many as fit.
func (c *chat) helpLine(w int) string {
	var items []string
	switch {
	case c.mode == modeLogin:
		items = []string{"o open link", "c copy code", "Esc cancel", "Ctrl+C quit"}
	case c.mode == modeReceipt:
		items = []string{"Esc close", "Ctrl+C quit"}
	case c.mode == modeConfirmNew:
		items = []string{"y new conversation", "n keep this one", "Ctrl+C quit"}
	case c.pending != nil:
		items = []string{"Esc stop waiting", "Ctrl+C quit", "PgUp/PgDn scroll", "keep typing: Enter sends once the reply is in"}
	default:
		items = []string{"Enter send", "Ctrl+C quit", "/help", "Alt+Enter newline", "PgUp/PgDn scroll", "Tab complete", "Ctrl+R receipt"}
	}
	return joinFit(items, " · ", w)
}

// joinFit joins items with sep, leaving out the items that do not fit in w cells.
func joinFit(items []string, sep string, w int) string {
	var b strings.Builder
	for _, it := range items {
		add := it
		if b.Len() > 0 {
			add = sep + it
		}
		if ansi.StringWidth(b.String())+ansi.StringWidth(add) > w {
			continue
		}
		b.WriteString(add)
	}
	return b.String()
}

// panel draws a titled block of lines wrapped to width w.
func (c *chat) panel(w int, title string, body []string) []string {
	inner := max(w-2, 4)
	out := []string{c.st.panelTitle.Render(fit(title, w)), ""}
	for _, b := range body {
		if b == "" {
			out = append(out, "")
			continue
		}
		for _, l := range wrapStyled(b, inner) {
			out = append(out, "  "+l)
		}
	}
	return out
}

// wrapStyled wraps a line that may carry styles.
func wrapStyled(s string, w int) []string {
	return strings.Split(ansi.Wrap(s, w, ""), "\n")
}

func (c *chat) loginPanel(w int, now time.Time) []string {
	l := c.login
	if l == nil {
		return nil
	}
	title := "Log in to " + c.brandName()
	var body []string
	if l.stepUp != nil {
		title = "Permission needed"
		if t := clean(l.stepUp.Text); t != "" {
			body = append(body, t, "")
		}
	}
	body = append(body, "Scopes asked:")
	for _, s := range l.scopes {
		line := "• " + c.st.title.Render(clean(s.ID))
		if d := clean(s.Description); d != "" {
			line += " — " + d
		}
		body = append(body, line)
	}
	body = append(body, "")
	if l.code == nil {
		body = append(body, c.spin.View()+" Asking the Brand for a login code…")
		return c.panel(w, title, body)
	}
	dc := l.code
	body = append(body,
		"Code: "+c.st.code.Render(" "+clean(dc.UserCode)+" "),
		// The link on a line of its own, so that one that fits the panel is never broken
		// (a broken link cannot be clicked or copied in one piece).
		"Link:",
		clean(dc.VerificationURIComplete),
	)
	switch {
	case dc.BrowserOpened:
		body = append(body, "The link is open in your browser: log in with the Brand and approve.")
	case dc.BrowserErr != nil:
		body = append(body, c.st.err.Render("Could not open the browser: "+clean(dc.BrowserErr.Error())+".")+" Open the link yourself.")
	default:
		body = append(body, "Open the link, log in with the Brand and approve.")
	}
	body = append(body, "")
	if left := dc.ExpiresAt.Sub(now); left > 0 {
		body = append(body, "Waiting for approval · code expires in "+countdown(left))
	} else {
		body = append(body, c.st.bad.Render("The code has expired.")+" Esc, then try again.")
	}
	return c.panel(w, title, body)
}

func (c *chat) receiptPanel(w int) []string {
	r := c.last
	if r == nil {
		return nil
	}
	var body []string
	if r.Verified {
		body = append(body, c.st.ok.Render("✓ verified")+" — signed by the Brand's Provider (§5.6)")
	} else {
		body = append(body, c.st.bad.Render("✗ verification failed")+" — kept apart, not archived as verified")
		for _, p := range r.Problems {
			body = append(body, "  "+clean(p))
		}
	}
	body = append(body, "")
	if !r.TS.IsZero() {
		body = append(body, "Time: "+r.TS.Format(time.RFC3339))
	}
	sc := strings.Join(r.ScopesUsed, ", ")
	if sc == "" {
		sc = "none"
	}
	body = append(body, "Scopes used: "+clean(sc), "Actions:")
	if len(r.Actions) == 0 {
		body = append(body, "  none")
	}
	for _, a := range r.Actions {
		body = append(body, "• "+clean(a))
	}
	return c.panel(w, "Receipt "+clean(r.ID), body)
}
