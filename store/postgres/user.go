package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pact-cli/pact/store"
)

// userDB is one User's Store in the database: every query carries user.
type userDB struct {
	*DB
	user string
}

var _ store.Store = (*userDB)(nil)

// User is the id of the User this Store reads and writes.
func (db *userDB) User() string { return db.user }

// query runs a query of the User's rows.
func (db *userDB) query(ctx context.Context, q string, args ...any) (pgx.Rows, error) {
	pool, err := db.conn(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := pool.Query(ctx, q, cleanArgs(args)...)
	if err != nil {
		return nil, db.wrap(err)
	}
	return rows, nil
}

// queryRow scans the one row of a query; ok is false when there is none.
func (db *userDB) queryRow(ctx context.Context, q string, args []any, dest ...any) (ok bool, err error) {
	pool, err := db.conn(ctx)
	if err != nil {
		return false, err
	}
	err = pool.QueryRow(ctx, q, cleanArgs(args)...).Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, db.wrap(err)
	}
	return true, nil
}

// tx runs fn in one transaction and commits it, or rolls it back when fn
// or the commit fails.
func (db *userDB) tx(ctx context.Context, fn func(pgx.Tx) error) error {
	pool, err := db.conn(ctx)
	if err != nil {
		return err
	}
	return db.wrapWrite(pgx.BeginFunc(ctx, pool, fn))
}

// exec runs one statement in its own transaction.
func (db *userDB) exec(ctx context.Context, q string, args ...any) error {
	pool, err := db.conn(ctx)
	if err != nil {
		return err
	}
	_, err = pool.Exec(ctx, q, cleanArgs(args)...)
	return db.wrapWrite(err)
}

// collect reads every row of rows with scan.
func collect[T any](rows pgx.Rows, err error, scan func(pgx.Rows) (T, error)) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

func fmtTime(t time.Time) string { return t.Format(time.RFC3339Nano) }

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

// Conversations.

const convColumns = `c.brand, c.brand_name, c.interface_url, c.context_id, c.last_message_at, c.state,
	EXISTS (SELECT 1 FROM current_conversations cc WHERE cc.user_id = c.user_id AND cc.brand = c.brand AND cc.conversation_id = c.id)`

func convDest(c *store.Conversation, at *string) []any {
	return []any{&c.Brand, &c.BrandName, &c.InterfaceURL, &c.ContextID, at, &c.State, &c.Current}
}

func scanConversation(rows pgx.Rows) (store.Conversation, error) {
	var c store.Conversation
	var at string
	err := rows.Scan(convDest(&c, &at)...)
	c.LastMessageAt = parseTime(at)
	return c, err
}

func (db *userDB) findConversation(ctx context.Context, q string, args ...any) (store.Conversation, bool, error) {
	var c store.Conversation
	var at string
	ok, err := db.queryRow(ctx, q, args, convDest(&c, &at)...)
	c.LastMessageAt = parseTime(at)
	return c, ok, err
}

func (db *userDB) CurrentConversation(ctx context.Context, cardURL string) (store.Conversation, bool, error) {
	return db.findConversation(ctx, `SELECT `+convColumns+` FROM current_conversations cur
		JOIN conversations c ON c.id = cur.conversation_id WHERE cur.user_id = $1 AND cur.brand = $2`, db.user, cardURL)
}

func (db *userDB) FindConversation(ctx context.Context, interfaceURL, contextID string) (store.Conversation, bool, error) {
	return db.findConversation(ctx, `SELECT `+convColumns+` FROM conversations c
		WHERE c.user_id = $1 AND c.interface_url = $2 AND c.context_id = $3`, db.user, interfaceURL, contextID)
}

func (db *userDB) FindContext(ctx context.Context, contextID string) ([]store.Conversation, error) {
	rows, err := db.query(ctx, `SELECT `+convColumns+` FROM conversations c
		WHERE c.user_id = $1 AND starts_with(c.context_id, $2)
		ORDER BY c.context_id = $2 DESC, c.last_message_ns DESC`, db.user, contextID)
	return collect(rows, err, scanConversation)
}

