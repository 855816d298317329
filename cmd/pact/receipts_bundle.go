package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/receipts"
	"github.com/pact-cli/pact/store"
)

// addReceiptBundleCommands adds receipt bundles (a file a third party can
// check without pact's state) to `pact receipts`: export, import, and
// `verify --bundle FILE`, which needs no profile.
func addReceiptBundleCommands(a *app, receiptsCmd, verify *cobra.Command) {
	var bundle string
	verify.Use = "verify [ID...|--all] [--offline] | verify --bundle FILE"
	verify.Long += `

With --bundle FILE, the receipts of a bundle (JSON Lines from ` + "`pact receipts export`" + `)
are verified on their own, each with the key on its line, with no profile and no
network: anyone can run it. That proves the signature matches the key in the
bundle, not that the key is the Brand's: ` + "`pact receipts import`" + ` also checks
the key is in the Brand's published set. Exits 6 if any line fails.`
	verify.Flags().StringVar(&bundle, "bundle", "", "verify the receipts of a bundle file (JSON Lines from `pact receipts export`), with no profile")
	inner := verify.RunE
	verify.RunE = func(cmd *cobra.Command, args []string) error {
		if bundle == "" {
			return inner(cmd, args)
		}
		if len(args) > 0 || cmd.Flags().Changed("all") || cmd.Flags().Changed("offline") {
			return usageError{errors.New("--bundle checks a file on its own: give no receipt IDs, --all or --offline with it")}
		}
		return a.bundleRun(cmd.Context(), bundle, nil, nil)
	}
	receiptsCmd.AddCommand(newReceiptsExportCmd(a), newReceiptsImportCmd(a))
}

func newReceiptsExportCmd(a *app) *cobra.Command {
	var all, force bool
	var brand, out string
	cmd := &cobra.Command{
		Use:   "export [ID...|--all] [--brand BRAND] -o FILE [--force]",
		Short: "Write receipts to a bundle anyone can verify without pact",
		Long: `Write archived receipts to FILE as JSON Lines, one receipt a line:
{"jws": "<compact JWS>", "jwk": {<public JWK that verifies it>}, "jwks_uri", "verifiedAt",
"cardUrl", "brandName"} (the last two name the Brand for people; they verify nothing).
A Brand, a bank or a court can check each line with a standard JOSE library
(docs/json.md shows how) or with ` + "`pact receipts verify --bundle FILE`" + `.
Only verified receipts are exported. -o - writes to stdout. An existing FILE
is not overwritten unless --force.`,
		ValidArgsFunction: a.completeReceiptIDs,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case out == "":
				return usageError{errors.New("name the bundle file with -o FILE (- for stdout)")}
			case all && len(args) > 0:
				return usageError{errors.New("give receipt IDs or --all, not both")}
			case !all && len(args) == 0:
				return usageError{errors.New("name the receipts to export (IDs from `pact receipts list`) or --all")}
			case brand != "" && len(args) > 0:
				return usageError{errors.New("--brand selects with --all; give it without receipt IDs")}
			}
			if _, err := os.Lstat(out); err == nil && out != "-" && !force {
				return usageError{fmt.Errorf("%s exists: pact does not overwrite it (name another file, or --force to replace it)", out)}
			}
			opts, err := a.sessionOptions()
			if err != nil {
				return err
			}
			arch := opts.Receipts
			ids := args
			skipped := 0
			if all {
				items, damaged := arch.ListBrand(brand)
				if damaged != nil {
					a.io.Eprintf("%s %v\n", a.io.ErrStyles().Warning.Render("warning:"), damaged)
				}
				ids = ids[:0:0]
				for _, it := range items {
					if it.Verified {
						ids = append(ids, it.ID)
					} else {
						skipped++
					}
				}
			}
			var recs []receipts.BundleRecord
			ix := a.brandIndex(opts)
			for _, id := range ids {
				get := arch.Get // an ID or prefix the User gave
				if all {
					get = arch.VerifiedEntry // a full id from the listing: no scan
				}
				e, err := get(id)
				if err != nil {
					return err
				}
				rec, err := receipts.BundleRecordFromEntry(e)
				if err != nil {
					return err
				}
				// The Brand's card URL and name as this profile knows them:
				// labels for whoever imports the bundle.
				c := e.ParsedClaims()
				ref := ix.receipt(c.Brand, rec.CardURL, rec.BrandName)
				rec.CardURL, rec.BrandName = ref.CardURL, ref.Name
				recs = append(recs, rec)
			}
			if err := writeBundle(out, a.io.Out, recs); err != nil {
				return err
			}
			if a.json && out != "-" {
				return a.printJSON(map[string]any{"file": out, "exported": len(recs), "skipped": skipped})
			}
			st := a.io.ErrStyles()
			a.io.Eprintf("%s exported %s to %s\n", st.Success.Render("✓"), plural(len(recs), "receipt", "receipts"), out)
			if skipped > 0 {
				a.io.Eprintf("%s left out %s that failed verification when they arrived\n", st.Warning.Render("!"), plural(skipped, "receipt", "receipts"))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "export every verified receipt")
	cmd.Flags().StringVar(&brand, "brand", "", "with --all: only this Brand's receipts")
	cmd.Flags().StringVarP(&out, "output", "o", "", "the bundle file to write (- for stdout)")
	cmd.Flags().BoolVar(&force, "force", false, "replace FILE when it exists")
	cmd.RegisterFlagCompletionFunc("brand", a.completeBrands)
	return cmd
}

