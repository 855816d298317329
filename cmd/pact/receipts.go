package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pact-cli/pact/agent"
	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/receipts"
)

// receiptItemJSON is one receipt of `receipts list --json`: the archive's
// item (brand is the signed claim: the interface URL) plus the Brand's card
// URL and name when pact knows them ("" otherwise).
type receiptItemJSON struct {
	receipts.Item
	CardURL   string `json:"cardUrl"`
	BrandName string `json:"brandName"`
	// InterfaceURL is the brand claim again under the name every other
	// shape gives the interface URL (issue 31: `brand` is the card URL
	// everywhere else; it stays the signed claim here).
	InterfaceURL string `json:"interfaceUrl"`
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
			ag, err := a.agent()
			if err != nil {
				return err
			}
			return a.listReceipts(cmd.Context(), ag, lo, brand)
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
			ag, err := a.agent()
			if err != nil {
				return err
			}
			rec, err := ag.Receipt(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			e := rec.Entry
			// The Brand as pact knows it (the receipts rule of docs/json.md:
			// brand is the signed claim; cardUrl and brandName).
			ref := brandRef{CardURL: rec.CardURL, Name: rec.BrandName}
			if a.json {
				return a.printJSON(struct {
					*receipts.Entry
					Brand        string `json:"brand"`
					CardURL      string `json:"cardUrl"`
					BrandName    string `json:"brandName"`
					InterfaceURL string `json:"interfaceUrl"` // the brand claim, named as elsewhere
				}{e, rec.Brand, rec.CardURL, rec.BrandName, rec.Brand})
			}
			st := a.io.OutStyles()
			status := st.Success.Render("verified")
			switch {
			case e.Restored:
				status = st.Warning.Render("restored, not re-checked")
			case !e.Verified:
				status = st.Error.Render("FAILED: " + safe(strings.Join(e.Problems, "; ")))
			}
			a.io.Printf("%s %s\n", st.Bold.Render("receipt "+receipts.ShortID(e.ID)), status)
			if e.Restored {
				// The backup's verdict is not pact's: say what checks it.
				a.io.Printf("  %s\n  %s\n", "It came back with `pact restore`; pact does not take a backup's word that it verified. Check it against the Brand's published keys with:",
					profile.CommandWords(a.profile, "receipts", "verify", receipts.ShortID(e.ID)))
			}
			c := e.ParsedClaims()
			row := func(k, v string) { a.io.Printf("  %s %s\n", st.Faint.Render(fmt.Sprintf("%-12s", k)), v) }
			// The Brand by name and domain, as in every table; the signed
			// claim (the interface URL) beside it.
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
			switch {
			case e.JWKThumbprint != "" && e.Restored:
				row("signed by", "key "+line(e.JWKThumbprint)+" (as the backup says; not checked by pact since the restore)")
			case e.JWKThumbprint != "":
				row("signed by", "key "+e.JWKThumbprint+" (kept in the archive; `pact receipts verify` checks it again)")
			}
			// Why it means less than it seems (replayed, labels set aside).
			for i, n := range e.Item().Notes {
				label := ""
				if i == 0 {
					label = "note"
				}
				row(label, st.Warning.Render(safe(n)))
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
			ag, err := a.agent()
			if err != nil {
				return err
			}
			sp := a.spinner("Verifying receipts")
			named, err := ag.VerifyReceipts(cmd.Context(), agent.VerifyRequest{IDs: args, Offline: offline, Named: a.json})
			sp.Stop()
			if err != nil {
				return err
			}
			checks := make([]receipts.Check, len(named))
			for i, ch := range named {
				checks[i] = ch.Check
			}
			tally := agent.Count(checks)
			if a.json {
				// Each result names its Brand by the receipts rule of
				// docs/json.md (brand: the signed claim; cardUrl, brandName).
				type checkJSON struct {
					receipts.Check
					Brand        string `json:"brand"`
					CardURL      string `json:"cardUrl"`
					BrandName    string `json:"brandName"`
					InterfaceURL string `json:"interfaceUrl"` // the brand claim, named as elsewhere
				}
				results := make([]checkJSON, len(named))
				for i, ch := range named {
					results[i] = checkJSON{ch.Check, ch.Brand, ch.CardURL, ch.BrandName, ch.Brand}
				}
				if err := a.printJSON(map[string]any{"verified": tally.Verified, "failed": tally.Failed, "unchecked": tally.Unchecked, "results": results}); err != nil {
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
				a.io.Eprintf("%s\n", tally)
			}
			switch {
			case tally.Failed > 0:
				return silentError{code: exitReceipts}
			case tally.Unchecked > 0:
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
	ag, err := a.agent()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	ag.Receipts(cmd.Context(), receipts.ListOptions{}, func(it agent.ReceiptItem) error {
		out = append(out, receipts.ShortID(it.ID)+"\t"+it.TS+" "+actionNames(it.Actions))
		return nil
	})
	return out, cobra.ShellCompDirectiveNoFileComp
}