func (db *userDB) Conversations(ctx context.Context) ([]store.Conversation, error) {
	rows, err := db.query(ctx, `SELECT `+convColumns+` FROM conversations c WHERE c.user_id = $1
		ORDER BY c.last_message_ns DESC, c.context_id`, db.user)
	return collect(rows, err, func(rows pgx.Rows) (store.Conversation, error) {
		c, err := scanConversation(rows)
		c.Current = c.Current && c.State == "open"
		return c, err
	})
}

func scanTurn(rows pgx.Rows, extra ...any) (store.Turn, error) {
	var t store.Turn
	var at string
	err := rows.Scan(append([]any{&t.MessageID, &t.Role, &t.Text, &at, &t.TaskState, &t.ReceiptID, &t.ReceiptVerified, &t.Answers}, extra...)...)
	t.At = parseTime(at)
	return t, err
}

func (db *userDB) Turns(ctx context.Context, interfaceURL, contextID string) ([]store.Turn, error) {
	var ids []int64
	rows, err := db.query(ctx, `SELECT t.message_id, t.role, t.text, t.at, t.task_state, t.receipt_id, t.receipt_verified, t.answers, t.id
		FROM turns t JOIN conversations c ON c.id = t.conversation_id
		WHERE c.user_id = $1 AND c.interface_url = $2 AND c.context_id = $3 ORDER BY t.id`, db.user, interfaceURL, contextID)
	turns, err := collect(rows, err, func(rows pgx.Rows) (store.Turn, error) {
		var id int64
		t, err := scanTurn(rows, &id)
		ids = append(ids, id)
		return t, err
	})
	if err != nil || len(turns) == 0 {
		return turns, err
	}
	rows, err = db.query(ctx, `SELECT p.turn_id, p.kind, p.name, p.media_type, p.data, p.url, p.sha256, p.size, p.note
		FROM turn_parts p JOIN turns t ON t.id = p.turn_id JOIN conversations c ON c.id = t.conversation_id
		WHERE c.user_id = $1 AND c.interface_url = $2 AND c.context_id = $3 ORDER BY p.turn_id, p.seq`, db.user, interfaceURL, contextID)
	parts := map[int64][]store.Part{}
	if _, err := collect(rows, err, func(rows pgx.Rows) (struct{}, error) {
		var id int64
		var p store.Part
		err := rows.Scan(&id, &p.Kind, &p.Name, &p.MediaType, &p.JSON, &p.URL, &p.SHA256, &p.Size, &p.Note)
		parts[id] = append(parts[id], p)
		return struct{}{}, err
	}); err != nil {
		return nil, err
	}
	for i := range turns {
		turns[i].Parts = parts[ids[i]]
	}
	return turns, nil
}

