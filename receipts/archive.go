package receipts

import (
	"context"
	"crypto"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/pact-cli/pact/delegation"
	"github.com/pact-cli/pact/errs"
	"github.com/pact-cli/pact/store"
)

// Archive is the local receipt archive, in the profile's database
// (store.DB): one row per receipt, keyed by its id, holding the raw JWS,
// the public JWK that verified it and its thumbprint, the claims, what it
// was checked against, and whether it verified (with its problems when
// not). Receipts that fail verification are kept apart as rejected, never
// as verified. Several processes may write at once.
type Archive struct {
	DB store.Receipts
	// Keys fetches signing keys for online verification (a *jwks.Cache).
	Keys delegation.KeySource
	// CheckJWKSURI, when set, is the rule an archived receipt's jwks_uri
	// (Expect.JWKSURI, where its key came from) must pass for the receipt
	// to verify again, online or with the archived key: the endpoint-origin
	// rule of the Provider registration its brand (the interface URL)
	// matches, as login applied it to the grant the jwks_uri came from
	// (conversation.ReceiptJWKSURIRule). A row put back by a restore, or
	// edited, may name a stranger's keys (issue 31 item 6). nil: not checked.
	CheckJWKSURI func(brand, jwksURI string) error

	keys sync.Map // raw JWK JSON → *jose.JSONWebKey (parsed once)
}

// NewArchive returns the archive kept in db.
func NewArchive(db store.Receipts, keys delegation.KeySource) *Archive {
	return &Archive{DB: db, Keys: keys}
}

// Entry is one archived receipt, as stored (`pact receipts show --json`).
type Entry struct {
	ID  string `json:"id"`
	JWS string `json:"jws"`
	// Claims is the verified payload (verified entries) or the claims as
	// shown (rejected entries: unverified, for display only).
	Claims json.RawMessage `json:"claims,omitempty"`
	// JWK is the public key that verified the JWS; JWKThumbprint its RFC
	// 7638 SHA-256 thumbprint (base64url).
	JWK           json.RawMessage `json:"jwk,omitempty"`
	JWKThumbprint string          `json:"jwkThumbprint,omitempty"`
	Expect        Expect          `json:"expect"`
	Verified      bool            `json:"verified"`
	Problems      []string        `json:"problems,omitempty"`
	VerifiedAt    time.Time       `json:"verifiedAt"`
	// Replays counts the turns past the first that the Brand returned this
	// same receipt with: it proves nothing about those (PACT §5.6).
	Replays int `json:"replays,omitempty"`
	// Restored is set on a receipt `pact restore` put back and pact has not
	// checked since: the backup's verdict is not pact's, so it is not
	// Verified, whatever key is kept beside it, until an online `pact
	// receipts verify` checks it against the Brand's published keys.
	// Problems then holds RestoredProblem.
	Restored bool `json:"restored,omitempty"`
}

// RestoredProblem is the problem of a receipt put back by `pact restore`
// and not checked since (Entry.Restored, Item.Restored).
const RestoredProblem = "restored from a backup, not re-checked: pact does not take a backup's word that it verified; `pact receipts verify` checks it against the Brand's published keys"

// RestoredOfflineProblem is why `pact receipts verify --offline` does not
// verify a restored receipt.
const RestoredOfflineProblem = "restored from a backup, not re-checked: the key kept beside it came with the backup, and --offline takes no backup's word for it; `pact receipts verify` (online) checks it against the Brand's published keys"