// writeBundle writes recs to path atomically (0600), or to stdout for "-".
func writeBundle(path string, stdout io.Writer, recs []receipts.BundleRecord) error {
	if path == "-" {
		for _, r := range recs {
			if err := receipts.WriteBundleRecord(stdout, r); err != nil {
				return err
			}
		}
		return nil
	}
	f, err := store.NewPendingFile(path, 0o600)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer f.Cleanup()
	for _, r := range recs {
		if err := receipts.WriteBundleRecord(f, r); err != nil {
			return fmt.Errorf("writing %s: %w (nothing was written)", path, err)
		}
	}
	if err := f.CloseAtomicallyReplace(); err != nil {
		return fmt.Errorf("writing %s: %w (nothing was written)", path, err)
	}
	return nil
}

func newReceiptsImportCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "import FILE",
		Short: "Add the receipts of a bundle to the archive, each verified with its key",
		Long: `Read a receipt bundle (JSON Lines from ` + "`pact receipts export`" + `), verify each line's
signature with its jwk, check that key is one the Brand publishes (the jwks_uri
of the Brand's authorization server metadata, found from this profile's grant
or the Brand's Agent Card, never from the line), and add the receipts that
verify to this profile's archive. Lines that do not verify, or are signed by a
key the Brand does not publish, are refused and reported; when the Brand's
keys cannot be fetched the receipt is kept as not verified. One import looks
up the keys of 16 Brands at most (the lines of others are kept as not
verified, and it says so: import again to check 16 more). FILE may be - for
stdin, or a FIFO; Ctrl+C ends the import at once. Exit 6 if any line is not
verified.`,
		Args: exactArgs(1, "import needs the bundle FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := a.sessionOptions()
			if err != nil {
				return err
			}
			// One transaction per thousand receipts, not one per receipt.
			b := opts.Receipts.NewBatch(1000)
			tooMany := 0 // receipts of Brands past conversation.MaxLookups
			keysOf := conversation.BrandKeysResolver(cmd.Context(), opts)
			cardOf := conversation.CardOfBrandResolver(cmd.Context(), opts)
			put := func(c *receipts.BundleCheck, res *receipts.Result) (bool, error) {
				if e, err := opts.Receipts.Get(res.ID); err == nil && e.Verified {
					return false, nil // already in the archive (one kept as not verified is checked again)
				}
				res.Expect.Imported = true // its user is not this profile's User
				// The signature verified with the line's key; the key must
				// also be one the Brand publishes (as `receipts verify`
				// checks online), or the line proves nothing.
				bk, err := keysOf(res.Expect.Brand)
				uri := bk.JWKSURI
				var problems []string
				if err == nil {
					problems, err = receipts.CheckPublished(cmd.Context(), opts.Keys, res, uri)
				}
				if err != nil {
					res.AttributeTo("", "") // no key checked: the labels are nobody's word
				} else {
					// The Brand whose published key signed it; the line's
					// cardUrl only when that card is this Brand's too.
					card, name := bk.CardURL, bk.Name
					if lc := res.Expect.Card; lc != "" && lc != card {
						if n, ok := cardOf(lc, res.Expect.Brand); ok {
							card, name = lc, n
						}
					}
					res.AttributeTo(card, name)
				}
				switch {
				case err != nil:
					// Kept, but never as verified: nobody checked the key.
					res.Key = nil
					res.Expect.JWKSURI = uri
					if payload, perr := receipts.Payload(res.Receipt.JWS); perr == nil {
						res.Receipt.Claims = payload // shown, marked not verified
					}
					why := "the Brand's keys could not be fetched (" + err.Error() + ")"
					if errors.Is(err, receipts.ErrKeysUnavailable) {
						why = err.Error()
					}
					again := "import the bundle again when the Brand can be reached"
					if errors.Is(err, conversation.ErrTooManyBrands) {
						tooMany++
						again = fmt.Sprintf("import the bundle again to check %d more Brands", conversation.MaxLookups)
					}
					res.Problems = []string{"not checked: " + why + "; kept as not verified: " + again}
					c.Verified, c.Problems = false, res.Problems
					return true, b.Add(res)
				case len(problems) > 0:
					c.Verified, c.Problems = false, problems
					return false, nil
				}
				return true, b.Add(res)
			}
			err = a.bundleRun(cmd.Context(), args[0], put, b.Flush)
			if tooMany > 0 {
				a.io.Eprintf("%s the bundle names receipts of more than %d Brands: pact looked up the keys of %d only (a bundle is a file anyone can write, and each Brand is two or three requests to addresses it names); %s of the other Brands %s kept as not verified: import the bundle again to check %d more\n",
					a.io.ErrStyles().Warning.Render("!"), conversation.MaxLookups, conversation.MaxLookups,
					plural(tooMany, "receipt", "receipts"), map[bool]string{true: "was", false: "were"}[tooMany == 1], conversation.MaxLookups)
			}
			return err
		},
	}
}

