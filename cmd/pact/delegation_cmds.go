package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/delegation"
	"github.com/pact-cli/pact/deviceflow"
	"github.com/pact-cli/pact/discovery"
	"github.com/pact-cli/pact/opener"
	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/receipts"
)

func addDelegationCommands(a *app, root *cobra.Command) {
	root.AddCommand(newLoginCmd(a), newLogoutCmd(a), newGrantsCmd(a), newReceiptsCmd(a))
}

// login runs the device flow on s for scopes, showing the Brand, the
// Provider, the scopes and the user_code on stderr, opening the link (or
// printing it with --no-browser or without a terminal) and counting down
// until the User answers in the browser.
func (a *app) login(ctx context.Context, s *conversation.Session, scopes []string) (*delegation.Grant, error) {
	st := a.io.ErrStyles()
	d := s.Card.Delegation
	if d == nil {
		return nil, conversation.ErrNoDelegation
	}
	var sp stopper = noSpinner{}
	finished := make(chan struct{})
	defer close(finished)
	shown := func(auth *deviceflow.Authorization) {
		name := line(s.Card.Name())
		a.io.Eprintf("\n%s asks you to log in with %s and approve:\n", st.Bold.Render("pact"), st.Bold.Render(name))
		w := 0
		for _, id := range scopes {
			w = max(w, len(id))
		}
		for _, id := range scopes {
			a.io.Eprintf("  %s  %s\n", st.Accent.Render(line(fmt.Sprintf("%-*s", w, id))), line(d.Scopes[id]))
		}
		a.io.Eprintf("Provider: %s\n", line(originOf(s.Card.InterfaceURL)))
		a.io.Eprintf("Code:     %s\n", st.Bold.Render(line(auth.UserCode)))
		a.io.Eprintf("Link:     %s\n", line(auth.VerificationURIComplete))
		if !a.noBrows && (a.io.Interactive() || opener.Command() != nil) {
			a.openLink(auth.VerificationURIComplete, name, finished)
		} else {
			a.io.Eprintf("Open the link in a browser and log in with %s; pact never sees your password.\n", name)
		}
		if a.json || !a.io.IsStderrTTY() {
			a.io.Eprintf("Waiting for approval (the code expires in %s)…\n", time.Until(auth.ExpiresAt).Round(time.Second))
		} else {
			sp = a.io.StartCountdown("Waiting for your approval", auth.ExpiresAt)
		}
	}
	g, err := s.Login(ctx, scopes, shown)
	sp.Stop()
	return g, err
}

// openLink starts the browser on link without waiting for it (polling
// starts at once) and says honestly what happened: opening, not opened;
// on a headless session or when the browser cannot start, only the link.
// A browser that fails later is reported until finished is closed.
func (a *app) openLink(link, brand string, finished <-chan struct{}) {
	st := a.io.ErrStyles()
	out := &browserLines{w: a.io.ErrOut, clear: a.io.IsStderrTTY()}
	p, err := opener.Start(link, out)
	switch {
	case errors.Is(err, opener.ErrHeadless):
		a.io.Eprintf("No browser here (a remote session without a display): open the link on a device with a browser and log in with %s; pact never sees your password.\n", brand)
		return
	case err != nil:
		a.io.Eprintf("%s could not open the browser (%v); open this link: %s\n", st.Warning.Render("!"), err, line(link))
		a.io.Eprintf("Log in with %s there; pact never sees your password.\n", brand)
		return
	}
	a.io.Eprintf("Opening the link in your browser (%s). Log in with %s there; pact never sees your password.\n", p.Name, brand)
	go func() {
		select {
		case <-p.Done():
			out.flush()
			if err := p.Err(); err != nil {
				clear := ""
				if a.io.IsStderrTTY() {
					clear = "\r\x1b[K"
				}
				a.io.Eprintf("%s%s could not open the browser (%v); open this link: %s\n", clear, st.Warning.Render("!"), err, line(link))
			}
		case <-finished:
		}
	}()
}