// Item is the `pact receipts list --json` shape (CLI contract). Problems
// holds why a receipt is not verified (rejected at archive time, or its
// archive row is damaged); it is empty for a verified receipt.
type Item struct {
	ID         string            `json:"id"`
	Brand      string            `json:"brand"`
	GrantID    string            `json:"grantId"`
	User       string            `json:"user"`
	ScopesUsed []string          `json:"scopesUsed"`
	Actions    []json.RawMessage `json:"actions"`
	TS         string            `json:"ts"`
	Verified   bool              `json:"verified"`
	Problems   []string          `json:"problems"`
	// Replayed is set when the Brand returned this same receipt on more
	// than one turn: it was verified for the first, and proves nothing
	// about the others (Notes says how many).
	Replayed bool `json:"replayed"`
	// Notes say why a receipt means less than it seems though it verified
	// (replayed; a bundle's Brand labels set aside); empty otherwise.
	Notes []string `json:"notes"`
	// Restored is set on a receipt `pact restore` put back and pact has not
	// checked since (Entry.Restored): Verified is false and Problems holds
	// RestoredProblem until an online `pact receipts verify`.
	Restored bool `json:"restored"`
	// CardURL and BrandName are the labels archived with the receipt (a
	// bundle's cardUrl and brandName, or the card of the grant it came
	// under); commands print them as cardUrl and brandName when the
	// profile knows the Brand no better.
	CardURL   string `json:"-"`
	BrandName string `json:"-"`
}

// ParsedClaims is e.Claims decoded; a field that does not decode is left
// empty (the claims of a rejected entry are for display only).
func (e *Entry) ParsedClaims() Claims {
	var c Claims
	_ = json.Unmarshal(e.Claims, &c)
	return c
}

// Item returns the list view of e. For a verified entry the fields come
// from the signed JWS payload, never from the claims copy in the file; for
// a rejected entry from the unverified claims shown, and Verified is false.
func (e *Entry) Item() Item {
	var c Claims
	claims := e.Claims
	if e.Verified {
		if p, err := jwsPayload(e.JWS); err == nil {
			claims = p
		}
	}
	_ = json.Unmarshal(claims, &c)
	it := Item{ID: e.ID, Brand: c.Brand, GrantID: c.GrantID, User: c.User, ScopesUsed: c.ScopesUsed, Actions: c.Actions, TS: c.TS, Verified: e.Verified,
		CardURL: e.Expect.Card, BrandName: e.Expect.BrandName, Notes: e.Expect.Notes, Restored: e.Restored}
	it.setReplays(e.Replays)
	if e.Restored {
		it.Verified, it.Problems = false, []string{RestoredProblem}
	}
	return it.withEmptyLists()
}

// withEmptyLists is it with empty lists, never null, for ScopesUsed, Actions and Problems.
func (it Item) withEmptyLists() Item {
	if it.ScopesUsed == nil {
		it.ScopesUsed = []string{}
	}
	if it.Actions == nil {
		it.Actions = []json.RawMessage{}
	}
	if it.Problems == nil {
		it.Problems = []string{}
	}
	if it.Notes == nil {
		it.Notes = []string{}
	}
	return it
}

// ReplayNote is the note of a receipt the Brand returned on n more turns
// than the one it was first archived for.
func ReplayNote(n int) string {
	turns := "1 other turn"
	if n != 1 {
		turns = fmt.Sprintf("%d other turns", n)
	}
	return "replayed: the Brand returned this same receipt on " + turns + "; it was verified for the first turn only and proves nothing about the others"
}

// setRestored marks it restored (Entry.Restored): not verified, whatever
// its row says, with RestoredProblem.
func (it *Item) setRestored(restored bool) {
	if restored {
		it.Restored, it.Verified = true, false
		it.Problems = append([]string{RestoredProblem}, it.Problems...)
	}
}

// setReplays flags it as replayed when the receipt came with n more turns.
func (it *Item) setReplays(n int) {
	if n > 0 {
		it.Replayed = true
		it.Notes = append(append([]string(nil), it.Notes...), ReplayNote(n))
	}
}

