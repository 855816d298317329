// Package receipts verifies PACT receipts (§5.6) and keeps them in a local
// archive.
//
// A receipt arrives in a reply's metadata as "pact.receipt": {"jws", "claims"}.
// It is verified against the jwks_uri of the Brand's RFC 8414 metadata (the
// keys that sign delegation tokens) and against the grant the message was
// sent under, then archived with the public key that verified it so it can
// be verified again later without network. Receipts that fail are kept
// apart, with their reasons, never as verified.
package receipts

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/pact-cli/pact/delegation"
)

// MetadataKey is the reply metadata member holding a receipt (PACT §5.6).
const MetadataKey = "pact.receipt"

// Receipt is the "pact.receipt" object of a reply (PACT §5.6): the compact
// JWS and the claims shown next to it.
type Receipt struct {
	JWS    string          `json:"jws"`
	Claims json.RawMessage `json:"claims,omitempty"`
}

// FromMetadata extracts the receipt from a message's or task's metadata.
// ok is false when there is none; a malformed one is an error.
func FromMetadata(metadata map[string]any) (r Receipt, ok bool, err error) {
	v, found := metadata[MetadataKey]
	if !found {
		return Receipt{}, false, nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return Receipt{}, true, fmt.Errorf("receipts: %s is not JSON: %w", MetadataKey, err)
	}
	if err := json.Unmarshal(data, &r); err != nil || r.JWS == "" {
		return Receipt{}, true, fmt.Errorf("receipts: %s is not an object with a jws string", MetadataKey)
	}
	return r, true, nil
}

// ID returns the receipt's stable id: the hex SHA-256 of its JWS (64
// characters). ShortID gives the form shown to people.
func (r Receipt) ID() string {
	sum := sha256.Sum256([]byte(r.JWS))
	return hex.EncodeToString(sum[:])
}

// ShortIDLen is the length of the id shown to people.
const ShortIDLen = 12

// ShortID returns the first ShortIDLen characters of id.
func ShortID(id string) string {
	if len(id) > ShortIDLen {
		return id[:ShortIDLen]
	}
	return id
}

// Claims are a receipt's claims (PACT §5.6).
type Claims struct {
	GrantID    string            `json:"grantId"`
	User       string            `json:"user"`
	PA         string            `json:"pa"`
	Brand      string            `json:"brand"`
	ScopesUsed []string          `json:"scopesUsed"`
	Actions    []json.RawMessage `json:"actions"`
	TS         string            `json:"ts"`
}

// Expect is what a receipt must match: the grant the message was sent under
// and where the signing keys are. It is archived with the receipt so that
// VerifyOffline can check it again later.
type Expect struct {
	// PA is this profile's issuer; the receipt's pa must equal it.
	PA string `json:"pa"`
	// Brand is the interface URL the message went to (the receipt's brand).
	Brand string `json:"brand"`
	// GrantID and User are the grant's grant_id and sub.
	GrantID string `json:"grantId"`
	User    string `json:"user"`
	// Scopes are the granted scopes; scopesUsed must be a subset.
	Scopes []string `json:"scopes"`
	// JWKSURI is the jwks_uri of the Brand's RFC 8414 metadata.
	JWKSURI string `json:"jwksUri"`
	// Card is the card URL, kept only for listing by brand.
	Card string `json:"card,omitempty"`
	// BrandName is the card's name, kept only as a label (a bundle's
	// brandName); the receipt's verification does not depend on it.
	BrandName string `json:"brandName,omitempty"`
	// GrantIssuedAt is when the grant was first issued (nil: unknown, a
	// grant stored before pact kept it): a ts before it is a problem.
	GrantIssuedAt *time.Time `json:"grantIssuedAt,omitempty"`
	// Notes say why a receipt means less than it seems though it verifies
	// (a bundle's Brand labels that did not match the Brand whose key
	// signed it); kept with the receipt, listed as its notes.
	Notes []string `json:"notes,omitempty"`
	// Imported is set for a receipt added from a bundle (`pact receipts
	// import`): its user is another User's id, not this profile's.
	Imported bool `json:"imported,omitempty"`
}

// ExpectFromGrant builds the expectation for a message sent under g by the
// personal agent paIssuer.
func ExpectFromGrant(g *delegation.Grant, paIssuer string) Expect {
	e := Expect{
		PA: paIssuer, Brand: g.InterfaceURL, GrantID: g.GrantID, User: g.Subject,
		Scopes: append([]string(nil), g.Scopes...), JWKSURI: g.JWKSURI, Card: g.Brand,
	}
	if !g.IssuedAt.IsZero() {
		t := g.IssuedAt.UTC()
		e.GrantIssuedAt = &t
	}
	return e
}

// Result is the outcome of verifying one receipt. It is archived as is.
type Result struct {
	ID      string
	Receipt Receipt
	// Claims are decoded from the verified JWS payload; nil when the
	// signature was not verified.
	Claims *Claims
	// Key is the public key that verified the signature (nil if none did).
	Key    *jose.JSONWebKey
	Expect Expect
	// Problems lists every failed check; empty means verified.
	Problems   []string
	VerifiedAt time.Time
}

// Verified reports whether every check passed.
func (r *Result) Verified() bool { return r.Key != nil && len(r.Problems) == 0 }

