package postgres

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pact-cli/pact/store"
)

// putReceipt archives one receipt in one statement: the row upserted
// (a verified row is never replaced by a rejected one), and, when it was
// written, its Brand and scope index rows made to match (rows no longer
// listed deleted, new ones added: the two sets never overlap, so one
// statement's snapshot does).
const putReceipt = `WITH up AS (
	INSERT INTO receipts (user_id, id, jws, claims, jwk, jwk_thumbprint, expect, verified, problems, verified_at,
		brand, grant_id, claims_user, scopes_used, actions, ts, ts_ns, card_url, brand_name, notes)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)
	ON CONFLICT (user_id, id) DO UPDATE SET jws = excluded.jws, claims = excluded.claims, jwk = excluded.jwk,
		jwk_thumbprint = excluded.jwk_thumbprint, expect = excluded.expect, verified = excluded.verified,
		problems = excluded.problems, verified_at = excluded.verified_at, brand = excluded.brand,
		grant_id = excluded.grant_id, claims_user = excluded.claims_user, scopes_used = excluded.scopes_used,
		actions = excluded.actions, ts = excluded.ts, ts_ns = excluded.ts_ns,
		card_url = excluded.card_url, brand_name = excluded.brand_name, notes = excluded.notes
	WHERE excluded.verified OR NOT receipts.verified
	RETURNING id
), del_brands AS (
	DELETE FROM receipt_brands WHERE user_id = $1 AND receipt_id IN (SELECT id FROM up) AND brand <> ALL($21::text[])
), del_scopes AS (
	DELETE FROM receipt_scopes WHERE user_id = $1 AND receipt_id IN (SELECT id FROM up) AND scope <> ALL($22::text[])
), add_brands AS (
	INSERT INTO receipt_brands (user_id, brand, receipt_id) SELECT $1, b, up.id FROM up, unnest($21::text[]) b ON CONFLICT DO NOTHING
), add_scopes AS (
	INSERT INTO receipt_scopes (user_id, scope, receipt_id) SELECT $1, s, up.id FROM up, unnest($22::text[]) s ON CONFLICT DO NOTHING
)
SELECT count(*) FROM up`

func jsonOr(b []byte, def string) string {
	if len(b) == 0 {
		return def
	}
	return string(b)
}

