package receipts

import (
	"bufio"
	"bytes"
	"context"
	"crypto"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/pact-cli/pact/delegation"
	"github.com/pact-cli/pact/errs"
	"github.com/pact-cli/pact/jwks"
)

// A receipt bundle is a file a third party can check without pact's state:
// JSON Lines, one receipt a line,
//
//	{"jws": "<compact JWS>", "jwk": {<public JWK that verifies it>}, "jwks_uri"?: "…", "verifiedAt"?: "<RFC 3339>",
//	 "cardUrl"?: "…", "brandName"?: "…"}
//
// (docs/json.md, "receipt bundles"). Anyone can verify a line with a
// standard JOSE library: the JWS signature with the jwk (ES256 or RS256).
// jwks_uri says where the Brand publishes its keys, so a checker can also
// confirm the key is the Brand's; verifiedAt is when pact verified it.
// cardUrl and brandName are labels (the Brand's Agent Card URL and name, as
// the exporting archive knew them), never used to verify anything.

// BundleRecord is one line of a receipt bundle.
type BundleRecord struct {
	JWS        string          `json:"jws"`
	JWK        json.RawMessage `json:"jwk"`
	JWKSURI    string          `json:"jwks_uri,omitempty"`
	VerifiedAt *time.Time      `json:"verifiedAt,omitempty"`
	// CardURL and BrandName name the Brand for people; labels only.
	CardURL   string `json:"cardUrl,omitempty"`
	BrandName string `json:"brandName,omitempty"`
}

// ErrNotVerified is wrapped by BundleRecordFromEntry for a receipt that was
// kept apart as rejected (exit 6 in the CLI, like a failed verification).
var ErrNotVerified = errors.New("not verified")

// BundleRecordFromEntry is the bundle line of an archived receipt. Only a
// verified entry (one that has the key that verified it) can be exported.
func BundleRecordFromEntry(e *Entry) (BundleRecord, error) {
	if !e.Verified || len(e.JWK) == 0 {
		return BundleRecord{}, fmt.Errorf("receipt %s is not verified: it is kept apart and not exported (%w)", ShortID(e.ID), ErrNotVerified)
	}
	r := BundleRecord{JWS: e.JWS, JWK: e.JWK, JWKSURI: e.Expect.JWKSURI, CardURL: e.Expect.Card, BrandName: e.Expect.BrandName}
	if !e.VerifiedAt.IsZero() {
		t := e.VerifiedAt.UTC()
		r.VerifiedAt = &t
	}
	return r, nil
}

// WriteBundleRecord writes rec as one bundle line to w.
func WriteBundleRecord(w io.Writer, rec BundleRecord) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("receipts: encoding a bundle line: %w", err)
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// BundleCheck is the outcome of one bundle line (`pact receipts verify
// --bundle --json` and `pact receipts import --json` results).
type BundleCheck struct {
	// Line is the 1-based line number in the bundle.
	Line int `json:"line"`
	// ID is the receipt id (hex SHA-256 of the JWS); empty when the line
	// holds no JWS.
	ID       string   `json:"id"`
	Verified bool     `json:"verified"`
	Problems []string `json:"problems"`
}

// maxBundleLine caps one bundle line (a receipt and its key).
const maxBundleLine = 1 << 20

