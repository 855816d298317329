package tui

import (
	"fmt"
	"image/color"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/pact-cli/pact/iostreams"
)

// styles holds every style of the chat. The palette is fixed: the 16 ANSI colours, which
// the terminal's own theme maps to something readable on its background, so no style needs
// to know whether the background is dark. With NoColor the styles keep bold, faint and
// reverse but carry no colour (https://no-color.org).
type styles struct {
	brand, dim, rule        lipgloss.Style
	user, agent, sys, err   lipgloss.Style
	ok, bad, code, title    lipgloss.Style
	help, status, input     lipgloss.Style
	cursor, placeholder     lipgloss.Style
	panelTitle, panelBorder lipgloss.Style
	// wm counts widths as the renderer does: per code point (wcwidth) until the terminal
	// reports grapheme clustering (mode 2027).
	wm ansi.Method
}

func newStyles(noColor bool) styles {
	col := func(c string) color.Color {
		if noColor {
			return lipgloss.NoColor{}
		}
		return lipgloss.Color(c)
	}
	s := lipgloss.NewStyle
	return styles{
		brand:       s().Bold(true),
		dim:         s().Faint(true),
		rule:        s().Foreground(col("8")),
		user:        s().Bold(true).Foreground(col("6")),
		agent:       s().Bold(true).Foreground(col("2")),
		sys:         s().Faint(true),
		err:         s().Foreground(col("1")),
		ok:          s().Foreground(col("2")),
		bad:         s().Bold(true).Foreground(col("1")),
		code:        s().Bold(true).Reverse(true),
		title:       s().Bold(true),
		help:        s().Faint(true),
		status:      s().Foreground(col("3")),
		input:       s(),
		cursor:      s().Reverse(true),
		placeholder: s().Faint(true),
		panelTitle:  s().Bold(true).Foreground(col("5")),
		panelBorder: s().Foreground(col("5")),
		wm:          ansi.WcWidth,
	}
}

// clean turns untrusted text (an agent's reply, an error from the network, a name from a
// card) into text safe to draw: tabs become four spaces, then iostreams.Sanitize, the one
// sanitiser of every human path, shows escape sequences, bare C0/C1 controls and bidi
// controls visibly (`\x1b`, `\u202e`) and turns CR LF into LF. A Brand must not be able to
// drive the terminal.
//
// It is the ONE door for remote text into the chat: every string that came from the other
// side passes through it before it is drawn.
func clean(s string) string {
	s = iostreams.Sanitize(strings.ReplaceAll(s, "\t", "    "))
	return strings.TrimRight(s, "\n ")
}

// cleanLine is clean for a single-line field (a Brand's name, a scope id or
// description, a user_code, a link): iostreams.SanitizeLine also shows line
// breaks visibly ("\n"), so remote text cannot start a line of its own and
// fake one (another scope in the consent list, a "signed by" line).
func cleanLine(s string) string {
	return iostreams.SanitizeLine(strings.TrimRight(s, "\n "))
}

// cleanList is remote items (scopes) through clean, joined by ", "; "none" when there are none.
func cleanList(ss []string) string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = clean(s)
	}
	if list := strings.Join(out, ", "); list != "" {
		return list
	}
	return "none"
}

// wrap wraps plain text to width cells, widths counted as the renderer counts them
// (st.wm), and returns its lines. Words longer than the width are broken.
func (st *styles) wrap(s string, width int) []string {
	return wrapMethod(st.wm, s, width)
}

// fit truncates one line to width cells (counted as st.wm) with an ellipsis.
func (st *styles) fit(s string, width int) string {
	if width < 1 {
		return ""
	}
	if st.wm.StringWidth(s) <= width {
		return s
	}
	return st.wm.Truncate(s, width, "…")
}

// wrap is wrapMethod with grapheme widths (text without per-code-point surprises).
func wrap(s string, width int) []string { return wrapMethod(ansi.GraphemeWidth, s, width) }