// PutTurn archives res as Put does, as the receipt of turn (the interface
// URL and the User's messageId, which a resend keeps: PACT §4.3). others
// is how many other turns the same receipt already came with: more than 0
// means the Brand replayed it, and it is not a receipt of this turn.
func (a *Archive) PutTurn(res *Result, turn string) (e *Entry, others int, err error) {
	if e, err = entryOf(res); err != nil {
		return nil, 0, err
	}
	if others, err = a.DB.PutTurnReceipt(context.Background(), e.row(), turn); err != nil {
		return nil, 0, fmt.Errorf("receipts: archiving %s: %w", ShortID(e.ID), err)
	}
	return e, others, nil
}

// Put archives res: as verified when res.Verified(), else as rejected with
// its problems. A receipt verified later replaces its rejection; a verified
// receipt is never replaced by a rejection. It returns the stored entry.
func (a *Archive) Put(res *Result) (*Entry, error) {
	e, err := entryOf(res)
	if err != nil {
		return nil, err
	}
	if err := a.DB.PutReceipt(context.Background(), e.row()); err != nil {
		return nil, fmt.Errorf("receipts: archiving %s: %w", ShortID(e.ID), err)
	}
	return e, nil
}

// entryOf is the archive entry of a verification result.
func entryOf(res *Result) (*Entry, error) {
	if res == nil || res.ID == "" || res.ID != res.Receipt.ID() {
		return nil, errors.New("receipts: Put needs a Result from Verify")
	}
	e := &Entry{ID: res.ID, JWS: res.Receipt.JWS, Expect: res.Expect, VerifiedAt: res.VerifiedAt, Verified: res.Verified()}
	if e.Verified {
		payload, err := jwsPayload(res.Receipt.JWS)
		if err != nil {
			return nil, err
		}
		e.Claims = payload
		pub := res.Key.Public()
		if e.JWK, err = json.Marshal(pub); err != nil {
			return nil, fmt.Errorf("receipts: encoding key: %w", err)
		}
		tp, err := pub.Thumbprint(crypto.SHA256)
		if err != nil {
			return nil, fmt.Errorf("receipts: key thumbprint: %w", err)
		}
		e.JWKThumbprint = base64.RawURLEncoding.EncodeToString(tp)
	} else {
		e.Claims = res.Receipt.Claims
		e.Problems = res.Problems
		if len(e.Problems) == 0 {
			e.Problems = []string{"not verified"}
		}
	}
	return e, nil
}

// Batch archives results as Put does, but n to a transaction (one commit
// per n receipts instead of one per receipt): `pact receipts import`. Call
// Flush at the end; what was added since the last flush is not archived
// before it.
type Batch struct {
	a       *Archive
	n       int
	pending []store.Receipt
}

// NewBatch returns a batch of up to n receipts a transaction (n < 1 = 1000).
func (a *Archive) NewBatch(n int) *Batch {
	if n < 1 {
		n = 1000
	}
	return &Batch{a: a, n: n}
}

// Add queues res (Put's rules) and writes the batch when it is full.
func (b *Batch) Add(res *Result) error {
	e, err := entryOf(res)
	if err != nil {
		return err
	}
	b.pending = append(b.pending, e.row())
	if len(b.pending) >= b.n {
		return b.Flush()
	}
	return nil
}

// Flush writes the queued receipts in one transaction (all or none).
func (b *Batch) Flush() error {
	if len(b.pending) == 0 {
		return nil
	}
	if err := b.a.DB.PutReceipts(context.Background(), b.pending); err != nil {
		return fmt.Errorf("receipts: archiving %d receipts: %w (none of them was archived)", len(b.pending), err)
	}
	b.pending = b.pending[:0]
	return nil
}

// row is e as the store keeps it.
func (e *Entry) row() store.Receipt {
	expect, _ := json.Marshal(e.Expect)
	r := store.Receipt{ID: e.ID, JWS: e.JWS, Claims: e.Claims, JWK: e.JWK, JWKThumbprint: e.JWKThumbprint,
		Expect: expect, Verified: e.Verified, Problems: e.Problems, VerifiedAt: e.VerifiedAt,
		CardURL: e.Expect.Card, BrandName: e.Expect.BrandName, Notes: e.Expect.Notes}
	r.SetListing(e.Claims, e.Expect.Brand, e.Expect.Card)
	return r
}