func strs(v []string) string {
	if v == nil {
		return "[]"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// queueReceipt queues r's putReceipt.
func queueReceipt(b *pgx.Batch, user string, r store.Receipt) {
	var tsNS any
	if t, err := time.Parse(time.RFC3339, r.TS); err == nil {
		tsNS = t.UnixNano()
	}
	brands := []string{}
	seen := map[string]bool{}
	for _, x := range r.Brands {
		if x != "" && !seen[x] {
			seen[x] = true
			brands = append(brands, clean(x))
		}
	}
	scopes := []string{}
	for _, x := range r.Scopes {
		scopes = append(scopes, clean(x))
	}
	b.Queue(putReceipt, cleanArgs([]any{user, r.ID, r.JWS, string(r.Claims), string(r.JWK), r.JWKThumbprint, jsonOr(r.Expect, "{}"),
		r.Verified, strs(r.Problems), fmtTime(r.VerifiedAt), r.Brand, r.GrantID, r.User, jsonOr(r.ScopesUsed, "[]"),
		jsonOr(r.Actions, "[]"), r.TS, tsNS, r.CardURL, r.BrandName, strs(r.Notes), brands, scopes})...)
}

func (db *userDB) PutReceipt(ctx context.Context, r store.Receipt) error {
	return db.PutReceipts(ctx, []store.Receipt{r})
}

// PutReceipts archives several receipts in one transaction, sent in
// batches of statements.
func (db *userDB) PutReceipts(ctx context.Context, rs []store.Receipt) error {
	return db.tx(ctx, func(tx pgx.Tx) error {
		for len(rs) > 0 {
			n := min(len(rs), 500)
			b := &pgx.Batch{}
			for _, r := range rs[:n] {
				queueReceipt(b, db.user, r)
			}
			if err := tx.SendBatch(ctx, b).Close(); err != nil {
				return err
			}
			rs = rs[n:]
		}
		return nil
	})
}

// PutTurnReceipt archives r as the receipt of turn and counts the other
// turns it came with. The upsert locks the receipt's row (even when a
// verified row is kept), so that two processes archiving it for two turns
// at once count each other.
func (db *userDB) PutTurnReceipt(ctx context.Context, r store.Receipt, turn string) (others int, err error) {
	err = db.tx(ctx, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		queueReceipt(b, db.user, r)
		b.Queue(`SELECT 1 FROM receipts WHERE user_id = $1 AND id = $2 FOR UPDATE`, clean(db.user), clean(r.ID))
		b.Queue(`INSERT INTO receipt_turns (user_id, receipt_id, turn) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, cleanArgs([]any{db.user, r.ID, turn})...)
		b.Queue(`SELECT count(*) FROM receipt_turns WHERE user_id = $1 AND receipt_id = $2 AND turn <> $3`, cleanArgs([]any{db.user, r.ID, turn})...)
		br := tx.SendBatch(ctx, b)
		for range 3 {
			if _, err := br.Exec(); err != nil {
				br.Close()
				return err
			}
		}
		if err := br.QueryRow().Scan(&others); err != nil {
			br.Close()
			return err
		}
		if err := br.Close(); err != nil {
			return err
		}
		if others > 0 {
			_, err := tx.Exec(ctx, `UPDATE receipts SET replays = (SELECT count(*) - 1 FROM receipt_turns WHERE user_id = $1 AND receipt_id = $2)
				WHERE user_id = $1 AND id = $2`, cleanArgs([]any{db.user, r.ID})...)
			return err
		}
		return nil
	})
	return others, err
}

// EachReceipt calls fn for every receipt the filter selects, oldest first
// (see store.Receipts); the listing columns come from the covering index.
func (db *userDB) EachReceipt(ctx context.Context, f store.ReceiptFilter, fn func(store.Receipt) error) error {
	cols := `r.id, r.verified, r.problems, r.brand, r.grant_id, r.claims_user, r.scopes_used, r.actions, r.ts,
		r.card_url, r.brand_name, r.replays, r.notes`
	if f.Full {
		cols += `, r.jws, r.claims, r.jwk, r.jwk_thumbprint, r.expect, r.verified_at`
	}
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	where := []string{`r.user_id = ` + arg(db.user)}
	from := `receipts r`
	switch {
	case f.Brand != "" && len(f.Brands) == 0 && f.BrandHost == "":
		// Driven by the brand index: only that Brand's rows are read.
		from = `receipt_brands b JOIN receipts r ON r.user_id = b.user_id AND r.id = b.receipt_id`
		where = append(where, `b.user_id = `+arg(db.user), `b.brand = `+arg(f.Brand))
	case f.Brand != "" || len(f.Brands) > 0 || f.BrandHost != "":
		var or []string
		for _, b := range append([]string{f.Brand}, f.Brands...) {
			if b != "" {
				or = append(or, `brand = `+arg(b))
			}
		}
		if h := f.BrandHost; h != "" {
			// The index answers ranges: every URL on that host.
			for _, scheme := range []string{"http://", "https://"} {
				or = append(or, `brand = `+arg(scheme+h), `(brand >= `+arg(scheme+h+"/")+` AND brand < `+arg(scheme+h+"0")+`)`)
			}
		}
		where = append(where, `r.id IN (SELECT receipt_id FROM receipt_brands WHERE user_id = `+arg(db.user)+` AND (`+strings.Join(or, ` OR `)+`))`)
	}
	if f.Scope != "" {
		where = append(where, `r.id IN (SELECT receipt_id FROM receipt_scopes WHERE user_id = `+arg(db.user)+` AND scope = `+arg(f.Scope)+`)`)
	}
	if !f.Since.IsZero() {
		where = append(where, `r.ts_ns >= `+arg(f.Since.UnixNano()))
	}
	if !f.Until.IsZero() {
		where = append(where, `r.ts_ns <= `+arg(f.Until.UnixNano()))
	}
	if f.Verified != nil {
		where = append(where, `r.verified = `+arg(*f.Verified))
	}
	cond := ` WHERE ` + strings.Join(where, ` AND `)
	// Receipts whose ts does not parse (ts_ns NULL) come first, as in SQLite.
	q := `SELECT ` + cols + ` FROM ` + from + cond + ` ORDER BY r.ts_ns NULLS FIRST, r.id`
	if f.Limit > 0 {
		q = `SELECT ` + cols + ` FROM (SELECT r.* FROM ` + from + cond + ` ORDER BY r.ts_ns DESC NULLS LAST, r.id DESC LIMIT ` + arg(f.Limit) +
			`) r ORDER BY r.ts_ns NULLS FIRST, r.id`
	}
	rows, err := db.query(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	var memo columnMemo
	for rows.Next() {
		var r store.Receipt
		var problems, notes, scopes, actions, verifiedAt, claims, jwk, expect string
		dest := []any{&r.ID, &r.Verified, &problems, &r.Brand, &r.GrantID, &r.User, &scopes, &actions, &r.TS, &r.CardURL, &r.BrandName, &r.Replays, &notes}
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
			r.Claims, r.JWK, r.Expect = []byte(claims), []byte(jwk), []byte(expect)
			r.VerifiedAt = parseTime(verifiedAt)
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return db.wrap(err)
	}
	return nil
}

// ReceiptsByPrefix returns the full rows whose id starts with prefix, at
// most max.
func (db *userDB) ReceiptsByPrefix(ctx context.Context, prefix string, max int) ([]store.Receipt, error) {
	rows, err := db.query(ctx, `SELECT id, jws, claims, jwk, jwk_thumbprint, expect, verified, problems, verified_at,
		brand, grant_id, claims_user, scopes_used, actions, ts, card_url, brand_name, replays, notes FROM receipts
		WHERE user_id = $1 AND id >= $2 AND id < $3 ORDER BY id LIMIT $4`, db.user, prefix, prefix+"\x7f", max)
	return collect(rows, err, func(rows pgx.Rows) (store.Receipt, error) {
		var r store.Receipt
		var problems, notes, verifiedAt, claims, jwk, expect, scopes, actions string
		err := rows.Scan(&r.ID, &r.JWS, &claims, &jwk, &r.JWKThumbprint, &expect, &r.Verified, &problems, &verifiedAt,
			&r.Brand, &r.GrantID, &r.User, &scopes, &actions, &r.TS, &r.CardURL, &r.BrandName, &r.Replays, &notes)
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
	})
}

func (db *userDB) ReceiptCount(ctx context.Context) (int, error) {
	var n int
	_, err := db.queryRow(ctx, `SELECT count(*) FROM receipts WHERE user_id = $1`, []any{db.user}, &n)
	return n, err
}

// columnMemo shares, within one walk over the archive, the values that
// repeat from row to row (as the SQLite store's does).
type columnMemo struct {
	raw  map[string][]byte
	strs map[string][]string
}

const memoMax = 512

func (m *columnMemo) bytes(s string) []byte {
	if v, ok := m.raw[s]; ok {
		return v
	}
	v := []byte(s)
	if m.raw == nil {
		m.raw = map[string][]byte{}
	}
	if len(m.raw) < memoMax {
		m.raw[s] = v
	}
	return v
}

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