func wrapMethod(m ansi.Method, s string, width int) []string {
	if width < 1 {
		width = 1
	}
	var out []string
	for _, para := range strings.Split(s, "\n") {
		w := m.Wrap(para, width, "")
		for _, l := range strings.Split(w, "\n") {
			out = append(out, strings.TrimRight(l, " "))
		}
	}
	return out
}

// fit truncates one line to width cells with an ellipsis.
func fit(s string, width int) string {
	if width < 1 {
		return ""
	}
	if ansi.StringWidth(s) <= width {
		return s
	}
	return ansi.Truncate(s, width, "…")
}

// renderTurn draws one turn for the given width as lines, ending with a blank line.
// brand is the name used for agent turns, whose text is drawn as Markdown with md.
func renderTurn(st *styles, md *markdown, t Turn, width int, brand string) []string {
	if width < 8 {
		width = 8
	}
	const indent = "  "
	var body []string
	if t.Role == RoleAgent {
		if text := clean(t.Text); text != "" || len(t.Parts) == 0 {
			body = md.render(text, width-len(indent))
		}
		body = append(body, partLines(st, t.Parts, width-len(indent))...)
	} else {
		body = st.wrap(clean(t.Text), width-len(indent))
	}
	stamp := ""
	if !t.At.IsZero() {
		stamp = st.dim.Render(t.At.Format("15:04"))
	}
	var lines []string
	switch t.Role {
	case RoleUser, RoleAgent:
		var label string
		if t.Role == RoleUser {
			label = st.user.Render("You")
		} else {
			label = st.agent.Render(st.fit(brand, width/2))
		}
		head := label
		if stamp != "" {
			head += " " + stamp
		}
		if t.Role == RoleUser {
			switch t.State {
			case Sending:
				head += " " + st.dim.Render("· sending…")
			case Unanswered:
				head += " " + st.status.Render("· no answer yet")
			case Failed:
				head += " " + st.err.Render("· not sent")
			}
		}
		if t.Receipt != nil {
			switch {
			case t.Receipt.Verified:
				head += " " + st.ok.Render("✓ receipt")
			case t.Receipt.Missing:
				head += " " + st.bad.Render("✗ receipt not archived")
			case t.Receipt.Restored:
				head += " " + st.status.Render("? receipt not re-checked")
			default:
				head += " " + st.bad.Render("✗ receipt failed")
			}
		}
		lines = append(lines, st.fit(head, width))
		for _, l := range body {
			if l == "" {
				lines = append(lines, "")
				continue
			}
			if t.Role == RoleAgent {
				lines = append(lines, indent+l)
			} else {
				lines = append(lines, indent+st.input.Render(l))
			}
		}
	case RoleSystem:
		for i, l := range body {
			p := indent
			if i == 0 {
				p = "· "
			}
			lines = append(lines, st.sys.Render(p+l))
		}
	case RoleError:
		for i, l := range body {
			p := indent
			if i == 0 {
				p = "✗ "
			}
			lines = append(lines, st.err.Render(p+l))
		}
	}
	return append(lines, "")
}

// shortKID returns the first 8 characters of a kid (an RFC 7638 thumbprint is 43).
func shortKID(kid string) string {
	if len(kid) <= 8 {
		return kid
	}
	return kid[:8]
}

// shortSub shortens a pairwise sub to its first 6 and last 4 characters.
func shortSub(sub string) string {
	r := []rune(sub)
	if len(r) <= 12 {
		return sub
	}
	return string(r[:6]) + "…" + string(r[len(r)-4:])
}

