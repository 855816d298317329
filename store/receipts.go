package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"
	"time"
)

// Receipt is one row of the receipt archive (PACT §5.6). The receipts
// package fills it; the store keeps it as given. Claims, JWK, Expect,
// ScopesUsed and Actions are JSON.
type Receipt struct {
	ID            string // hex SHA-256 of JWS
	JWS           string // the compact JWS as received
	Claims        []byte // the signed payload (verified) or the claims shown (rejected)
	JWK           []byte // the public JWK that verified it (verified only)
	JWKThumbprint string // its RFC 7638 SHA-256 thumbprint, base64url
	Expect        []byte // what it was checked against (receipts.Expect)
	Verified      bool
	Problems      []string // why it was rejected
	VerifiedAt    time.Time

	// Listing columns, taken from the claims by the receipts package.
	Brand      string
	GrantID    string
	User       string
	ScopesUsed []byte // JSON array of strings
	Actions    []byte // JSON array
	TS         string // the claims' ts as signed (RFC 3339)
	// Brands are the values `receipts list --brand` finds it under (the
	// claims' brand, the expected brand, the card URL); Scopes the values
	// --scope finds it under.
	Brands []string
	Scopes []string
	// CardURL and BrandName are the labels a listing names the Brand by
	// (Expect's card and brandName).
	CardURL, BrandName string
	// Notes say why the receipt means less than it seems though it
	// verified (a bundle's labels not matching the key's Brand); kept as
	// given.
	Notes []string
	// Replays (read only) counts the turns past the first that this
	// receipt came with (PutTurnReceipt).
	Replays int
	// Restored (read only) is set on a receipt `pact restore` put back
	// (SQLite only: Restore): whatever the backup said of it, it is kept
	// with Verified false and no problems until pact checks it again, and
	// archiving it again (Put, a verdict pact made) clears it.
	Restored bool
}

// PutReceipt archives r: added, or replacing the row with the same id,
// except that a verified row is never replaced by a rejected one (a
// receipt verified once stays verified; `receipts verify` re-checks it).
// A restored row (Receipt.Restored) is replaced by either: r is a verdict
// pact made.
func (db *userDB) PutReceipt(ctx context.Context, r Receipt) error {
	return db.PutReceipts(ctx, []Receipt{r})
}

// PutReceipts archives several receipts in one transaction (PutReceipt's
// rules for each), its statements prepared once.
func (db *userDB) PutReceipts(ctx context.Context, rs []Receipt) error {
	return db.tx(ctx, func(tx *sql.Tx) error {
		if len(rs) > 100 {
			// A bulk import touches index pages all over the archive: a
			// larger page cache (32 MiB, this connection) saves rereading them.
			if _, err := tx.ExecContext(ctx, "PRAGMA cache_size = -32768"); err != nil {
				return err
			}
		}
		w, err := newReceiptWriter(ctx, tx, db.user)
		if err != nil {
			return err
		}
		defer w.close()
		for _, r := range rs {
			if err := w.put(ctx, r); err != nil {
				return err
			}
		}
		return nil
	})
}

func jsonOr(b []byte, def string) string {
	if len(b) == 0 {
		return def
	}
	return string(b)
}

// receiptWriter holds the statements that archive a User's receipts in
// one transaction.
type receiptWriter struct {
	user                                             string
	upsert, delBrands, delScopes, addBrand, addScope *sql.Stmt
}

func newReceiptWriter(ctx context.Context, tx *sql.Tx, user string) (*receiptWriter, error) {
	w := &receiptWriter{user: user}
	for _, p := range []struct {
		st **sql.Stmt
		q  string
	}{
		{&w.upsert, `INSERT INTO receipts (user_id, id, jws, claims, jwk, jwk_thumbprint, expect, verified, problems, verified_at,
			brand, grant_id, user, scopes_used, actions, ts, ts_ns, card_url, brand_name, notes)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (user_id, id) DO UPDATE SET jws = excluded.jws, claims = excluded.claims, jwk = excluded.jwk,
			jwk_thumbprint = excluded.jwk_thumbprint, expect = excluded.expect, verified = excluded.verified,
			problems = excluded.problems, verified_at = excluded.verified_at, brand = excluded.brand,
			grant_id = excluded.grant_id, user = excluded.user, scopes_used = excluded.scopes_used,
			actions = excluded.actions, ts = excluded.ts, ts_ns = excluded.ts_ns,
			card_url = excluded.card_url, brand_name = excluded.brand_name, notes = excluded.notes, restored = 0
		WHERE excluded.verified OR NOT receipts.verified`},
		{&w.delBrands, `DELETE FROM receipt_brands WHERE user_id = ? AND receipt_id = ?`},
		{&w.delScopes, `DELETE FROM receipt_scopes WHERE user_id = ? AND receipt_id = ?`},
		{&w.addBrand, `INSERT OR IGNORE INTO receipt_brands (user_id, brand, receipt_id) VALUES (?, ?, ?)`},
		{&w.addScope, `INSERT OR IGNORE INTO receipt_scopes (user_id, scope, receipt_id) VALUES (?, ?, ?)`},
	} {
		st, err := tx.PrepareContext(ctx, p.q)
		if err != nil {
			w.close()
			return nil, err
		}
		*p.st = st
	}
	return w, nil
}

