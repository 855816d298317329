package agent

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/pact-cli/pact/conversation"
	"github.com/pact-cli/pact/receipts"
)

// ErrNoArchive is the error of a receipt use case on an agent that keeps
// no receipt archive.
var ErrNoArchive = errors.New("this profile keeps no receipt archive")

// archive is the receipt archive, or ErrNoArchive.
func (l *Local) archive() (*receipts.Archive, error) {
	if l.Opts.Receipts == nil {
		return nil, ErrNoArchive
	}
	return l.Opts.Receipts, nil
}

// Receipts lists the archive (receipts.Archive.ListFunc), each receipt
// named by the Brand as the profile knows it (Brands, by the receipts rule
// of docs/json.md: conversation.BrandIndex.Receipt).
func (l *Local) Receipts(ctx context.Context, lo receipts.ListOptions, each func(ReceiptItem) error) error {
	arch, err := l.archive()
	if err != nil {
		return err
	}
	ix := Brands(l.Opts)
	return arch.ListFunc(ctx, lo, func(it receipts.Item) error {
		ref := ix.Receipt(it.Brand, it.CardURL, it.BrandName)
		return each(ReceiptItem{Item: it, CardURL: ref.CardURL, BrandName: ref.Name})
	})
}

// Receipt is receipts.Archive.Get, named by its Brand.
func (l *Local) Receipt(ctx context.Context, id string) (*ReceiptEntry, error) {
	arch, err := l.archive()
	if err != nil {
		return nil, err
	}
	e, err := arch.Get(id)
	if err != nil {
		return nil, err
	}
	c := e.ParsedClaims()
	ref := Brands(l.Opts).Receipt(c.Brand, e.Expect.Card, e.Expect.BrandName)
	return &ReceiptEntry{Entry: e, Brand: c.Brand, CardURL: ref.CardURL, BrandName: ref.Name}, nil
}

// VerifyReceipts checks every id names (each looked up first: an unknown
// one fails before any is checked), or with none every archived receipt
// (receipts.Archive.VerifyIDs, VerifyAll), with the Brands' keys fetched
// again unless Offline. Problems is never nil.
func (l *Local) VerifyReceipts(ctx context.Context, req VerifyRequest) ([]ReceiptCheck, error) {
	arch, err := l.archive()
	if err != nil {
		return nil, err
	}
	for _, id := range req.IDs {
		if _, err := arch.Get(id); err != nil {
			return nil, err
		}
	}
	var checks []receipts.Check
	if len(req.IDs) == 0 {
		if checks, err = arch.VerifyAll(ctx, !req.Offline); err != nil {
			return nil, err
		}
	} else {
		checks = arch.VerifyIDs(ctx, req.IDs, !req.Offline)
	}
	out := make([]ReceiptCheck, len(checks))
	var ix conversation.BrandIndex
	if req.Named {
		ix = Brands(l.Opts)
	}
	for i, ch := range checks {
		if ch.Problems == nil {
			ch.Problems = []string{}
		}
		out[i].Check = ch
		if !req.Named {
			continue
		}
		if e, err := arch.Get(ch.ID); err == nil {
			c := e.ParsedClaims()
			ref := ix.Receipt(c.Brand, e.Expect.Card, e.Expect.BrandName)
			out[i].Brand, out[i].CardURL, out[i].BrandName = c.Brand, ref.CardURL, ref.Name
		}
	}
	return out, nil
}

// ExportReceipts makes the bundle records of the receipts req names
// (receipts.BundleRecordFromEntry), each labelled with its Brand's card URL
// and name as the profile knows them. An id naming a receipt kept as not
// verified fails (receipts.ErrNotVerified); with All those are counted in
// Skipped.
func (l *Local) ExportReceipts(ctx context.Context, req ExportRequest) (*Export, error) {
	arch, err := l.archive()
	if err != nil {
		return nil, err
	}
	out := &Export{Records: []receipts.BundleRecord{}}
	ids := req.IDs
	if req.All {
		items, damaged := arch.ListBrand(req.Brand)
		if damaged != nil {
			out.Damaged = damaged.Error()
		}
		ids = nil
		for _, it := range items {
			if it.Verified {
				ids = append(ids, it.ID)
			} else {
				out.Skipped++
			}
		}
	}
	ix := Brands(l.Opts)
	for _, id := range ids {
		get := arch.Get // an ID or prefix the User gave
		if req.All {
			get = arch.VerifiedEntry // a full id from the listing: no scan
		}
		e, err := get(id)
		if err != nil {
			return nil, err
		}
		rec, err := receipts.BundleRecordFromEntry(e)
		if err != nil {
			return nil, err
		}
		// The Brand's card URL and name as this profile knows them:
		// labels for whoever imports the bundle.
		c := e.ParsedClaims()
		ref := ix.Receipt(c.Brand, rec.CardURL, rec.BrandName)
		rec.CardURL, rec.BrandName = ref.CardURL, ref.Name
		out.Records = append(out.Records, rec)
	}
	return out, nil
}

// ImportReceipts verifies each line of bundle with its own key
// (receipts.VerifyBundle), then checks that key is one the Brand publishes
// (the jwks_uri of the Brand's authorization server metadata, found from
// this profile's grant or the Brand's Agent Card, never from the line:
// receipts.CheckPublished), and adds the receipts that pass to the archive,
// a thousand to a transaction. A receipt whose Brand's keys cannot be
// fetched is kept as not verified; one signed by a key the Brand does not
// publish is refused. One import looks up the keys of
// conversation.MaxLookups Brands at most: the receipts of others are kept
// as not verified (ImportLine.NotLookedUp). each is told of every line.
func (l *Local) ImportReceipts(ctx context.Context, bundle io.Reader, each func(ImportLine) error) error {
	arch, err := l.archive()
	if err != nil {
		return err
	}
	opts := l.Opts
	b := arch.NewBatch(1000)
	keysOf := conversation.BrandKeysResolver(ctx, opts)
	cardOf := conversation.CardOfBrandResolver(ctx, opts)
	put := func(c *receipts.BundleCheck, res *receipts.Result, notLookedUp *bool) (bool, error) {
		if e, err := arch.Get(res.ID); err == nil && e.Verified {
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
			problems, err = receipts.CheckPublished(ctx, opts.Keys, res, uri)
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
				*notLookedUp = true
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
	err = receipts.VerifyBundle(bundle, func(c receipts.BundleCheck, res *receipts.Result) error {
		line := ImportLine{Checked: res != nil}
		if res != nil {
			added, err := put(&c, res, &line.NotLookedUp)
			if err != nil {
				return err
			}
			line.Added = added
		}
		line.BundleCheck = c
		return each(line)
	})
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err // ended before the last receipts were written
	}
	return b.Flush()
}
