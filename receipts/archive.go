package receipts

import (
	"context"
	"crypto"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/pact-cli/pact/delegation"
	"github.com/pact-cli/pact/store"
)

// Archive is the local receipt archive: one JSON file per receipt, named by
// its id, under Dir/verified or Dir/rejected. Files are written atomically
// (temporary file + rename, mode 0600), so a kill mid-write leaves either
// the old state or the new file, and two processes may write at once (each
// receipt is its own file; the same receipt always gets the same name).
type Archive struct {
	Dir string
	// Keys fetches signing keys for online verification (a *jwks.Cache).
	Keys delegation.KeySource

	keys sync.Map // raw JWK JSON → *jose.JSONWebKey (parsed once)
}

// Entry is one archived receipt, as stored.
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
}

// Item is the `pact receipts list --json` shape (CLI contract).
type Item struct {
	ID         string            `json:"id"`
	Brand      string            `json:"brand"`
	GrantID    string            `json:"grantId"`
	User       string            `json:"user"`
	ScopesUsed []string          `json:"scopesUsed"`
	Actions    []json.RawMessage `json:"actions"`
	TS         string            `json:"ts"`
	Verified   bool              `json:"verified"`
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
	it := Item{ID: e.ID, Brand: c.Brand, GrantID: c.GrantID, User: c.User, ScopesUsed: c.ScopesUsed, Actions: c.Actions, TS: c.TS, Verified: e.Verified}
	if it.ScopesUsed == nil {
		it.ScopesUsed = []string{}
	}
	if it.Actions == nil {
		it.Actions = []json.RawMessage{}
	}
	return it
}

const (
	verifiedDir = "verified"
	rejectedDir = "rejected"
)

func (a *Archive) path(area, id string) string { return filepath.Join(a.Dir, area, id+".json") }

// Put archives res: under verified/ when res.Verified(), else under
// rejected/ with its problems. A receipt verified later is removed from
// rejected/. It returns the stored entry.
func (a *Archive) Put(res *Result) (*Entry, error) {
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
	area := rejectedDir
	if e.Verified {
		area = verifiedDir
	}
	if err := a.write(area, e); err != nil {
		return nil, err
	}
	if e.Verified {
		if err := os.Remove(a.path(rejectedDir, e.ID)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return e, fmt.Errorf("receipts: removing the earlier rejection: %w", err)
		}
	}
	return e, nil
}

func (a *Archive) write(area string, e *Entry) error {
	data, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("receipts: encoding entry: %w", err)
	}
	return store.WriteFile(a.path(area, e.ID), append(data, '\n'), 0o600)
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

// ids lists the receipt ids stored in area, skipping temporary files left
// by an interrupted write.
func (a *Archive) ids(area string) ([]string, error) {
	des, err := os.ReadDir(filepath.Join(a.Dir, area))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("receipts: %w", err)
	}
	out := make([]string, 0, len(des))
	for _, de := range des {
		n := de.Name()
		if strings.HasPrefix(n, ".") || !strings.HasSuffix(n, ".json") || !de.Type().IsRegular() {
			continue
		}
		out = append(out, strings.TrimSuffix(n, ".json"))
	}
	return out, nil
}

func (a *Archive) read(area, id string) (*Entry, error) {
	data, err := os.ReadFile(a.path(area, id))
	if err != nil {
		return nil, err
	}
	var e Entry
	if err := json.Unmarshal(data, &e); err != nil {
		return nil, fmt.Errorf("receipts: %s is damaged: %v", a.path(area, id), err)
	}
	if e.ID != id || (Receipt{JWS: e.JWS}).ID() != id {
		return nil, fmt.Errorf("receipts: %s does not hold receipt %s", a.path(area, id), ShortID(id))
	}
	// Only the verified area can hold verified entries, and only when the
	// claims kept beside the JWS are still the signed ones (a file edited
	// by hand is shown as not verified; `verify` reports it).
	e.Verified = e.Verified && area == verifiedDir
	if e.Verified {
		p, err := jwsPayload(e.JWS)
		if err != nil || !sameJSON(p, e.Claims) {
			e.Verified = false
			e.Problems = append(e.Problems, "the claims in the archive file differ from the signed payload (edited after archiving)")
			if err == nil {
				e.Claims = p // show what was signed, not the edit
			}
		}
	}
	return &e, nil
}

// sameJSON reports whether a and b hold the same JSON value.
func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// List returns every archived receipt, verified and rejected, oldest first
// (by ts, then id). brand, when not empty, keeps only receipts whose brand
// (interface URL) or card URL equals it. Damaged files are skipped and
// reported in the error, alongside the items that could be read.
func (a *Archive) List(brand string) ([]Item, error) {
	var items []Item
	var errs []error
	for _, area := range []string{verifiedDir, rejectedDir} {
		ids, err := a.ids(area)
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			e, err := a.read(area, id)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			it := e.Item()
			if brand != "" && it.Brand != brand && e.Expect.Brand != brand && e.Expect.Card != brand {
				continue
			}
			items = append(items, it)
		}
	}
	sort.Slice(items, func(i, j int) bool {
		if items[i].TS != items[j].TS {
			return items[i].TS < items[j].TS
		}
		return items[i].ID < items[j].ID
	})
	return items, errors.Join(errs...)
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
	var matches []struct{ area, id string }
	seen := map[string]bool{}
	for _, area := range []string{verifiedDir, rejectedDir} {
		ids, err := a.ids(area)
		if err != nil {
			return nil, err
		}
		for _, full := range ids {
			if strings.HasPrefix(full, id) && !seen[full] {
				seen[full] = true
				matches = append(matches, struct{ area, id string }{area, full})
			}
		}
	}
	switch len(matches) {
	case 0:
		return nil, fmt.Errorf("receipts: %s: %w", id, ErrNotFound)
	case 1:
		return a.read(matches[0].area, matches[0].id)
	}
	return nil, fmt.Errorf("%w %q matches %d receipts; give more characters", ErrBadID, id, len(matches))
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
}

// VerifyAll verifies every receipt in the verified area again and returns
// one Check per receipt, sorted by id. Offline (online false) it uses the
// key archived with each receipt; online it fetches the key by kid from the
// receipt's jwks_uri through a.Keys. Receipts are checked in parallel.
// Rejected receipts are not re-checked (List shows them as unverified).
func (a *Archive) VerifyAll(ctx context.Context, online bool) ([]Check, error) {
	ids, err := a.ids(verifiedDir)
	if err != nil {
		return nil, err
	}
	return a.verifyIDs(ctx, ids, online), nil
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

func (a *Archive) verifyIDs(ctx context.Context, ids []string, online bool) []Check {
	sort.Strings(ids)
	out := make([]Check, len(ids))
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := ctx.Err(); err != nil {
					out[i] = Check{ID: ids[i], Problems: []string{"not checked: " + err.Error()}}
					continue
				}
				e, err := a.read(verifiedDir, ids[i])
				if err != nil {
					out[i] = Check{ID: ids[i], Problems: []string{err.Error()}}
					continue
				}
				out[i] = a.check(ctx, e, online)
			}
		}()
	}
	for i := range ids {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// check verifies one entry again.
func (a *Archive) check(ctx context.Context, e *Entry, online bool) Check {
	c := Check{ID: e.ID, Problems: []string{}}
	if !e.Verified {
		c.Problems = append([]string{"kept as rejected"}, e.Problems...)
		return c
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