func (w *receiptWriter) close() {
	for _, st := range []*sql.Stmt{w.upsert, w.delBrands, w.delScopes, w.addBrand, w.addScope} {
		if st != nil {
			st.Close()
		}
	}
}

func (w *receiptWriter) put(ctx context.Context, r Receipt) error {
	problems, _ := json.Marshal(r.Problems)
	if r.Problems == nil {
		problems = []byte("[]")
	}
	notes, _ := json.Marshal(r.Notes)
	if r.Notes == nil {
		notes = []byte("[]")
	}
	var tsNS any
	if t, err := time.Parse(time.RFC3339, r.TS); err == nil {
		tsNS = t.UnixNano()
	}
	res, err := w.upsert.ExecContext(ctx,
		w.user, r.ID, r.JWS, string(r.Claims), string(r.JWK), r.JWKThumbprint, jsonOr(r.Expect, "{}"), r.Verified, string(problems),
		fmtTime(r.VerifiedAt), r.Brand, r.GrantID, r.User, jsonOr(r.ScopesUsed, "[]"), jsonOr(r.Actions, "[]"), r.TS, tsNS,
		r.CardURL, r.BrandName, string(notes))
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil // a verified row was kept
	}
	for _, st := range []*sql.Stmt{w.delBrands, w.delScopes} {
		if _, err := st.ExecContext(ctx, w.user, r.ID); err != nil {
			return err
		}
	}
	seen := map[string]bool{}
	for _, b := range r.Brands {
		if b == "" || seen[b] {
			continue
		}
		seen[b] = true
		if _, err := w.addBrand.ExecContext(ctx, w.user, b, r.ID); err != nil {
			return err
		}
	}
	for _, sc := range r.Scopes {
		if _, err := w.addScope.ExecContext(ctx, w.user, sc, r.ID); err != nil {
			return err
		}
	}
	return nil
}

// ReceiptFilter selects receipts. Zero fields select everything.
type ReceiptFilter struct {
	Brand string // listed under this brand (see Receipt.Brands)
	// Brands and BrandHost widen Brand: a receipt listed under any of
	// Brands, or under a URL whose host (host:port) is BrandHost, is
	// selected too.
	Brands    []string
	BrandHost string
	Scope     string    // scopesUsed contains it
	Since     time.Time // ts at or after (receipts whose ts does not parse are left out when set)
	Until     time.Time // ts at or before
	// Limit keeps the Limit most recent receipts (still given oldest first).
	Limit int
	// Verified, when not nil, keeps only verified (true) or rejected (false).
	Verified *bool
	// Full fills JWS, Claims, JWK, JWKThumbprint, Expect and VerifiedAt;
	// without it only the listing columns are read (faster).
	Full bool
}