// browserLines passes on what the browser program writes to its stderr one
// whole line at a time, each marked as the browser's and, on a terminal,
// written over the line the countdown spinner is drawing (which redraws
// itself below), so the two never mix on one line.
type browserLines struct {
	mu    sync.Mutex
	w     io.Writer
	clear bool
	buf   []byte
}

func (b *browserLines) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	for {
		i := bytes.IndexByte(b.buf, '\n')
		if i < 0 {
			break
		}
		b.line(string(b.buf[:i]))
		b.buf = b.buf[i+1:]
	}
	if len(b.buf) > 4*maxBrowserLine {
		b.buf = b.buf[:4*maxBrowserLine] // the line is cut anyway; the rest up to its newline is dropped
	}
	return len(p), nil
}

// maxBrowserLine is the most characters of a browser's output line shown; longer lines
// are cut with "…" so that a chatty browser does not flood the login screen.
const maxBrowserLine = 200

// flush passes on a last line without a newline.
func (b *browserLines) flush() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.buf) > 0 {
		b.line(string(b.buf))
		b.buf = nil
	}
}

func (b *browserLines) line(s string) {
	s = strings.TrimRight(safe(s), "\r ")
	if s == "" {
		return
	}
	if r := []rune(s); len(r) > maxBrowserLine {
		s = string(r[:maxBrowserLine-1]) + "…"
	}
	clear := ""
	if b.clear {
		clear = "\r\x1b[K"
	}
	fmt.Fprintf(b.w, "%sbrowser: %s\n", clear, s)
}

func originOf(u string) string {
	if i := strings.Index(u, "://"); i >= 0 {
		if j := strings.Index(u[i+3:], "/"); j >= 0 {
			return u[:i+3+j]
		}
	}
	return u
}

// reportGrant tells the User what was granted, and what was not.
func (a *app) reportGrant(asked []string, g *delegation.Grant) {
	st := a.io.ErrStyles()
	granted := map[string]bool{}
	for _, sc := range g.Scopes {
		granted[sc] = true
	}
	var missing []string
	for _, sc := range asked {
		if !granted[sc] {
			missing = append(missing, sc)
		}
	}
	askedSet := map[string]bool{}
	for _, sc := range asked {
		askedSet[sc] = true
	}
	var earlier []string
	for _, sc := range g.Scopes {
		if !askedSet[sc] {
			earlier = append(earlier, sc)
		}
	}
	a.io.Eprintf("%s granted: %s (expires %s)\n", st.Success.Render("✓"), line(strings.Join(g.Scopes, " ")), g.ExpiresAt.Local().Format("15:04 MST"))
	if len(missing) > 0 {
		a.io.Eprintf("%s not granted: %s\n", st.Warning.Render("!"), line(strings.Join(missing, " ")))
	}
	if len(earlier) > 0 {
		// Not "approved earlier": on a first login nothing was. These are
		// the scopes the grant holds beyond what was asked this time.
		a.io.Eprintf("%s the Brand also granted: %s\n", st.Faint.Render("·"), line(strings.Join(earlier, " ")))
	}
}

// stepUp handles a §5.5 step-up interactively: consent for the missing
// scopes, then the caller sends the message again in the same context.
func (a *app) stepUp(ctx context.Context, s *conversation.Session, su *conversation.StepUp) error {
	st := a.io.ErrStyles()
	a.io.Printf("%s\n", safe(su.Text))
	a.io.Eprintf("%s %s needs more permission: %s\n", st.Warning.Render("!"), line(s.Card.Name()), line(strings.Join(su.MissingScopes, ", ")))
	g, err := a.login(ctx, s, su.MissingScopes)
	if err != nil {
		return err
	}
	a.reportGrant(su.MissingScopes, g)
	if !g.HasScopes(su.MissingScopes...) {
		return explained{"the permission the Brand asked for was not granted; the message was not sent again", deviceflow.ErrAccessDenied}
	}
	a.io.Eprintf("Sending your message again in the same conversation…\n")
	return nil
}