// AppendTurns adds turns to the conversation (see store.Conversations):
// the conversation's row upserted, one row a turn and a part, the current
// conversation's row when it changes, sent as one batch.
func (db *userDB) AppendTurns(ctx context.Context, conv store.Conversation, turns ...store.Turn) error {
	if conv.State == "" {
		conv.State = "open"
	}
	return db.tx(ctx, func(tx pgx.Tx) error {
		var id int64
		err := tx.QueryRow(ctx, `INSERT INTO conversations (user_id, brand, brand_name, interface_url, context_id, last_message_at, last_message_ns, state)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
			ON CONFLICT (user_id, interface_url, context_id) DO UPDATE SET brand = excluded.brand, brand_name = excluded.brand_name,
				last_message_at = excluded.last_message_at, last_message_ns = excluded.last_message_ns, state = excluded.state
			RETURNING id`, cleanArgs([]any{db.user, conv.Brand, conv.BrandName, conv.InterfaceURL, conv.ContextID,
			fmtTime(conv.LastMessageAt), conv.LastMessageAt.UnixNano(), conv.State})...).Scan(&id)
		if err != nil {
			return err
		}
		if len(turns) > 0 {
			ids, err := insertTurns(ctx, tx, db.user, id, turns)
			if err != nil {
				return err
			}
			b := &pgx.Batch{}
			for i, t := range turns {
				if ids[i] != 0 {
					queueParts(b, db.user, ids[i], t.Parts)
				}
			}
			if b.Len() > 0 {
				if err := tx.SendBatch(ctx, b).Close(); err != nil {
					return err
				}
			}
		}
		// Written only when it changes.
		_, err = tx.Exec(ctx, `INSERT INTO current_conversations (user_id, brand, conversation_id) VALUES ($1, $2, $3)
			ON CONFLICT (user_id, brand) DO UPDATE SET conversation_id = excluded.conversation_id
			WHERE current_conversations.conversation_id <> excluded.conversation_id`, cleanArgs([]any{db.user, conv.Brand, id})...)
		return err
	})
}