// entry turns a stored row into an Entry, checking it: the id must be the
// hash of the JWS, and a verified row's claims must be the signed payload
// (a row edited by hand is shown as not verified; `verify` reports it).
func entry(r store.Receipt) *Entry {
	e := &Entry{ID: r.ID, JWS: r.JWS, Claims: json.RawMessage(r.Claims), JWK: json.RawMessage(r.JWK),
		JWKThumbprint: r.JWKThumbprint, Verified: r.Verified, Problems: r.Problems, VerifiedAt: r.VerifiedAt, Replays: r.Replays}
	if r.Restored {
		// Whatever the backup said: not verified until pact checks it.
		e.Restored, e.Verified, e.Problems = true, false, []string{RestoredProblem}
	}
	if len(e.Claims) == 0 {
		e.Claims = nil
	}
	if len(e.JWK) == 0 {
		e.JWK = nil
	}
	if err := json.Unmarshal(r.Expect, &e.Expect); err != nil {
		e.Verified = false
		e.Problems = append(e.Problems, "damaged archive row: what it was checked against is not readable")
	}
	if (Receipt{JWS: e.JWS}).ID() != e.ID {
		e.Verified = false
		e.Problems = append(e.Problems, "damaged archive row: it does not hold receipt "+ShortID(e.ID))
	}
	if e.Verified && (len(e.JWK) == 0 || e.JWKThumbprint == "") {
		e.Verified = false
		e.Problems = append(e.Problems, "damaged archive row: marked verified but no key is kept with it")
	}
	if e.Verified {
		p, err := jwsPayload(e.JWS)
		if err != nil || !sameJSON(p, e.Claims) {
			e.Verified = false
			e.Problems = append(e.Problems, "the claims in the archive differ from the signed payload (edited after archiving)")
			if err == nil {
				e.Claims = p // show what was signed, not the edit
			}
		}
	}
	return e
}

func jwsPayload(compact string) ([]byte, error) {
	parts := strings.Split(compact, ".")
	if len(parts) != 3 {
		return nil, errors.New("receipts: not a compact JWS")
	}
	p, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, errors.New("receipts: JWS payload is not base64url")
	}
	return p, nil
}

// sameJSON reports whether a and b hold the same JSON value.
func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// ListOptions select receipts for ListFunc (`pact receipts list`).
type ListOptions struct {
	// Brand keeps that Brand's receipts, however it is spelled
	// (BrandFilter): by brand claim (interface URL), expected brand or card
	// URL, or by their host.
	Brand string
	// Scope keeps receipts whose scopesUsed contains it.
	Scope string
	// Since and Until keep receipts whose ts is in [Since, Until] (zero =
	// open); receipts whose ts does not parse are left out when either is set.
	Since, Until time.Time
	// Limit keeps the Limit most recent receipts (0 = all), still given
	// oldest first.
	Limit int
}

// ListFunc calls fn with the list view of every archived receipt the
// options select, verified and rejected, oldest first (by ts, then id),
// reading the archive one row at a time (answered from indexes). A damaged
// row is given to fn with Verified false and the damage in Problems; it
// never stops the listing. fn's error stops it and is returned.
func (a *Archive) ListFunc(ctx context.Context, o ListOptions, fn func(Item) error) error {
	f := BrandFilter(o.Brand)
	f.Scope, f.Since, f.Until, f.Limit = o.Scope, o.Since, o.Until, o.Limit
	var memo itemMemo
	return a.DB.EachReceipt(ctx, f, func(r store.Receipt) error {
		return fn(memo.item(r))
	})
}