// VerifyBundleRecord verifies one bundle line with nothing but its own
// contents (PACT §5.6 as far as a third party can check it): the jwk is a
// valid public key, its kid (when both have one) is the JWS header's kid,
// the compact JWS is signed ES256 or RS256 (no other alg, no crit) and
// verifies with the jwk, and the signed payload is a receipt claims object
// (pa, brand, grantId and user present, ts an RFC 3339 time). The
// expectations of the returned Result are taken from the signed claims
// (there is no grant to compare with), so it can be archived as is.
func VerifyBundleRecord(rec BundleRecord) (*Result, error) {
	rc := Receipt{JWS: rec.JWS}
	res := &Result{ID: rc.ID(), Receipt: rc, VerifiedAt: time.Now().UTC()}
	fail := func(p ...string) (*Result, error) {
		res.Problems = p
		return res, res.Err()
	}
	if rec.JWS == "" {
		return fail("no jws")
	}
	if len(rec.JWK) == 0 {
		return fail("no jwk")
	}
	var key jose.JSONWebKey
	if err := json.Unmarshal(rec.JWK, &key); err != nil || !key.Valid() {
		return fail("jwk is not a valid JWK")
	}
	if !key.IsPublic() {
		return fail("jwk is not a public key")
	}
	h, problems := delegation.ParseHeader(rec.JWS)
	if len(problems) > 0 {
		return fail(problems...)
	}
	if h.Kid != "" && key.KeyID != "" && h.Kid != key.KeyID {
		return fail(fmt.Sprintf("jwk kid %q is not the JWS kid %q", key.KeyID, h.Kid))
	}
	payload, err := jwsPayload(rec.JWS)
	if err != nil {
		return fail("not a compact JWS")
	}
	var c Claims
	if err := json.Unmarshal(payload, &c); err != nil {
		return fail("payload is not a §5.6 claims object")
	}
	res.Expect = Expect{PA: c.PA, Brand: c.Brand, GrantID: c.GrantID, User: c.User, Scopes: c.ScopesUsed, JWKSURI: rec.JWKSURI}
	out, err := VerifyOffline(rc, &key, res.Expect)
	// Labels only, after the check: the line's cardUrl and brandName name
	// the Brand in listings and verify nothing.
	out.Expect.Card, out.Expect.BrandName = labelURL(rec.CardURL), rec.BrandName
	out.VerifiedAt = res.VerifiedAt
	for name, v := range map[string]string{"pa": c.PA, "brand": c.Brand, "grantId": c.GrantID, "user": c.User} {
		if v == "" {
			out.Problems = append(out.Problems, "claims have no "+name)
		}
	}
	if out.Key != nil && len(out.Problems) > 0 && err == nil {
		err = out.Err()
	}
	return out, err
}

// ReadBundle reads a bundle from r and calls fn for every non-blank line
// with its 1-based number and the decoded record (err set when the line is
// not a bundle record). fn's error stops the reading and is returned; so
// is a read error or a line longer than 1 MiB.
func ReadBundle(r io.Reader, fn func(line int, rec BundleRecord, err error) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxBundleLine)
	n := 0
	for sc.Scan() {
		n++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var rec BundleRecord
		err := json.Unmarshal(b, &rec)
		if err != nil {
			err = errors.New("not a JSON object with jws and jwk")
		}
		if ferr := fn(n, rec, err); ferr != nil {
			return ferr
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("receipts: reading the bundle after line %d: %w", n, err)
	}
	return nil
}

// VerifyBundle verifies every line of the bundle in r, in parallel, and
// calls each (in line order, from the caller's goroutine) with the check
// and, when verified, the Result to archive. each's error stops the work
// and is returned, as is a read error.
func VerifyBundle(r io.Reader, each func(BundleCheck, *Result) error) error {
	type job struct {
		line int
		rec  BundleRecord
		err  error
		res  *Result
		done chan struct{}
	}
	workers := runtime.GOMAXPROCS(0)
	jobs := make(chan *job, 4*workers)
	order := make(chan *job, 4*workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				if j.err == nil {
					j.res, _ = VerifyBundleRecord(j.rec)
				}
				close(j.done)
			}
		}()
	}
	stop := make(chan struct{})
	readErr := make(chan error, 1)
	go func() {
		defer close(order)
		defer close(jobs)
		readErr <- ReadBundle(r, func(line int, rec BundleRecord, err error) error {
			j := &job{line: line, rec: rec, err: err, done: make(chan struct{})}
			select {
			case order <- j:
			case <-stop:
				return errStopped
			}
			jobs <- j
			return nil
		})
	}()
	var cbErr error
	for j := range order {
		<-j.done
		if cbErr != nil {
			continue
		}
		c := BundleCheck{Line: j.line, Problems: []string{}}
		switch {
		case j.err != nil:
			c.Problems = []string{j.err.Error()}
		default:
			c.ID = j.res.ID
			c.Verified = j.res.Verified()
			if !c.Verified {
				c.Problems = j.res.Problems
				if len(c.Problems) == 0 {
					c.Problems = []string{"not verified"}
				}
			}
		}
		var res *Result
		if c.Verified {
			res = j.res
		}
		if cbErr = each(c, res); cbErr != nil {
			close(stop)
		}
	}
	wg.Wait()
	if err := <-readErr; err != nil && !errors.Is(err, errStopped) {
		return err
	}
	return cbErr
}