// EachReceipt calls fn for every receipt the filter selects, oldest first
// (by ts, then id; receipts whose ts does not parse come first), reading
// the rows one at a time. A row that cannot be scanned is given to fn with
// a problem rather than stopping the walk. fn's error stops it and is
// returned.
func (db *userDB) EachReceipt(ctx context.Context, f ReceiptFilter, fn func(Receipt) error) error {
	c, err := db.conn(ctx)
	if err != nil {
		return err
	}
	// Every listing column is in the covering index receipts_listing.
	cols := `r.id, r.verified, r.problems, r.brand, r.grant_id, r.user, r.scopes_used, r.actions, r.ts,
		r.card_url, r.brand_name, r.replays, r.notes, r.restored`
	if f.Full {
		cols += `, r.jws, r.claims, r.jwk, r.jwk_thumbprint, r.expect, r.verified_at`
	}
	where := []string{`r.user_id = ?`}
	args := []any{db.user}
	from := `receipts r`
	switch {
	case f.Brand != "" && len(f.Brands) == 0 && f.BrandHost == "":
		// Driven by the brand index: only that Brand's rows are read.
		from = `receipt_brands b CROSS JOIN receipts r ON r.user_id = b.user_id AND r.id = b.receipt_id`
		where = append(where, `b.user_id = ?`, `b.brand = ?`)
		args = append(args, db.user, f.Brand)
	case f.Brand != "" || len(f.Brands) > 0 || f.BrandHost != "":
		var or []string
		args = append(args, db.user) // the subquery's user_id
		for _, b := range append([]string{f.Brand}, f.Brands...) {
			if b != "" {
				or = append(or, `brand = ?`)
				args = append(args, b)
			}
		}
		if h := f.BrandHost; h != "" {
			// The index answers ranges: every URL on that host.
			for _, scheme := range []string{"http://", "https://"} {
				or = append(or, `brand = ?`, `(brand >= ? AND brand < ?)`)
				args = append(args, scheme+h, scheme+h+"/", scheme+h+"0")
			}
		}
		where = append(where, `r.id IN (SELECT receipt_id FROM receipt_brands WHERE user_id = ? AND (`+strings.Join(or, ` OR `)+`))`)
	}
	if f.Scope != "" {
		where = append(where, `r.id IN (SELECT receipt_id FROM receipt_scopes WHERE user_id = ? AND scope = ?)`)
		args = append(args, db.user, f.Scope)
	}
	if !f.Since.IsZero() {
		where = append(where, `r.ts_ns >= ?`)
		args = append(args, f.Since.UnixNano())
	}
	if !f.Until.IsZero() {
		where = append(where, `r.ts_ns <= ?`)
		args = append(args, f.Until.UnixNano())
	}
	if f.Verified != nil {
		where = append(where, `r.verified = ?`)
		args = append(args, *f.Verified)
	}
	cond := ""
	if len(where) > 0 {
		cond = ` WHERE ` + strings.Join(where, ` AND `)
	}
	q := `SELECT ` + cols + ` FROM ` + from + cond + ` ORDER BY r.ts_ns, r.id`
	if f.Limit > 0 {
		q = `SELECT ` + cols + ` FROM (SELECT r.* FROM ` + from + cond + ` ORDER BY r.ts_ns DESC, r.id DESC LIMIT ?) r ORDER BY r.ts_ns, r.id`
		args = append(args, f.Limit)
	}
	rows, err := c.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	// Most rows share their scopes, actions and problems with others: one
	// copy (and one decode) of each, not one a row.
	var memo columnMemo
	for rows.Next() {
		var r Receipt
		var problems, notes, verifiedAt string
		var scopes, actions, claims, jwk, expect sql.RawBytes
		dest := []any{&r.ID, &r.Verified, &problems, &r.Brand, &r.GrantID, &r.User, &scopes, &actions, &r.TS, &r.CardURL, &r.BrandName, &r.Replays, &notes, &r.Restored}
		if f.Full {
			dest = append(dest, &r.JWS, &claims, &jwk, &r.JWKThumbprint, &expect, &verifiedAt)
		}
		if err := rows.Scan(dest...); err != nil {
			r.Problems = append(r.Problems, "damaged archive row: "+err.Error())
		} else if problems == "[]" {
			// the common case: nothing to decode
		} else if ps, ok := memo.strings(problems); ok {
			r.Problems = ps
		} else {
			r.Problems = append(r.Problems, "damaged archive row: its problems are not a JSON array of strings")
		}
		if notes != "[]" && notes != "" {
			r.Notes, _ = memo.strings(notes)
		}
		r.ScopesUsed = memo.bytes(scopes)
		r.Actions = memo.bytes(actions)
		if f.Full {
			r.Claims = append([]byte(nil), claims...)
			r.JWK = append([]byte(nil), jwk...)
			r.Expect = append([]byte(nil), expect...)
			r.VerifiedAt = parseTime(verifiedAt)
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	return rows.Err()
}

// ReceiptsByPrefix returns the full rows whose id starts with prefix
// (lower-case hex), at most max.
func (db *userDB) ReceiptsByPrefix(ctx context.Context, prefix string, max int) ([]Receipt, error) {
	c, err := db.conn(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := c.QueryContext(ctx, `SELECT id FROM receipts WHERE user_id = ? AND id >= ? AND id < ? ORDER BY id LIMIT ?`, db.user, prefix, prefix+"\x7f", max)
	if err != nil {
		return nil, err
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]Receipt, 0, len(ids))
	for _, id := range ids {
		r, err := db.receipt(ctx, c, id)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func (db *userDB) receipt(ctx context.Context, c *sql.DB, id string) (Receipt, error) {
	var r Receipt
	var problems, notes, verifiedAt, claims, jwk, expect, scopes, actions string
	err := c.QueryRowContext(ctx, `SELECT id, jws, claims, jwk, jwk_thumbprint, expect, verified, problems, verified_at,
		brand, grant_id, user, scopes_used, actions, ts, card_url, brand_name, replays, notes, restored FROM receipts WHERE user_id = ? AND id = ?`, db.user, id).Scan(
		&r.ID, &r.JWS, &claims, &jwk, &r.JWKThumbprint, &expect, &r.Verified, &problems, &verifiedAt,
		&r.Brand, &r.GrantID, &r.User, &scopes, &actions, &r.TS, &r.CardURL, &r.BrandName, &r.Replays, &notes, &r.Restored)
	if err != nil {
		return r, err
	}
	r.Claims, r.JWK, r.Expect, r.ScopesUsed, r.Actions = []byte(claims), []byte(jwk), []byte(expect), []byte(scopes), []byte(actions)
	r.VerifiedAt = parseTime(verifiedAt)
	if json.Unmarshal([]byte(problems), &r.Problems) != nil {
		r.Problems = append(r.Problems, "damaged archive row: its problems are not a JSON array of strings")
	}
	json.Unmarshal([]byte(notes), &r.Notes)
	return r, nil
}

// PutTurnReceipt archives r (PutReceipt's rules) as the receipt of turn
// (a key naming one turn: the interface URL and the User's messageId,
// which a resend of the same message keeps, PACT §4.3), in one
// transaction. others is how many other turns it had already come with:
// more than 0 means the Brand returned a receipt it had given before
// (replayed), which proves nothing about this turn. The row is kept, with
// its count of replays.
func (db *userDB) PutTurnReceipt(ctx context.Context, r Receipt, turn string) (others int, err error) {
	err = db.tx(ctx, func(tx *sql.Tx) error {
		w, err := newReceiptWriter(ctx, tx, db.user)
		if err != nil {
			return err
		}
		defer w.close()
		if err := w.put(ctx, r); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO receipt_turns (user_id, receipt_id, turn) VALUES (?, ?, ?)`, db.user, r.ID, turn); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM receipt_turns WHERE user_id = ? AND receipt_id = ? AND turn != ?`, db.user, r.ID, turn).Scan(&others); err != nil {
			return err
		}
		if others > 0 {
			_, err = tx.ExecContext(ctx, `UPDATE receipts SET replays = (SELECT count(*) - 1 FROM receipt_turns WHERE user_id = ?2 AND receipt_id = ?1)
				WHERE user_id = ?2 AND id = ?1`, r.ID, db.user)
		}
		return err
	})
	return others, err
}

// ReceiptCount is the number of archived receipts.
func (db *userDB) ReceiptCount(ctx context.Context) (int, error) {
	c, err := db.conn(ctx)
	if err != nil {
		return 0, err
	}
	var n int
	err = c.QueryRowContext(ctx, `SELECT count(*) FROM receipts WHERE user_id = ?`, db.user).Scan(&n)
	return n, err
}

// columnMemo shares, within one walk over the archive, the values that
// repeat from row to row: a copy of a column's bytes, the strings a JSON
// array decodes to. The shared slices are clipped (append copies) and are
// not to be changed in place. At most memoMax values of each kind.
type columnMemo struct {
	raw  map[string][]byte
	strs map[string][]string
}

const memoMax = 512

// bytes returns a copy of b, the same copy for the same bytes.
func (m *columnMemo) bytes(b []byte) []byte {
	if v, ok := m.raw[string(b)]; ok {
		return v
	}
	v := append([]byte(nil), b...)
	if m.raw == nil {
		m.raw = map[string][]byte{}
	}
	if len(m.raw) < memoMax {
		m.raw[string(b)] = v
	}
	return v
}

// strings decodes s, a JSON array of strings; ok is false when it is not one.
func (m *columnMemo) strings(s string) ([]string, bool) {
	if v, ok := m.strs[s]; ok {
		return v, true
	}
	var v []string
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return nil, false
	}
	v = v[:len(v):len(v)]
	if m.strs == nil {
		m.strs = map[string][]string{}
	}
	if len(m.strs) < memoMax {
		m.strs[s] = v
	}
	return v, true
}
