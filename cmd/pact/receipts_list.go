package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pact-cli/pact/agent"
	"github.com/pact-cli/pact/profile"
	"github.com/pact-cli/pact/receipts"
)

// receiptListOptions turns `receipts list` flags into archive options.
func receiptListOptions(brand, scope, since, until string, limit int) (receipts.ListOptions, error) {
	lo := receipts.ListOptions{Brand: brand, Scope: scope, Limit: limit}
	if limit < 0 {
		return lo, errors.New("--limit must be 0 (all) or more")
	}
	var err error
	if lo.Since, err = parseListTime(since, false); err != nil {
		return lo, fmt.Errorf("--since: %w", err)
	}
	if lo.Until, err = parseListTime(until, true); err != nil {
		return lo, fmt.Errorf("--until: %w", err)
	}
	if !lo.Since.IsZero() && !lo.Until.IsZero() && lo.Until.Before(lo.Since) {
		return lo, errors.New("--until is before --since")
	}
	return lo, nil
}

// parseListTime reads an RFC 3339 time or a date (YYYY-MM-DD, in UTC: its
// start, or with endOfDay its last instant).
func parseListTime(s string, endOfDay bool) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	d, err := time.Parse("2006-01-02", s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither an RFC 3339 time (2026-11-30T18:00:00Z) nor a date (2026-11-30)", s)
	}
	if endOfDay {
		d = d.Add(24*time.Hour - time.Nanosecond)
	}
	return d, nil
}

const damagedPrefix = "damaged archive row"

// listReceipts prints the archive's receipts: --json as a JSON array
// written one item at a time (the archive is read row by row, so memory
// does not grow with it), else a table. A damaged row is listed with its
// problems; the command then warns and exits 1 after the whole listing.
func (a *app) listReceipts(ctx context.Context, ag agent.Agent, lo receipts.ListOptions, brandArg string) error {
	withBrand := func(it agent.ReceiptItem) receiptItemJSON {
		return receiptItemJSON{Item: it.Item, CardURL: it.CardURL, BrandName: it.BrandName, InterfaceURL: it.Brand}
	}
	if brandArg != "" {
		// One rule for every spelling of a Brand (receipts.BrandFilter).
		lo.Brand = brandArg
	}
	damaged, restored := 0, 0
	note := func(it receipts.Item) {
		if it.Restored {
			restored++
		}
		for _, p := range it.Problems {
			if strings.HasPrefix(p, damagedPrefix) {
				damaged++
				return
			}
		}
	}
	var err error
	switch {
	case a.json && a.jq != nil:
		items := []receiptItemJSON{}
		err = ag.Receipts(ctx, lo, func(it agent.ReceiptItem) error { note(it.Item); items = append(items, withBrand(it)); return nil })
		if err == nil {
			err = a.printJSON(items)
		}
	case a.json:
		w := bufio.NewWriterSize(a.io.Out, 64<<10)
		buf := make([]byte, 0, 1024)
		memo := newJSONMemo()
		n := 0
		err = ag.Receipts(ctx, lo, func(it agent.ReceiptItem) error {
			note(it.Item)
			if n == 0 {
				buf = append(buf[:0], "[\n  "...)
			} else {
				buf = append(buf[:0], ",\n  "...)
			}
			n++
			ri := withBrand(it)
			buf = memo.appendItem(buf, &ri)
			_, err := w.Write(buf)
			return err
		})
		if n == 0 {
			w.WriteString("[]\n")
		} else {
			w.WriteString("\n]\n")
		}
		if ferr := w.Flush(); err == nil {
			err = ferr
		}
	default:
		rows := [][]string{{"ID", "TIME", "BRAND", "SCOPES USED", "ACTIONS", "VERIFIED"}}
		err = ag.Receipts(ctx, lo, func(it agent.ReceiptItem) error {
			note(it.Item)
			v := "yes"
			switch {
			case it.Restored:
				v = "NOT RE-CHECKED (restored)"
			case !it.Verified:
				v = "NO"
			case it.Replayed:
				v = "yes, REPLAYED"
			}
			ri := withBrand(it)
			rows = append(rows, []string{receipts.ShortID(it.ID), localRFC3339(it.TS), receiptBrandLabel(brandRef{CardURL: ri.CardURL, Name: ri.BrandName}, it.Brand), strings.Join(it.ScopesUsed, " "), actionNames(it.Actions), v})
			return nil
		})
		if err != nil {
			return err
		}
		if len(rows) == 1 {
			if brandArg != "" || lo != (receipts.ListOptions{Brand: lo.Brand}) {
				a.io.Eprintf("No receipts match (see `pact receipts list` for all).\n")
				return nil
			}
			a.io.Eprintf("No receipts yet. Receipts arrive with replies sent under a delegation (pact login).\n")
			return nil
		}
		a.io.Table(a.io.Out, rows)
	}
	if err != nil {
		return err
	}
	if restored > 0 {
		a.io.Eprintf("%s %s came back with `pact restore` and %s not re-checked: pact does not take a backup's word that a receipt verified. Check %s against the Brands' published keys with:\n  %s\n",
			a.io.ErrStyles().Warning.Render("!"), plural(restored, "receipt", "receipts"), map[bool]string{true: "is", false: "are"}[restored == 1],
			map[bool]string{true: "it", false: "them"}[restored == 1], profile.CommandWords(a.profile, "receipts", "verify"))
	}
	if damaged > 0 {
		a.io.Eprintf("%s %d archive rows are damaged; their items say how (problems). `pact receipts verify` checks every receipt.\n",
			a.io.ErrStyles().Warning.Render("warning:"), damaged)
		return silentError{code: exitFailure}
	}
	return nil
}