// insertTurns inserts turns into conversation id in one statement, in
// their order, and returns the id of each (0 for a turn already stored: a
// retried send, whose parts are stored too). A User's turn is stored once
// per messageId, an agent turn once per User messageId it answers
// (store.Turn.Answers; one that answers none is always added).
func insertTurns(ctx context.Context, tx pgx.Tx, user string, conv int64, turns []store.Turn) ([]int64, error) {
	n := len(turns)
	msg, role, text, at, task, rid, ans := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	verified := make([]*bool, n)
	for i, t := range turns {
		msg[i], role[i], text[i], at[i], task[i], rid[i] = clean(t.MessageID), clean(t.Role), clean(t.Text), fmtTime(t.At), clean(t.TaskState), clean(t.ReceiptID)
		if t.Role == "agent" {
			ans[i] = clean(t.Answers)
		}
		verified[i] = t.ReceiptVerified
	}
	rows, err := tx.Query(ctx, `INSERT INTO turns (user_id, conversation_id, message_id, role, text, at, task_state, receipt_id, receipt_verified, answers)
		SELECT $1, $2, u.m, u.r, u.x, u.a, u.ts, u.ri, u.rv, u.an
		FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::boolean[], $10::text[]) WITH ORDINALITY AS u (m, r, x, a, ts, ri, rv, an, n)
		ORDER BY u.n
		ON CONFLICT DO NOTHING
		RETURNING id, role, message_id, answers`, clean(user), conv, msg, role, text, at, task, rid, verified, ans)
	if err != nil {
		return nil, err
	}
	// The turns stored, by what de-duplicates them, in the order they
	// were inserted (their ids grow).
	byKey := map[[3]string][]int64{}
	for rows.Next() {
		var id int64
		var r, m, a string
		if err := rows.Scan(&id, &r, &m, &a); err != nil {
			rows.Close()
			return nil, err
		}
		k := turnKey(r, m, a)
		byKey[k] = append(byKey[k], id)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, ids := range byKey {
		slices.Sort(ids)
	}
	ids := make([]int64, n)
	for i := range turns {
		k := turnKey(role[i], msg[i], ans[i])
		if l := byKey[k]; len(l) > 0 {
			ids[i], byKey[k] = l[0], l[1:] // a second turn with the same key in one call was not added
		}
	}
	return ids, nil
}

// turnKey is what de-duplicates a turn (turns_by_message, turns_by_answer):
// an agent turn's User messageId it answers, any other turn's messageId.
func turnKey(role, messageID, answers string) [3]string {
	if role == "agent" && answers != "" {
		return [3]string{role, "", answers}
	}
	return [3]string{role, messageID, ""}
}

// queueParts queues the rows of a turn's parts; a file's bytes go once
// into the User's blobs.
func queueParts(b *pgx.Batch, user string, turnID int64, parts []store.Part) {
	for i, p := range parts {
		if p.Kind == store.PartFile && p.Data != nil {
			sum := sha256.Sum256(p.Data)
			p.SHA256, p.Size = hex.EncodeToString(sum[:]), int64(len(p.Data))
			if len(p.Data) > store.MaxBlob {
				p.Note = fmt.Sprintf("not kept: %d bytes, more than the %d MiB pact keeps of a file", len(p.Data), store.MaxBlob>>20)
			} else {
				b.Queue(`INSERT INTO blobs (user_id, sha256, data) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, clean(user), p.SHA256, p.Data)
			}
		}
		b.Queue(`INSERT INTO turn_parts (turn_id, seq, kind, name, media_type, data, url, sha256, size, note)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING`,
			cleanArgs([]any{turnID, i, p.Kind, p.Name, p.MediaType, p.JSON, p.URL, p.SHA256, p.Size, p.Note})...)
	}
}

func (db *userDB) SetConversationState(ctx context.Context, interfaceURL, contextID, state string) error {
	return db.exec(ctx, `UPDATE conversations SET state = $1 WHERE user_id = $2 AND interface_url = $3 AND context_id = $4`,
		state, db.user, interfaceURL, contextID)
}

func (db *userDB) ForgetCurrent(ctx context.Context, cardURL string) error {
	return db.exec(ctx, `DELETE FROM current_conversations WHERE user_id = $1 AND brand = $2`, db.user, cardURL)
}

// SearchTurns finds the User's turns holding every word of text as a
// substring, case-insensitively (ILIKE, its wildcards escaped: the words
// are matched as given), newest first, at most limit (0 = 100). The
// trigram index (user, text) answers words of three characters or more;
// shorter words are matched among the User's turns.
func (db *userDB) SearchTurns(ctx context.Context, text string, limit int) (store.Search, error) {
	var res store.Search
	words := strings.Fields(text)
	if len(words) == 0 {
		if _, err := db.conn(ctx); err != nil {
			return res, err
		}
		return res, nil
	}
	if limit <= 0 {
		limit = 100
	}
	args := []any{db.user}
	var where []string
	for _, w := range words {
		args = append(args, "%"+likeEscape(w)+"%")
		where = append(where, `t.text ILIKE $`+strconv.Itoa(len(args)))
	}
	args = append(args, limit)
	rows, err := db.query(ctx, `SELECT t.message_id, t.role, t.text, t.at, t.task_state, t.receipt_id, t.receipt_verified, t.answers, `+convColumns+`
		FROM turns t JOIN conversations c ON c.id = t.conversation_id
		WHERE t.user_id = $1 AND `+strings.Join(where, ` AND `)+` ORDER BY t.id DESC LIMIT $`+strconv.Itoa(len(args)), args...)
	res.Hits, err = collect(rows, err, func(rows pgx.Rows) (store.Hit, error) {
		var h store.Hit
		var at string
		var err error
		h.Turn, err = scanTurn(rows, convDest(&h.Conversation, &at)...)
		h.Conversation.LastMessageAt = parseTime(at)
		return h, err
	})
	return res, err
}

// likeEscape escapes LIKE's wildcards (the default escape, '\').
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

func (db *userDB) Blob(ctx context.Context, sha string) ([]byte, bool, error) {
	var data []byte
	ok, err := db.queryRow(ctx, `SELECT data FROM blobs WHERE user_id = $1 AND sha256 = $2`, []any{db.user, sha}, &data)
	return data, ok, err
}

// Sends.

func (db *userDB) RecordSend(ctx context.Context, s store.Send) error {
	if s.State == "" {
		s.State = store.SendSending
	}
	return db.exec(ctx, `INSERT INTO sends (user_id, message_id, brand, interface_url, context_id, text, at, state, error)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (user_id, message_id) DO UPDATE SET context_id = excluded.context_id, text = excluded.text,
			state = excluded.state, error = excluded.error`,
		db.user, s.MessageID, s.Brand, s.InterfaceURL, s.ContextID, s.Text, fmtTime(s.At), s.State, s.Error)
}

func (db *userDB) SetSendState(ctx context.Context, messageID, state, why string) error {
	return db.exec(ctx, `UPDATE sends SET state = $1, error = $2 WHERE user_id = $3 AND message_id = $4`, state, why, db.user, messageID)
}

func (db *userDB) AbandonSend(ctx context.Context, messageID, why string) (bool, error) {
	pool, err := db.conn(ctx)
	if err != nil {
		return false, err
	}
	tag, err := pool.Exec(ctx, `UPDATE sends SET state = $1, error = $2 WHERE user_id = $3 AND message_id = $4 AND state = $5`,
		cleanArgs([]any{store.SendAbandoned, why, db.user, messageID, store.SendSending})...)
	if err != nil {
		return false, db.wrapWrite(err)
	}
	return tag.RowsAffected() > 0, nil
}

func (db *userDB) SendState(ctx context.Context, messageID string) (string, error) {
	var st string
	_, err := db.queryRow(ctx, `SELECT state FROM sends WHERE user_id = $1 AND message_id = $2`, []any{db.user, messageID}, &st)
	return st, err
}

func (db *userDB) Unanswered(ctx context.Context, cardURL string) ([]store.Send, error) {
	rows, err := db.query(ctx, `SELECT message_id, brand, interface_url, context_id, text, at, state, error FROM sends
		WHERE user_id = $1 AND brand = $2 AND state = $3 ORDER BY at, message_id`, db.user, cardURL, store.SendSending)
	return collect(rows, err, func(rows pgx.Rows) (store.Send, error) {
		var s store.Send
		var at string
		err := rows.Scan(&s.MessageID, &s.Brand, &s.InterfaceURL, &s.ContextID, &s.Text, &at, &s.State, &s.Error)
		s.At = parseTime(at)
		return s, err
	})
}

func (db *userDB) SaveDraft(ctx context.Context, cardURL string, d store.Draft) error {
	if d.Input == "" && len(d.Queue) == 0 {
		return db.exec(ctx, `DELETE FROM drafts WHERE user_id = $1 AND brand = $2`, db.user, cardURL)
	}
	q, err := json.Marshal(d.Queue)
	if err != nil {
		return err
	}
	return db.exec(ctx, `INSERT INTO drafts (user_id, brand, draft, queue, at) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (user_id, brand) DO UPDATE SET draft = excluded.draft, queue = excluded.queue, at = excluded.at`,
		db.user, cardURL, d.Input, string(q), fmtTime(time.Now().UTC()))
}

func (db *userDB) LoadDraft(ctx context.Context, cardURL string) (store.Draft, error) {
	var d store.Draft
	var q string
	ok, err := db.queryRow(ctx, `SELECT draft, queue FROM drafts WHERE user_id = $1 AND brand = $2`, []any{db.user, cardURL}, &d.Input, &q)
	if err != nil || !ok {
		return store.Draft{}, err
	}
	if err := json.Unmarshal([]byte(q), &d.Queue); err != nil {
		return store.Draft{}, fmt.Errorf("store: the kept queue of %s: %w", cardURL, err)
	}
	return d, nil
}

// Grants, secrets, cards, notes.

func (db *userDB) Grant(ctx context.Context, interfaceURL string) ([]byte, bool, error) {
	var data string
	ok, err := db.queryRow(ctx, `SELECT data FROM grants WHERE user_id = $1 AND interface_url = $2`, []any{db.user, interfaceURL}, &data)
	if !ok {
		return nil, false, err
	}
	return []byte(data), true, nil
}

func (db *userDB) PutGrant(ctx context.Context, interfaceURL, brand string, data []byte) error {
	return db.exec(ctx, `INSERT INTO grants (user_id, interface_url, brand, data) VALUES ($1, $2, $3, $4)
		ON CONFLICT (user_id, interface_url) DO UPDATE SET brand = excluded.brand, data = excluded.data`, db.user, interfaceURL, brand, string(data))
}

func (db *userDB) DeleteGrant(ctx context.Context, interfaceURL string) error {
	return db.exec(ctx, `DELETE FROM grants WHERE user_id = $1 AND interface_url = $2`, db.user, interfaceURL)
}

func (db *userDB) Grants(ctx context.Context) ([][]byte, error) {
	rows, err := db.query(ctx, `SELECT data FROM grants WHERE user_id = $1 ORDER BY brand, interface_url`, db.user)
	return collect(rows, err, func(rows pgx.Rows) ([]byte, error) {
		var d string
		err := rows.Scan(&d)
		return []byte(d), err
	})
}

func (db *userDB) PutSecret(ctx context.Context, name string, s store.SealedSecret) error {
	return db.exec(ctx, `INSERT INTO secrets (user_id, name, key_version, ciphertext) VALUES ($1, $2, $3, $4)
		ON CONFLICT (user_id, name) DO UPDATE SET key_version = excluded.key_version, ciphertext = excluded.ciphertext`,
		db.user, name, s.KeyVersion, s.Ciphertext)
}

func (db *userDB) Secret(ctx context.Context, name string) (store.SealedSecret, bool, error) {
	var s store.SealedSecret
	ok, err := db.queryRow(ctx, `SELECT key_version, ciphertext FROM secrets WHERE user_id = $1 AND name = $2`, []any{db.user, name}, &s.KeyVersion, &s.Ciphertext)
	return s, ok, err
}

func (db *userDB) DeleteSecret(ctx context.Context, name string) error {
	return db.exec(ctx, `DELETE FROM secrets WHERE user_id = $1 AND name = $2`, db.user, name)
}

func (db *userDB) SecretNames(ctx context.Context) ([]string, error) {
	rows, err := db.query(ctx, `SELECT name FROM secrets WHERE user_id = $1 ORDER BY name`, db.user)
	return collect(rows, err, func(rows pgx.Rows) (string, error) {
		var n string
		return n, rows.Scan(&n)
	})
}

func (db *userDB) Card(ctx context.Context, url string) (store.CachedCard, bool, error) {
	var cc store.CachedCard
	var exp, fetched int64
	var sig string
	ok, err := db.queryRow(ctx, `SELECT url, final_url, body, expires_ns, etag, last_modified, fetched_ns, signature FROM cards
		WHERE user_id = $1 AND url = $2`, []any{db.user, url}, &cc.URL, &cc.FinalURL, &cc.Body, &exp, &cc.ETag, &cc.LastModified, &fetched, &sig)
	if !ok {
		return store.CachedCard{}, false, err
	}
	cc.Expires, cc.FetchedAt = time.Unix(0, exp), time.Unix(0, fetched)
	if sig != "" {
		cc.Signature = []byte(sig)
	}
	return cc, true, nil
}

func (db *userDB) PutCard(ctx context.Context, cc store.CachedCard) error {
	return db.exec(ctx, `INSERT INTO cards (user_id, url, final_url, body, expires_ns, etag, last_modified, fetched_ns, signature)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (user_id, url) DO UPDATE SET final_url = excluded.final_url, body = excluded.body, expires_ns = excluded.expires_ns,
			etag = excluded.etag, last_modified = excluded.last_modified, fetched_ns = excluded.fetched_ns, signature = excluded.signature`,
		db.user, cc.URL, cc.FinalURL, cc.Body, cc.Expires.UnixNano(), cc.ETag, cc.LastModified, cc.FetchedAt.UnixNano(), string(cc.Signature))
}

func (db *userDB) ForgetCard(ctx context.Context, url string) error {
	return db.exec(ctx, `DELETE FROM cards WHERE user_id = $1 AND url = $2`, db.user, url)
}

func (db *userDB) Note(ctx context.Context, key string) (string, bool, error) {
	var v string
	ok, err := db.queryRow(ctx, `SELECT value FROM notes WHERE user_id = $1 AND key = $2`, []any{db.user, key}, &v)
	return v, ok, err
}

func (db *userDB) SetNote(ctx context.Context, key, value string) error {
	return db.exec(ctx, `INSERT INTO notes (user_id, key, value) VALUES ($1, $2, $3)
		ON CONFLICT (user_id, key) DO UPDATE SET value = excluded.value`, db.user, key, value)
}

// Pins and the one card state.

func (db *userDB) Pin(ctx context.Context, brand string) (store.Pin, bool, error) {
	var p store.Pin
	var at string
	ok, err := db.queryRow(ctx, `SELECT brand, provider_origin, interface_url, key_thumbprint, retired_keys, pinned_at FROM pins
		WHERE user_id = $1 AND brand = $2`, []any{db.user, brand}, &p.Brand, &p.ProviderOrigin, &p.InterfaceURL, &p.KeyThumbprint, &p.RetiredKeys, &at)
	if !ok {
		return store.Pin{}, false, err
	}
	p.PinnedAt = parseTime(at)
	return p, true, nil
}

func (db *userDB) SetPin(ctx context.Context, p store.Pin) error {
	if p.Brand == "" {
		return errors.New("store: a pin needs a brand")
	}
	if p.PinnedAt.IsZero() {
		p.PinnedAt = time.Now().UTC()
	}
	return db.tx(ctx, func(tx pgx.Tx) error {
		// Accepting a card ends any change seen for the Brand.
		if _, err := tx.Exec(ctx, `DELETE FROM card_changes WHERE user_id = $1 AND brand = $2`, cleanArgs([]any{db.user, p.Brand})...); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO pins (user_id, brand, provider_origin, interface_url, key_thumbprint, retired_keys, pinned_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7)
			ON CONFLICT (user_id, brand) DO UPDATE SET provider_origin = excluded.provider_origin, interface_url = excluded.interface_url,
				key_thumbprint = excluded.key_thumbprint, retired_keys = excluded.retired_keys, pinned_at = excluded.pinned_at`,
			cleanArgs([]any{db.user, p.Brand, p.ProviderOrigin, p.InterfaceURL, p.KeyThumbprint, p.RetiredKeys, fmtTime(p.PinnedAt)})...)
		return err
	})
}

func (db *userDB) NoteCardChange(ctx context.Context, brand string, next store.Pin, changes []string) error {
	pin, _ := json.Marshal(next)
	ch, _ := json.Marshal(changes)
	return db.exec(ctx, `INSERT INTO card_changes (user_id, brand, pin, changes, seen_at) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (user_id, brand) DO UPDATE SET pin = excluded.pin, changes = excluded.changes
		WHERE card_changes.pin <> excluded.pin OR card_changes.changes <> excluded.changes`,
		db.user, brand, string(pin), string(ch), fmtTime(time.Now().UTC()))
}

func (db *userDB) CardChange(ctx context.Context, brand string) (store.Pin, []string, bool, error) {
	var pin, ch string
	ok, err := db.queryRow(ctx, `SELECT pin, changes FROM card_changes WHERE user_id = $1 AND brand = $2`, []any{db.user, brand}, &pin, &ch)
	if !ok {
		return store.Pin{}, nil, false, err
	}
	var next store.Pin
	var changes []string
	if json.Unmarshal([]byte(pin), &next) != nil || json.Unmarshal([]byte(ch), &changes) != nil {
		return store.Pin{}, []string{"a changed card was seen (its record is damaged)"}, true, nil
	}
	return next, changes, true, nil
}