// itemMemo decodes, within one listing, each distinct scopesUsed and
// actions column once (most receipts share them). The shared slices are
// clipped, and not to be changed in place.
type itemMemo struct {
	scopes  map[string][]string
	actions map[string][]json.RawMessage
}

const memoMax = 512

func (m *itemMemo) item(r store.Receipt) Item {
	sc, okS := m.scopes[string(r.ScopesUsed)]
	ac, okA := m.actions[string(r.Actions)]
	if !okS || !okA {
		it := item(r)
		if m.scopes == nil {
			m.scopes, m.actions = map[string][]string{}, map[string][]json.RawMessage{}
		}
		if len(it.Problems) == len(r.Problems) && len(m.scopes) < memoMax && len(m.actions) < memoMax { // both decoded
			m.scopes[string(r.ScopesUsed)] = it.ScopesUsed[:len(it.ScopesUsed):len(it.ScopesUsed)]
			m.actions[string(r.Actions)] = it.Actions[:len(it.Actions):len(it.Actions)]
		}
		return it
	}
	it := Item{ID: r.ID, Brand: r.Brand, GrantID: r.GrantID, User: r.User, TS: r.TS, Verified: r.Verified, Problems: r.Problems,
		CardURL: r.CardURL, BrandName: r.BrandName, Notes: r.Notes, ScopesUsed: sc, Actions: ac}
	it.setReplays(r.Replays)
	it.setRestored(r.Restored)
	if len(r.ID) != 64 {
		it.Problems = append(it.Problems, "damaged archive row: its id is not a receipt id")
	}
	if len(it.Problems) > 0 {
		it.Verified = false
	}
	return it.withEmptyLists()
}

// item is the list view of a stored row. Its fields were taken from the
// signed payload when the receipt was archived (from the claims shown, for
// a rejected one); a column that does not decode is a problem of the item.
func item(r store.Receipt) Item {
	it := Item{ID: r.ID, Brand: r.Brand, GrantID: r.GrantID, User: r.User, TS: r.TS, Verified: r.Verified, Problems: r.Problems,
		CardURL: r.CardURL, BrandName: r.BrandName, Notes: r.Notes}
	it.setReplays(r.Replays)
	it.setRestored(r.Restored)
	if err := json.Unmarshal(r.ScopesUsed, &it.ScopesUsed); err != nil {
		it.Problems = append(it.Problems, "damaged archive row: scopesUsed is not a JSON array of strings")
	}
	if err := json.Unmarshal(r.Actions, &it.Actions); err != nil {
		it.Problems = append(it.Problems, "damaged archive row: actions is not a JSON array")
	}
	if len(r.ID) != 64 {
		it.Problems = append(it.Problems, "damaged archive row: its id is not a receipt id")
	}
	if len(it.Problems) > 0 {
		it.Verified = false
	}
	return it.withEmptyLists()
}

// List returns every archived receipt, verified and rejected, oldest first
// (by ts, then id). brand, when not empty, keeps only receipts whose brand
// (interface URL), expected brand or card URL equals it. Damaged rows are
// items with problems; the error is the database's.
func (a *Archive) List(brand string) ([]Item, error) {
	var items []Item
	err := a.ListFunc(context.Background(), ListOptions{Brand: brand}, func(it Item) error {
		items = append(items, it)
		return nil
	})
	return items, err
}

// Records calls fn with every archived receipt the options select, as
// stored (raw JWS, the public JWK that verified it, claims, verification
// result and problems), oldest first. Rejected receipts have no JWK. This is
// what a receipt bundle exports.
func (a *Archive) Records(ctx context.Context, o ListOptions, fn func(*Entry) error) error {
	f := BrandFilter(o.Brand)
	f.Scope, f.Since, f.Until, f.Limit, f.Full = o.Scope, o.Since, o.Until, o.Limit, true
	return a.DB.EachReceipt(ctx, f, func(r store.Receipt) error { return fn(entry(r)) })
}