type loginJSON struct {
	Brand           string    `json:"brand"` // card URL
	BrandName       string    `json:"brandName"`
	InterfaceURL    string    `json:"interfaceUrl"`
	ScopesRequested []string  `json:"scopesRequested"`
	ScopesGranted   []string  `json:"scopesGranted"`
	GrantID         string    `json:"grantId"`
	ExpiresAt       time.Time `json:"expiresAt"`
}

func newLoginCmd(a *app) *cobra.Command {
	var scopes []string
	cmd := &cobra.Command{
		Use:   "login BRAND --scope ID [--scope ID]...",
		Short: "Let pact act on your account at a Brand: log in with the Brand and approve scopes",
		Long: `Delegation by OAuth 2.0 device code (RFC 8628). pact shows the Brand,
the scopes it asks for and a code, and opens the Brand's own login page in your
browser (PACT_BROWSER, BROWSER, or the system browser; --no-browser prints the
link). You log in with the Brand, never with pact, and may uncheck scopes. pact
waits, then stores the delegation token in your keyring and prints the scopes
granted, which may be fewer than asked.`,
		Args:              exactArgs(1, "login needs a BRAND and at least one --scope"),
		ValidArgsFunction: a.completeBrands,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(scopes) == 0 {
				return usageError{errors.New("name the permissions to ask for with --scope ID (see `pact card BRAND` for the Brand's scopes)")}
			}
			s, err := a.openSession(cmd.Context(), args[0], sessionFlags{})
			if err != nil {
				return err
			}
			g, err := a.login(cmd.Context(), s, scopes)
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(loginJSON{Brand: s.Card.URL, BrandName: s.Card.Name(), InterfaceURL: s.Card.InterfaceURL, ScopesRequested: scopes,
					ScopesGranted: nonNil(g.Scopes), GrantID: g.GrantID, ExpiresAt: g.ExpiresAt})
			}
			a.reportGrant(scopes, g)
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&scopes, "scope", nil, "a scope id from the Brand's card (repeatable)")
	cmd.RegisterFlagCompletionFunc("scope", a.completeScopes)
	return cmd
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// completeScopes offers the scope ids of the Brand's card (pact login --scope).
func (a *app) completeScopes(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) == 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	cardURL, err := discovery.CardURL(args[0])
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	card, err := discovery.Fetch(cmd.Context(), a.httpClient(), cardURL)
	if err != nil || card.Delegation == nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, id := range card.Delegation.ScopeIDs() {
		out = append(out, id+"\t"+card.Delegation.Scopes[id])
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

func newLogoutCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:               "logout BRAND",
		Short:             "Forget a Brand's delegation token",
		Args:              exactArgs(1, "logout needs a BRAND"),
		ValidArgsFunction: a.completeBrands,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := a.sessionOptions()
			if err != nil {
				return err
			}
			// The grant is found offline by card URL or interface URL; if
			// neither matches, the card is fetched to learn its interface
			// URL (the brand may have been named another way at login).
			arg := strings.TrimRight(args[0], "/")
			cardURL, cerr := discovery.CardURL(args[0])
			ref, _ := a.brandIndex(opts).lookup(cardURL) // before the grant is forgotten
			n, err := conversation.ForgetBrand(opts, cardURL, arg)
			if err != nil {
				return err
			}
			if n == 0 && cerr == nil {
				if card, ferr := discovery.Fetch(cmd.Context(), a.httpClient(), cardURL); ferr == nil {
					if n, err = conversation.ForgetBrand(opts, card.URL, card.InterfaceURL); err != nil {
						return err
					}
				}
			}
			if n == 0 {
				return explained{fmt.Sprintf("no delegation is stored for %s (see `pact grants`)", args[0]), delegation.ErrNoGrant}
			}
			if a.json {
				return a.printJSON(map[string]any{"brand": cardURL, "brandName": ref.Name, "removed": n})
			}
			a.io.Eprintf("%s forgot the delegation token for %s\n", a.io.ErrStyles().Success.Render("✓"), args[0])
			return nil
		},
	}
}