// left formats a duration for people: "42m left", "1h05m left", "expired".
func left(d time.Duration) string {
	switch {
	case d <= 0:
		return "expired"
	case d < time.Minute:
		return fmt.Sprintf("%ds left", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm left", int(d.Minutes()))
	default:
		return fmt.Sprintf("%dh%02dm left", int(d.Hours()), int(d.Minutes())%60)
	}
}

// countdown formats time left as m:ss.
func countdown(d time.Duration) string {
	if d <= 0 {
		return "0:00"
	}
	s := int(d.Round(time.Second).Seconds())
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

// renderHeader draws the three header lines, each fitted to width.
func renderHeader(st *styles, h Header, now time.Time, width int) []string {
	name := cleanLine(h.BrandName)
	if name == "" {
		name = "Brand"
	}
	var l1 string
	if len(h.NameWarnings) > 0 {
		// The flag first, so that no width cuts it off; the name quoted: the card's claim,
		// not pact's words.
		flag := "⚠ suspect name"
		if width-st.wm.StringWidth(flag+" "+cleanLine(h.BrandDomain)+" "+cleanLine(h.Signature)) < 12 {
			flag = "⚠" // narrow: the name's room and the card's host go first
		}
		l1 = st.bad.Render(flag) + " " + headerLine1(st, "“"+name+"”", cleanLine(h.BrandDomain), cleanLine(h.Signature), width-st.wm.StringWidth(flag)-1)
	} else {
		l1 = headerLine1(st, name, cleanLine(h.BrandDomain), cleanLine(h.Signature), width)
	}
	var parts []string
	if h.Provider != "" {
		parts = append(parts, "via "+cleanLine(h.Provider))
	}
	if h.KID != "" {
		parts = append(parts, "key "+shortKID(clean(h.KID)))
	}
	if h.Sub != "" {
		parts = append(parts, "sub "+shortSub(clean(h.Sub)))
	}
	l2 := st.dim.Render(joinFit(parts, " · ", width))
	var l3 string
	if h.ExpiresAt.IsZero() && h.DelegationLost {
		l3 = st.bad.Render("identity only") + st.dim.Render(" · the delegation stopped working (/login)")
	} else if h.ExpiresAt.IsZero() {
		l3 = st.dim.Render("identity only · no delegation")
	} else {
		d := h.ExpiresAt.Sub(now)
		sc := clean(strings.Join(h.Scopes, " "))
		if sc == "" {
			sc = "no scopes"
		}
		if d <= 0 {
			l3 = st.bad.Render("delegation expired") + st.dim.Render(" · "+sc)
		} else {
			l3 = st.ok.Render("delegated") + " " + sc + st.dim.Render(" · "+left(d))
		}
	}
	return []string{st.fit(l1, width), st.fit(l2, width), st.fit(l3, width)}
}

// headerLine1 is the Brand's name, its domain and the trust badge ("signed by DOMAIN ✓",
// "unsigned") in width cells. The badge and the domain are pact's findings, the name is the
// card's claim (it may itself read "… signed by … ✓"): when the line does not fit, the badge
// takes its short form ("signed ✓"), then the name is shortened (with …) to leave both their
// room; the domain goes only when not even two cells of the name would be left.
func headerLine1(st *styles, name, domain, sig string, width int) string {
	badge, short := func(...string) string { return "" }, ""
	switch {
	case strings.HasPrefix(sig, "signed by "):
		badge, short = st.ok.Render, "signed ✓"
	case sig != "":
		badge, short = st.dim.Render, sig
	}
	// What follows the name: the domain, then the badge in full or short.
	dom, long, brief := "", "", ""
	if domain != "" {
		dom = " " + st.dim.Render(domain)
	}
	if sig != "" {
		long, brief = dom+" "+badge(sig), dom+" "+badge(short)
	} else {
		long, brief = dom, dom
	}
	nm := st.brand.Render(name)
	if l := nm + long; st.wm.StringWidth(l) <= width {
		return l
	}
	if l := nm + brief; st.wm.StringWidth(l) <= width {
		return l
	}
	if room := width - st.wm.StringWidth(brief); room >= 2 {
		return st.brand.Render(st.fit(name, room)) + brief
	}
	if sig == "" {
		return st.brand.Render(st.fit(name, width))
	}
	room := width - st.wm.StringWidth(short) - 1
	if room < 2 {
		return badge(st.fit(short, width))
	}
	return st.brand.Render(st.fit(name, room)) + " " + badge(short)
}