// ErrNotFound means no archived receipt has that id or prefix.
var ErrNotFound = errors.New("no receipt with that id")

// ErrBadID means an id is too short or matches several receipts.
var ErrBadID = errors.New("receipt id")

// Get returns the entry whose id is id or starts with id (at least 4
// characters; a prefix matching several receipts is an error). A receipt
// both verified and rejected is returned as verified.
func (a *Archive) Get(id string) (*Entry, error) {
	id = strings.ToLower(strings.TrimSpace(id))
	if len(id) < 4 {
		return nil, fmt.Errorf("%w %q is too short (give at least 4 characters)", ErrBadID, id)
	}
	rs, err := a.DB.ReceiptsByPrefix(context.Background(), id, 2)
	if err != nil {
		return nil, err
	}
	switch len(rs) {
	case 0:
		return nil, errs.New(fmt.Sprintf("no receipt %q in the archive", id), ErrNotFound)
	case 1:
		return entry(rs[0]), nil
	}
	return nil, fmt.Errorf("%w %q matches several receipts; give more characters", ErrBadID, id)
}

// Check is the outcome of verifying one archived receipt again.
type Check struct {
	ID       string   `json:"id"`
	Verified bool     `json:"verified"`
	Problems []string `json:"problems"`
	// KeySource says which key checked the signature: "jwks_uri" (fetched
	// again) or "archive" (the key kept at archive time, --offline).
	KeySource string `json:"keySource,omitempty"`
	// Unchecked is set when the receipt could not be checked at all (its
	// jwks_uri did not answer): an outage, not a forgery.
	Unchecked bool `json:"unchecked,omitempty"`
	// Replayed and Notes are as in Item: a receipt the Brand returned on
	// several turns verifies for the first only.
	Replayed bool     `json:"replayed,omitempty"`
	Notes    []string `json:"notes,omitempty"`
	// Restored is set when the receipt stays restored, not re-checked
	// (Entry.Restored): checked --offline (the key beside it came with the
	// backup), or its Brand's keys could not be fetched. It is then
	// Unchecked too. An online check that reaches the Brand's keys archives
	// pact's own verdict, and the receipt is restored no more.
	Restored bool `json:"restored,omitempty"`
}

// VerifyAll verifies every archived receipt again, those kept as rejected
// included, and returns one Check per receipt, sorted by id. Offline
// (online false) it uses the key archived with each receipt (a rejected
// receipt has none and fails); online it fetches the key by kid from the
// receipt's jwks_uri through a.Keys, and a rejected receipt that now
// verifies is archived as verified. Receipts are checked in parallel.
func (a *Archive) VerifyAll(ctx context.Context, online bool) ([]Check, error) {
	// One pass over the archive: each row is read once, whole, and handed to
	// the verifying workers while the next rows are read.
	rows := make(chan *Entry, 256)
	results := make(chan Check, 256)
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for e := range rows {
				if err := ctx.Err(); err != nil {
					results <- Check{ID: e.ID, Problems: []string{"not checked: " + err.Error()}}
					continue
				}
				results <- a.check(ctx, e, online)
			}
		}()
	}
	var out []Check
	collected := make(chan struct{})
	go func() {
		defer close(collected)
		for c := range results {
			out = append(out, c)
		}
	}()
	err := a.DB.EachReceipt(ctx, store.ReceiptFilter{Full: true}, func(r store.Receipt) error {
		rows <- entry(r)
		return nil
	})
	close(rows)
	wg.Wait()
	close(results)
	<-collected
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// VerifyIDs verifies the receipts with these ids (or unique prefixes)
// again, as VerifyAll does. An unknown id gives a failed Check.
func (a *Archive) VerifyIDs(ctx context.Context, ids []string, online bool) []Check {
	out := make([]Check, len(ids))
	for i, id := range ids {
		e, err := a.Get(id)
		if err != nil {
			out[i] = Check{ID: id, Problems: []string{err.Error()}}
			continue
		}
		out[i] = a.check(ctx, e, online)
	}
	return out
}