// Err returns nil when verified, else a *delegation.VerifyError listing the
// problems.
func (r *Result) Err() error {
	if r.Verified() {
		return nil
	}
	p := r.Problems
	if len(p) == 0 {
		p = []string{"not verified"}
	}
	return &delegation.VerifyError{What: "receipt " + ShortID(r.ID), Problems: p}
}

// MaxFutureSkew is how far in the future a receipt's ts may be (clock
// skew, as delegation.DefaultSkew); a later ts is a problem (issue 9).
const MaxFutureSkew = delegation.DefaultSkew

// Verify checks a receipt (PACT §5.6): compact JWS signed ES256 or RS256
// (none, HMAC and anything else refused; no crit), key by kid from
// exp.JWKSURI through keys (a *jwks.Cache refetches once on an unknown kid),
// then the signed payload must equal the claims shown (compared as JSON
// values), pa == exp.PA, brand == exp.Brand, grantId == exp.GrantID,
// user == exp.User, scopesUsed ⊆ exp.Scopes, ts an RFC 3339 time no more
// than MaxFutureSkew after the time of verification and, when the grant's
// issue time is known (exp.GrantIssuedAt), no more than MaxFutureSkew
// before it (a receipt cannot record a turn under a grant not yet issued).
//
// The Result is always returned, for archiving. err is nil when verified, a
// *delegation.VerifyError listing every failed check, or, when the key could
// not be fetched (network), that error (the Result then says so too).
func Verify(ctx context.Context, keys delegation.KeySource, rc Receipt, exp Expect) (*Result, error) {
	res := &Result{ID: rc.ID(), Receipt: rc, Expect: exp, VerifiedAt: time.Now().UTC()}
	signed, err := delegation.VerifyJWS(ctx, keys, exp.JWKSURI, rc.JWS, "receipt")
	return finish(res, signed, err)
}

// VerifyOffline is Verify with a known public key instead of a JWKS fetch
// (the key archived with the receipt).
func VerifyOffline(rc Receipt, key *jose.JSONWebKey, exp Expect) (*Result, error) {
	res := &Result{ID: rc.ID(), Receipt: rc, Expect: exp, VerifiedAt: time.Now().UTC()}
	signed, err := delegation.VerifyJWSWithKey(rc.JWS, key, "receipt")
	return finish(res, signed, err)
}

func finish(res *Result, signed *delegation.Signed, err error) (*Result, error) {
	if err != nil {
		var ve *delegation.VerifyError
		if errors.As(err, &ve) {
			res.Problems = ve.Problems
			return res, res.Err()
		}
		res.Problems = []string{"signing key unavailable: " + err.Error()}
		return res, err
	}
	res.Key = signed.Key
	res.Claims, res.Problems = checkPayload(signed.Payload, res.Receipt.Claims, res.Expect, res.VerifiedAt)
	return res, res.Err()
}

// checkPayload decodes the verified payload and checks it against the shown
// claims and exp, returning every problem.
func checkPayload(payload, shown []byte, exp Expect, now time.Time) (*Claims, []string) {
	var problems []string
	var c Claims
	if err := json.Unmarshal(payload, &c); err != nil {
		return nil, []string{"signed payload is not a §5.6 claims object"}
	}
	// Identical bytes are equal JSON values; only differing bytes need the
	// value comparison.
	if len(bytes.TrimSpace(shown)) > 0 && !bytes.Equal(bytes.TrimSpace(shown), []byte("null")) && !bytes.Equal(shown, payload) {
		var a, b any
		if json.Unmarshal(payload, &a) != nil || json.Unmarshal(shown, &b) != nil || !reflect.DeepEqual(a, b) {
			problems = append(problems, "claims shown differ from the signed payload")
		}
	}
	if c.PA != exp.PA {
		problems = append(problems, fmt.Sprintf("pa mismatch: %q, want this profile's issuer %q", c.PA, exp.PA))
	}
	if c.Brand != exp.Brand {
		problems = append(problems, fmt.Sprintf("brand mismatch: %q, want the interface URL %q", c.Brand, exp.Brand))
	}
	if c.GrantID != exp.GrantID {
		problems = append(problems, fmt.Sprintf("grantId mismatch: %q, want %q", c.GrantID, exp.GrantID))
	}
	if c.User != exp.User {
		problems = append(problems, fmt.Sprintf("user mismatch: %q, want %q", c.User, exp.User))
	}
	granted := make(map[string]bool, len(exp.Scopes))
	for _, s := range exp.Scopes {
		granted[s] = true
	}
	for _, s := range c.ScopesUsed {
		if !granted[s] {
			problems = append(problems, fmt.Sprintf("scope %q used but not granted", s))
		}
	}
	if ts, err := time.Parse(time.RFC3339, c.TS); err != nil {
		problems = append(problems, fmt.Sprintf("ts %q is not an RFC 3339 time", c.TS))
	} else if ahead := ts.Sub(now); ahead > MaxFutureSkew {
		problems = append(problems, fmt.Sprintf("ts %s is %s in the future, beyond the allowed clock skew of %s", c.TS, ahead.Round(time.Second), MaxFutureSkew))
	} else if exp.GrantIssuedAt != nil && exp.GrantIssuedAt.Sub(ts) > MaxFutureSkew {
		problems = append(problems, fmt.Sprintf("ts %s is before the grant was issued (%s): it is not a receipt of a turn under this grant", c.TS, exp.GrantIssuedAt.UTC().Format(time.RFC3339)))
	}
	return &c, problems
}