// bundleRun verifies the bundle at path line by line and, with put, adds
// each verified receipt (import; put says false for a receipt already in
// the archive; flush, when set, after the last line); it reports every
// line as it comes (--json: one document, written as the lines are
// checked, so that memory stays flat however long the bundle; with --jq
// the document is built first) and exits 6 when any line fails. Ctrl+C or
// TERM ends it at once, even while it waits for a FIFO or stdin.
func (a *app) bundleRun(ctx context.Context, path string, put func(*receipts.BundleCheck, *receipts.Result) (bool, error), flush func() error) error {
	r, closeIn, err := openBundle(ctx, path, a.io.In)
	if err != nil {
		return err
	}
	defer closeIn()
	st := a.io.ErrStyles()
	ok, failed, already, kept := 0, 0, 0, 0
	var results []receipts.BundleCheck
	var doc *jsonDoc
	if a.json {
		if a.jq == nil {
			doc = newJSONDoc(a.io.Out, "results")
		} else {
			results = []receipts.BundleCheck{}
		}
	}
	sp := a.spinner("Verifying receipts")
	// Lines are handled on a goroutine of their own, so that a signal ends
	// the command even while a read blocks; mu makes the last line handled
	// before the signal the last one reported.
	var mu sync.Mutex
	stopped := false
	each := func(c receipts.BundleCheck, res *receipts.Result) error {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return context.Canceled
		}
		keptNow := false
		if res != nil && put != nil {
			added, err := put(&c, res)
			if err != nil {
				return err
			}
			switch {
			case !added && c.Verified:
				already++
			case added && !c.Verified:
				keptNow = true
			}
		}
		switch {
		case c.Verified:
			ok++
		case keptNow:
			kept++
		default:
			failed++
		}
		if doc != nil {
			return doc.add(c)
		}
		if a.json {
			results = append(results, c)
			return nil
		}
		sp.Stop()
		switch {
		case c.Verified:
			a.io.Printf("%s %s\n", st.Success.Render("✓"), receipts.ShortID(c.ID))
		case c.ID != "":
			a.io.Printf("%s line %d: %s  %s\n", st.Error.Render("✗"), c.Line, receipts.ShortID(c.ID), strings.Join(c.Problems, "; "))
		default:
			a.io.Printf("%s line %d: %s\n", st.Error.Render("✗"), c.Line, strings.Join(c.Problems, "; "))
		}
		return nil
	}
	done := make(chan error, 1)
	go func() {
		err := receipts.VerifyBundle(r, each)
		if err == nil && flush != nil {
			mu.Lock()
			if !stopped {
				err = flush()
			}
			mu.Unlock()
		}
		done <- err
	}()
	select {
	case err = <-done:
	case <-ctx.Done():
		closeIn() // a FIFO or pipe read returns now; a terminal's is left behind
		mu.Lock()
		stopped = true
		mu.Unlock()
		err = ctx.Err()
	}
	sp.Stop()
	counts := map[string]any{"failed": failed}
	key := "verified"
	if put != nil {
		key = "imported"
		counts["alreadyInArchive"] = already
		counts["keptNotVerified"] = kept
	} else {
		// Only the signature with the line's key: say so.
		counts["checkedAgainstPublishedKeys"] = false
	}
	counts[key] = ok
	if doc != nil {
		if err != nil {
			code, reason, status := classify(err)
			counts["error"] = map[string]any{"reason": reason, "message": jsonMessage(err), "httpStatus": status}
			if werr := doc.finish(counts); werr != nil {
				return werr
			}
			a.io.Eprintf("%s %s\n", st.Error.Render("error:"), safe(err.Error()))
			return silentError{code: code}
		}
		if err := doc.finish(counts); err != nil {
			return err
		}
	}
	if err != nil {
		return err
	}
	if a.json && doc == nil {
		counts["results"] = results
		if err := a.printJSON(counts); err != nil {
			return err
		}
	} else if put != nil && !a.json {
		words := []string{fmt.Sprintf("%d imported", ok-already)}
		if already > 0 {
			words = append(words, fmt.Sprintf("%d already in the archive", already))
		}
		if kept > 0 {
			words = append(words, fmt.Sprintf("%d kept as not verified (the Brand's keys could not be fetched)", kept))
		}
		a.io.Eprintf("%s, %d refused\n", strings.Join(words, ", "), failed)
	} else if !a.json {
		a.io.Eprintf("%d verified, %d failed\n", ok, failed)
		if ok > 0 {
			a.io.Eprintf("%s\n", st.Faint.Render("verified: signature valid with the key in the bundle; not checked against the Brand's published keys (`pact receipts import` checks that)"))
		}
	}
	if failed > 0 || kept > 0 {
		return silentError{code: exitReceipts}
	}
	return nil
}

// openBundle opens the bundle at path ("-": in) for reading; closeIn ends
// a read in progress where the system can (a FIFO, a pipe). Opening a FIFO
// waits for its writer: ctx ends that wait.
func openBundle(ctx context.Context, path string, in io.Reader) (io.Reader, func(), error) {
	if path == "-" {
		if f, ok := in.(*os.File); ok {
			return f, func() { f.SetReadDeadline(time.Now()) }, nil
		}
		return in, func() {}, nil
	}
	type opened struct {
		f   *os.File
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		f, err := os.Open(path)
		ch <- opened{f, err}
	}()
	select {
	case o := <-ch:
		if o.err != nil {
			return nil, nil, usageError{fmt.Errorf("reading the bundle: %w", o.err)}
		}
		var once sync.Once
		return o.f, func() { once.Do(func() { o.f.Close() }) }, nil
	case <-ctx.Done():
		go func() {
			if o := <-ch; o.f != nil {
				o.f.Close()
			}
		}()
		return nil, nil, ctx.Err()
	}
}