// check verifies one entry again.
func (a *Archive) check(ctx context.Context, e *Entry, online bool) Check {
	c := a.check1(ctx, e, online)
	it := Item{Notes: e.Expect.Notes}
	it.setReplays(e.Replays)
	c.Replayed, c.Notes = it.Replayed, it.Notes
	return c
}

func (a *Archive) check1(ctx context.Context, e *Entry, online bool) Check {
	c := Check{ID: e.ID, Problems: []string{}}
	if err := a.trustedJWKSURI(e); err != nil {
		if !e.Verified && !e.Restored {
			c.Problems = append([]string{"kept as rejected"}, e.Problems...)
		}
		if !slices.Contains(c.Problems, err.Error()) { // a restore may have said it already
			c.Problems = append(c.Problems, err.Error())
		}
		return c
	}
	if e.Restored {
		return a.recheckRestored(ctx, e, online)
	}
	if !e.Verified {
		return a.recheckRejected(ctx, e, online)
	}
	rc := Receipt{JWS: e.JWS, Claims: e.Claims}
	var res *Result
	if online {
		if a.Keys == nil {
			c.Problems, c.Unchecked = []string{"no key source for online verification"}, true
			return c
		}
		var err error
		res, err = Verify(ctx, a.Keys, rc, e.Expect)
		var ve *delegation.VerifyError
		if err != nil && !errors.As(err, &ve) {
			// An outage is not a forgery, and the key in the archive file
			// is no authority online: say it was not checked.
			c.Unchecked = true
			c.Problems = []string{"not checked: " + err.Error() + " (`pact receipts verify --offline` checks with the key kept at archive time)"}
			return c
		}
		c.KeySource = "jwks_uri"
		if err != nil {
			for i, p := range res.Problems {
				if strings.Contains(p, "unknown kid") {
					res.Problems[i] = p + " (if the Brand retired its key since, `pact receipts verify --offline` checks with the key kept at archive time)"
				}
			}
		}
	} else {
		key, err := a.key(e.JWK)
		if err != nil {
			c.Problems = []string{err.Error()}
			return c
		}
		res, _ = VerifyOffline(rc, key, e.Expect)
		c.KeySource = "archive"
	}
	c.Verified = res.Verified()
	if !c.Verified {
		c.Problems = res.Problems
	}
	return c
}

// trustedJWKSURI applies CheckJWKSURI to e's jwks_uri: a *JWKSURIError.
func (a *Archive) trustedJWKSURI(e *Entry) error {
	if a.CheckJWKSURI == nil || e.Expect.JWKSURI == "" {
		return nil
	}
	if err := a.CheckJWKSURI(e.Expect.Brand, e.Expect.JWKSURI); err != nil {
		return &JWKSURIError{Brand: e.Expect.Brand, JWKSURI: e.Expect.JWKSURI, Err: err}
	}
	return nil
}

// JWKSURIError refuses the key of a receipt whose jwks_uri (where the key
// came from) is not under the registration of the Provider of its brand
// (Archive.CheckJWKSURI), which login requires of the grant a jwks_uri
// comes from. It unwraps to the rule's error.
type JWKSURIError struct {
	Brand, JWKSURI string
	Err            error
}

func (e *JWKSURIError) Error() string {
	return fmt.Sprintf("its jwks_uri %s is not under the registration of the Provider of %s, as login requires of the keys a receipt is checked with: pact does not take that key's word for it",
		e.JWKSURI, e.Brand)
}

func (e *JWKSURIError) Unwrap() error { return e.Err }