type grantJSON struct {
	Brand        string    `json:"brand"` // card URL
	BrandName    string    `json:"brandName"`
	InterfaceURL string    `json:"interfaceUrl"`
	Scopes       []string  `json:"scopes"`
	GrantID      string    `json:"grantId"`
	ExpiresAt    time.Time `json:"expiresAt"`
	Refreshable  bool      `json:"refreshable"`
	// Dead and DeadSince: refused and not refreshable; identity only
	// until `pact login` (see delegation.Grant.MarkDead).
	Dead      bool       `json:"dead"`
	DeadSince *time.Time `json:"deadSince,omitempty"`
}

func newGrantsCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "grants",
		Short: "List stored delegation grants: brand, scopes, expiry, grant id",
		Args:  exactArgs(0, "grants takes no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := a.sessionOptions()
			if err != nil {
				return err
			}
			list, err := conversation.ListGrants(opts)
			if err != nil {
				return err
			}
			ix := a.brandIndex(opts)
			out := []grantJSON{}
			for _, g := range list {
				ref, _ := ix.lookup(g.InterfaceURL)
				out = append(out, grantJSON{g.Brand, ref.Name, g.InterfaceURL, nonNil(g.Scopes), g.GrantID, g.ExpiresAt, g.Refreshable, g.Dead, g.DeadSince})
			}
			sort.Slice(out, func(i, j int) bool { return out[i].Brand < out[j].Brand })
			if a.json {
				return a.printJSON(out)
			}
			if len(out) == 0 {
				a.io.Eprintf("No delegation grants. Give one with: pact login BRAND --scope ID\n")
				return nil
			}
			rows := [][]string{{"BRAND", "SCOPES", "EXPIRES", "GRANT"}}
			var relogin []string
			for _, g := range out {
				exp := g.ExpiresAt.Local().Format(humanTime)
				if g.Refreshable {
					exp += " (refreshable)"
				}
				label := brandLabel(g.BrandName, g.Brand, g.InterfaceURL)
				if g.Dead {
					exp = "dead"
					if g.DeadSince != nil {
						exp += " since " + g.DeadSince.Local().Format(humanTime)
					}
					exp += " (the Brand no longer accepts it; run pact login again)"
					login := []string{"login", g.Brand}
					for _, sc := range g.Scopes {
						login = append(login, "--scope", sc)
					}
					relogin = append(relogin, fmt.Sprintf("to delegate to %s again: %s", line(label), line(profile.CommandWords(opts.Profile.Name, login...))))
				}
				rows = append(rows, []string{label, strings.Join(g.Scopes, " "), exp, g.GrantID})
			}
			a.io.Table(a.io.Out, rows)
			for _, l := range relogin {
				a.io.Eprintf("%s %s\n", a.io.ErrStyles().Warning.Render("!"), l)
			}
			return nil
		},
	}
}

// receiptItemJSON is one receipt of `receipts list --json`: the archive's
// item (brand is the signed claim: the interface URL) plus the Brand's card
// URL and name when pact knows them ("" otherwise).
type receiptItemJSON struct {
	receipts.Item
	CardURL   string `json:"cardUrl"`
	BrandName string `json:"brandName"`
}

func newReceiptsCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "receipts", Short: "The local archive of signed receipts of what Brands did for you"}
	var brand, scope, since, until string
	var limit int
	list := &cobra.Command{
		Use:   "list [--brand BRAND] [--since T] [--until T] [--scope S] [--limit N]",
		Short: "List archived receipts, verified and rejected, oldest first",
		Args:  exactArgs(0, "receipts list takes no arguments (use --brand)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			lo, err := receiptListOptions(brand, scope, since, until, limit)
			if err != nil {
				return usageError{err}
			}
			opts, err := a.sessionOptions()
			if err != nil {
				return err
			}
			return a.listReceipts(cmd.Context(), opts, lo, brand)
		},
	}
	list.Flags().StringVar(&brand, "brand", "", "only this Brand's receipts (domain or host:port as the table shows it, card URL or interface URL)")
	list.Flags().StringVar(&scope, "scope", "", "only receipts whose scopesUsed contains this scope")
	list.Flags().StringVar(&since, "since", "", "only receipts at or after this time (RFC 3339, or a date YYYY-MM-DD)")
	list.Flags().StringVar(&until, "until", "", "only receipts at or before this time (RFC 3339, or a date YYYY-MM-DD: to its end)")
	list.Flags().IntVar(&limit, "limit", 0, "only the N most recent receipts (still listed oldest first)")
	list.RegisterFlagCompletionFunc("brand", a.completeBrands)
	show := &cobra.Command{
		Use:               "show ID",
		Short:             "Show one receipt: claims, signature key, verification",
		Args:              exactArgs(1, "receipts show needs a receipt ID (see `pact receipts list`)"),
		ValidArgsFunction: a.completeReceiptIDs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := a.sessionOptions()
			if err != nil {
				return err
			}
			e, err := opts.Receipts.Get(args[0])
			if err != nil {
				return err
			}
			if a.json {
				// The receipts rule of docs/json.md: brand is the signed
				// claim, the Brand as pact knows it cardUrl and brandName.
				c := e.ParsedClaims()
				ref := a.brandIndex(opts).receipt(c.Brand, e.Expect.Card, e.Expect.BrandName)
				return a.printJSON(struct {
					*receipts.Entry
					Brand     string `json:"brand"`
					CardURL   string `json:"cardUrl"`
					BrandName string `json:"brandName"`
				}{e, c.Brand, ref.CardURL, ref.Name})
			}
			st := a.io.OutStyles()
			status := st.Success.Render("verified")
			if !e.Verified {
				status = st.Error.Render("FAILED: " + safe(strings.Join(e.Problems, "; ")))
			}
			a.io.Printf("%s %s\n", st.Bold.Render("receipt "+receipts.ShortID(e.ID)), status)
			c := e.ParsedClaims()
			row := func(k, v string) { a.io.Printf("  %s %s\n", st.Faint.Render(fmt.Sprintf("%-12s", k)), v) }
			// The Brand by name and domain, as in every table; the signed
			// claim (the interface URL) beside it.
			ref := a.brandIndex(opts).receipt(c.Brand, e.Expect.Card, e.Expect.BrandName)
			row("brand", line(receiptBrandLabel(ref, c.Brand)))
			row("interface", line(c.Brand))
			if e.Expect.Imported {
				// From a bundle: the user is whoever the receipt was issued to.
				row("user", line(c.User)+" (the Brand's id for its User; imported from a bundle)")
			} else {
				row("user", line(c.User)+" (the Brand's id for you)")
			}
			row("grant", line(c.GrantID))
			row("scopes used", line(strings.Join(c.ScopesUsed, " ")))
			for i, raw := range c.Actions {
				var act struct {
					Tool     string `json:"tool"`
					ArgsHash string `json:"argsHash"`
				}
				json.Unmarshal(raw, &act)
				label := ""
				if i == 0 {
					label = "actions"
				}
				text := line(act.Tool)
				if act.ArgsHash != "" {
					text += st.Faint.Render(" (arguments hash " + line(act.ArgsHash) + ")")
				}
				row(label, text)
			}
			if ts, err := time.Parse(time.RFC3339, c.TS); err == nil {
				row("time", ts.Local().Format("2006-01-02 15:04:05 MST"))
			} else {
				row("time", line(c.TS))
			}
			if e.JWKThumbprint != "" {
				row("signed by", "key "+e.JWKThumbprint+" (kept in the archive; `pact receipts verify` checks it again)")
			}
			return nil
		},
	}
	var all, offline bool
	verify := &cobra.Command{
		Use:   "verify [ID...|--all] [--offline]",
		Short: "Check receipts again; exit 6 if any fails",
		Long: `Verify archived receipts again: the signature with the key kept at
archive time (--offline) or fetched again from the Brand's jwks_uri, and the
claims against the grant they were issued under. With no ID, every verified
receipt is checked, those kept apart as rejected included. Exits 6 if any
receipt fails.`,
		ValidArgsFunction: a.completeReceiptIDs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if all && len(args) > 0 {
				return usageError{errors.New("give receipt IDs or --all, not both")}
			}
			opts, err := a.sessionOptions()
			if err != nil {
				return err
			}
			for _, id := range args {
				if _, err := opts.Receipts.Get(id); err != nil {
					return err
				}
			}
			var checks []receipts.Check
			sp := a.spinner("Verifying receipts")
			if len(args) == 0 {
				checks, err = opts.Receipts.VerifyAll(cmd.Context(), !offline)
			} else {
				checks = opts.Receipts.VerifyIDs(cmd.Context(), args, !offline)
			}
			sp.Stop()
			if err != nil {
				return err
			}
			ok, failed, unchecked := 0, 0, 0
			for i := range checks {
				if checks[i].Problems == nil {
					checks[i].Problems = []string{}
				}
				switch {
				case checks[i].Verified:
					ok++
				case checks[i].Unchecked:
					unchecked++
				default:
					failed++
				}
			}
			if a.json {
				// Each result names its Brand by the receipts rule of
				// docs/json.md (brand: the signed claim; cardUrl, brandName).
				type checkJSON struct {
					receipts.Check
					Brand     string `json:"brand"`
					CardURL   string `json:"cardUrl"`
					BrandName string `json:"brandName"`
				}
				ix := a.brandIndex(opts)
				results := make([]checkJSON, len(checks))
				for i, ch := range checks {
					results[i].Check = ch
					if e, err := opts.Receipts.Get(ch.ID); err == nil {
						c := e.ParsedClaims()
						ref := ix.receipt(c.Brand, e.Expect.Card, e.Expect.BrandName)
						results[i].Brand, results[i].CardURL, results[i].BrandName = c.Brand, ref.CardURL, ref.Name
					}
				}
				if err := a.printJSON(map[string]any{"verified": ok, "failed": failed, "unchecked": unchecked, "results": results}); err != nil {
					return err
				}
			} else {
				st := a.io.ErrStyles()
				for _, c := range checks {
					switch {
					case c.Verified && c.KeySource == "archive":
						a.io.Printf("%s %s  %s\n", st.Success.Render("✓"), receipts.ShortID(c.ID), st.Faint.Render("(with the key kept at archive time)"))
					case c.Verified:
						a.io.Printf("%s %s\n", st.Success.Render("✓"), receipts.ShortID(c.ID))
					case c.Unchecked:
						a.io.Printf("%s %s  %s\n", st.Warning.Render("?"), receipts.ShortID(c.ID), safe(strings.Join(c.Problems, "; ")))
					default:
						a.io.Printf("%s %s  %s\n", st.Error.Render("✗"), receipts.ShortID(c.ID), safe(strings.Join(c.Problems, "; ")))
					}
				}
				a.io.Eprintf("%d verified, %d failed, %d not checked\n", ok, failed, unchecked)
			}
			switch {
			case failed > 0:
				return silentError{code: exitReceipts}
			case unchecked > 0:
				return silentError{code: exitFailure}
			}
			return nil
		},
	}
	verify.Flags().BoolVar(&all, "all", false, "verify every archived receipt, rejected ones included (the default when no ID is given)")
	verify.Flags().BoolVar(&offline, "offline", false, "use the keys kept in the archive; do not fetch jwks_uri")
	cmd.AddCommand(list, show, verify)
	addReceiptBundleCommands(a, cmd, verify)
	return cmd
}

func actionNames(actions []json.RawMessage) string {
	var names []string
	for _, raw := range actions {
		var a struct {
			Tool string `json:"tool"`
		}
		if json.Unmarshal(raw, &a) == nil && a.Tool != "" {
			names = append(names, a.Tool)
		}
	}
	return strings.Join(names, ", ")
}

func (a *app) completeReceiptIDs(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	opts, err := a.sessionOptions()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	items, _ := opts.Receipts.List("")
	var out []string
	for _, it := range items {
		out = append(out, receipts.ShortID(it.ID)+"\t"+it.TS+" "+actionNames(it.Actions))
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