var errStopped = errors.New("stopped")

// labelURL is a bundle line's cardUrl when it is an http(s) URL, else "".
func labelURL(s string) string {
	if u, err := url.Parse(s); err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" {
		return s
	}
	return ""
}

// VerifiedEntry reads the verified receipt with this full id (64 hex
// characters, as List gives it) by its key, for export. ErrNotFound when
// no verified receipt has that id.
func (a *Archive) VerifiedEntry(id string) (*Entry, error) {
	if len(id) != 64 || strings.Trim(id, "0123456789abcdef") != "" {
		return nil, fmt.Errorf("%w %q is not a full receipt id", ErrBadID, id)
	}
	rs, err := a.DB.ReceiptsByPrefix(context.Background(), id, 1)
	if err != nil {
		return nil, err
	}
	if len(rs) == 0 || rs[0].ID != id || !rs[0].Verified {
		return nil, errs.New(fmt.Sprintf("no receipt %q in the archive", ShortID(id)), ErrNotFound)
	}
	return entry(rs[0]), nil
}

// ErrKeysUnavailable is wrapped by CheckPublished when the Brand's published
// keys could not be fetched (or where they are could not be found): the
// receipt was not checked, which is not a forgery either.
var ErrKeysUnavailable = errors.New("the Brand's keys could not be fetched")

// CheckPublished checks that the key that verified res (a bundle line,
// VerifyBundleRecord) is one the Brand publishes: the key with the JWS
// header's kid at jwksURI (the jwks_uri of the Brand's RFC 8414 metadata,
// found by the caller, never taken from the bundle line) must have the same
// RFC 7638 thumbprint, and when the line's key has a kid it must be that
// kid. It returns the problems that refuse the receipt (empty when the key
// is published), or an error wrapping ErrKeysUnavailable when the keys
// could not be fetched. On success res.Expect.JWKSURI is jwksURI.
func CheckPublished(ctx context.Context, keys delegation.KeySource, res *Result, jwksURI string) ([]string, error) {
	if res.Key == nil {
		return []string{"not verified"}, nil
	}
	if keys == nil || jwksURI == "" {
		return nil, fmt.Errorf("%w: no jwks_uri for %s", ErrKeysUnavailable, res.Expect.Brand)
	}
	h, problems := delegation.ParseHeader(res.Receipt.JWS)
	if len(problems) > 0 {
		return problems, nil
	}
	pub, err := keys.Key(ctx, jwksURI, h.Kid)
	if err != nil {
		if errors.Is(err, jwks.ErrUnknownKID) {
			return []string{fmt.Sprintf("the key that signed it (kid %q) is not one the Brand publishes at %s", h.Kid, jwksURI)}, nil
		}
		return nil, fmt.Errorf("%w from %s: %v", ErrKeysUnavailable, jwksURI, err)
	}
	want, err1 := pub.Thumbprint(crypto.SHA256)
	got, err2 := res.Key.Thumbprint(crypto.SHA256)
	if err1 != nil || err2 != nil || !bytes.Equal(want, got) {
		return []string{fmt.Sprintf("the key on the line is not the key the Brand publishes at %s under kid %q", jwksURI, h.Kid)}, nil
	}
	if res.Key.KeyID != "" && pub.KeyID != "" && res.Key.KeyID != pub.KeyID {
		return []string{fmt.Sprintf("the key on the line has kid %q, the Brand publishes it as %q", res.Key.KeyID, pub.KeyID)}, nil
	}
	res.Expect.JWKSURI = jwksURI
	return nil, nil
}

// Payload is the payload of a compact JWS, not verified.
func Payload(compact string) ([]byte, error) { return jwsPayload(compact) }