// key parses an archived public JWK once and caches it by its exact JSON.
func (a *Archive) key(raw json.RawMessage) (*jose.JSONWebKey, error) {
	if k, ok := a.keys.Load(string(raw)); ok {
		return k.(*jose.JSONWebKey), nil
	}
	var k jose.JSONWebKey
	if err := json.Unmarshal(raw, &k); err != nil || !k.Valid() || !k.IsPublic() {
		return nil, errors.New("archived key is not a valid public JWK")
	}
	a.keys.Store(string(raw), &k)
	return &k, nil
}

// recheckRestored checks a receipt put back by a restore (Entry.Restored).
// Offline it stays restored, unchecked: the key kept beside it came with
// the backup, and proves nothing. Online it is verified afresh against its
// jwks_uri (whose origin check1 has checked) and the grant it was expected
// under, and pact's verdict, verified or rejected, is archived in place of
// the backup's; when the Brand's keys cannot be fetched it stays restored.
func (a *Archive) recheckRestored(ctx context.Context, e *Entry, online bool) Check {
	c := Check{ID: e.ID, Problems: []string{}, Restored: true, Unchecked: true}
	switch {
	case (Receipt{JWS: e.JWS}).ID() != e.ID:
		return Check{ID: e.ID, Problems: []string{"damaged archive row: it does not hold receipt " + ShortID(e.ID)}}
	case !online:
		c.Problems = []string{RestoredOfflineProblem}
		return c
	case a.Keys == nil:
		c.Problems = []string{"no key source for online verification; it stays restored, not re-checked"}
		return c
	case e.Expect.JWKSURI == "":
		c.Problems = []string{"restored from a backup with no jwks_uri to check it against; it stays restored, not re-checked"}
		return c
	}
	res, err := Verify(ctx, a.Keys, Receipt{JWS: e.JWS, Claims: e.Claims}, e.Expect)
	var ve *delegation.VerifyError
	if err != nil && !errors.As(err, &ve) {
		// An outage is not a verdict: it stays as it was.
		c.Problems = []string{"not checked: " + err.Error() + "; it stays restored, not re-checked"}
		return c
	}
	c = Check{ID: e.ID, Problems: []string{}, KeySource: "jwks_uri", Verified: err == nil && res.Verified()}
	if !c.Verified {
		c.Problems = append(c.Problems, res.Problems...)
	}
	if _, err := a.Put(res); err != nil {
		c.Verified, c.Restored = false, true
		c.Problems = append(c.Problems, "checked, but archiving pact's verdict failed: "+err.Error()+"; it stays restored, not re-checked")
	}
	return c
}

// recheckRejected checks a receipt kept as rejected (or whose archive row
// is damaged) again. Offline there is no archived key: it fails with the
// reasons it was kept apart. Online it is verified afresh against its
// jwks_uri and the grant it was expected under; when it now verifies it is
// archived as verified.
func (a *Archive) recheckRejected(ctx context.Context, e *Entry, online bool) Check {
	c := Check{ID: e.ID, Problems: []string{}}
	kept := append([]string{"kept as rejected"}, e.Problems...)
	if !online || a.Keys == nil || e.Expect.JWKSURI == "" || (Receipt{JWS: e.JWS}).ID() != e.ID {
		c.Problems = kept
		return c
	}
	res, err := Verify(ctx, a.Keys, Receipt{JWS: e.JWS, Claims: e.Claims}, e.Expect)
	var ve *delegation.VerifyError
	if err != nil && !errors.As(err, &ve) {
		// Known bad until it verifies: an outage does not make a rejected
		// receipt "not checked" (it fails, exit 6, network or not).
		c.Problems = append(kept, "not checked again: "+err.Error())
		return c
	}
	c.KeySource = "jwks_uri"
	if err != nil || !res.Verified() {
		c.Problems = append(kept, res.Problems...)
		return c
	}
	if _, err := a.Put(res); err != nil {
		c.Problems = append(kept, "verifies now, but archiving it as verified failed: "+err.Error())
		return c
	}
	c.Verified = true
	return c
}
