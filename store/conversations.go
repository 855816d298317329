package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"
	"unicode/utf8"
)

// Conversation is a stored conversation's row.
type Conversation struct {
	Brand         string // card URL
	BrandName     string
	InterfaceURL  string
	ContextID     string
	LastMessageAt time.Time
	State         string // "open" or "closed"
	Current       bool   // the Brand's conversation that send/chat continue (reads only)
}

// Turn is one stored message of a conversation.
type Turn struct {
	MessageID       string
	Role            string // "user" or "agent"
	Text            string
	At              time.Time
	TaskState       string
	ReceiptID       string
	ReceiptVerified *bool
	// ReceiptRestored (read only) is set when the turn's receipt was put
	// back by `pact restore` and not checked again since: its verdict is
	// the file's, not pact's, so ReceiptVerified reads false until an
	// online `pact receipts verify` checks it (Receipt.Restored).
	ReceiptRestored bool
	// Answers is, on an agent turn, the messageId of the User's message it
	// answers (PACT §4.3: a send tried again keeps it). A reply is stored
	// once per User message it answers, whatever messageId the Brand gives
	// it (a Provider may reuse one); "" when not known (never de-duplicated).
	Answers string
	// Parts are the turn's non-text parts (data, files), in order.
	Parts []Part
}

func fmtTime(t time.Time) string { return t.Format(time.RFC3339Nano) }

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

const convColumns = `c.brand, c.brand_name, c.interface_url, c.context_id, c.last_message_at, c.state,
	EXISTS (SELECT 1 FROM current_conversations cc WHERE cc.user_id = c.user_id AND cc.brand = c.brand AND cc.conversation_id = c.id)`

// scanner is a row to scan (*sql.Row, *sql.Rows).
type scanner interface{ Scan(...any) error }

func scanConversation(sc scanner) (Conversation, error) {
	var c Conversation
	var at string
	err := sc.Scan(&c.Brand, &c.BrandName, &c.InterfaceURL, &c.ContextID, &at, &c.State, &c.Current)
	c.LastMessageAt = parseTime(at)
	return c, err
}

// CurrentConversation returns the conversation that send/chat continue
// with the Brand at cardURL; ok is false when there is none.
func (db *userDB) CurrentConversation(ctx context.Context, cardURL string) (Conversation, bool, error) {
	return db.findConversation(ctx, `SELECT `+convColumns+` FROM current_conversations cur
		JOIN conversations c ON c.id = cur.conversation_id AND c.user_id = cur.user_id WHERE cur.user_id = ? AND cur.brand = ?`, db.user, cardURL)
}

// FindConversation returns the stored conversation (interfaceURL, contextID).
func (db *userDB) FindConversation(ctx context.Context, interfaceURL, contextID string) (Conversation, bool, error) {
	return db.findConversation(ctx, `SELECT `+convColumns+` FROM conversations c WHERE c.user_id = ? AND c.interface_url = ? AND c.context_id = ?`,
		db.user, interfaceURL, contextID)
}

// findConversation returns the conversation query selects (convColumns);
// ok is false when there is none.
func (db *userDB) findConversation(ctx context.Context, query string, args ...any) (Conversation, bool, error) {
	c, err := db.conn(ctx)
	if err != nil {
		return Conversation{}, false, err
	}
	conv, err := scanConversation(c.QueryRowContext(ctx, query, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return Conversation{}, false, nil
	}
	return conv, err == nil, err
}

// FindContext returns the stored conversations whose contextId is
// contextID or starts with it (any Brand), most recent first.
func (db *userDB) FindContext(ctx context.Context, contextID string) ([]Conversation, error) {
	c, err := db.conn(ctx)
	if err != nil {
		return nil, err
	}
	return queryAll(ctx, c, scanConversation, `SELECT `+convColumns+` FROM conversations c
		WHERE c.user_id = ?2 AND (c.context_id = ?1 OR substr(c.context_id, 1, length(?1)) = ?1)
		ORDER BY c.context_id = ?1 DESC, c.last_message_ns DESC`, contextID, db.user)
}

// Conversations returns every stored conversation, most recent first
// (then by contextId). Current is set only on open conversations.
func (db *userDB) Conversations(ctx context.Context) ([]Conversation, error) {
	c, err := db.conn(ctx)
	if err != nil {
		return nil, err
	}
	return queryAll(ctx, c, func(sc scanner) (Conversation, error) {
		conv, err := scanConversation(sc)
		conv.Current = conv.Current && conv.State == "open"
		return conv, err
	}, `SELECT `+convColumns+` FROM conversations c WHERE c.user_id = ? ORDER BY c.last_message_ns DESC, c.context_id`, db.user)
}

// Turns returns the stored turns of a conversation, oldest first (in the
// order they were appended); none when the conversation is unknown.
func (db *userDB) Turns(ctx context.Context, interfaceURL, contextID string) ([]Turn, error) {
	c, err := db.conn(ctx)
	if err != nil {
		return nil, err
	}
	var ids []int64
	turns, err := queryAll(ctx, c, func(sc scanner) (Turn, error) {
		var id int64
		t, err := scanTurn(sc, &id)
		ids = append(ids, id)
		return t, err
	}, `SELECT `+turnColumns+`, t.id
		FROM turns t JOIN conversations c ON c.id = t.conversation_id`+turnReceipt+`
		WHERE c.user_id = ? AND c.interface_url = ? AND c.context_id = ? ORDER BY t.id`, db.user, interfaceURL, contextID)
	if err != nil || len(turns) == 0 {
		return turns, err
	}
	parts, err := partsOf(ctx, c, db.user, interfaceURL, contextID)
	if err != nil {
		return nil, err
	}
	for i := range turns {
		turns[i].Parts = parts[ids[i]]
	}
	return turns, nil
}

// queryAll runs query on c and returns every row as scan reads it.
func queryAll[T any](ctx context.Context, c *sql.DB, scan func(scanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := c.QueryContext(ctx, query, args...)
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

// turnColumns are the columns scanTurn reads, of turns t joined with
// turnReceipt: a turn's receipt verdict is its own (false on a turn the
// Brand replayed the receipt on) and its archive's (a receipt rejected
// since reads false); a receipt put back by a restore and not checked
// again reads false, with ReceiptRestored.
const turnColumns = `t.message_id, t.role, t.text, t.at, t.task_state, t.receipt_id,
	CASE WHEN r.id IS NULL THEN t.receipt_verified ELSE t.receipt_verified AND r.verified AND NOT r.restored END,
	coalesce(r.restored, 0), t.answers`

// turnReceipt joins a turn's archived receipt (r) to turns t of
// conversations c.
const turnReceipt = ` LEFT JOIN receipts r ON t.receipt_id != '' AND r.user_id = c.user_id AND r.id = t.receipt_id`

func scanTurn(sc scanner, extra ...any) (Turn, error) {
	var t Turn
	var at string
	var rv sql.NullBool
	err := sc.Scan(append([]any{&t.MessageID, &t.Role, &t.Text, &at, &t.TaskState, &t.ReceiptID, &rv, &t.ReceiptRestored, &t.Answers}, extra...)...)
	t.At = parseTime(at)
	if rv.Valid {
		v := rv.Bool
		t.ReceiptVerified = &v
	}
	return t, err
}

// AppendTurns adds turns to the conversation conv names (creating it or
// updating its summary), and makes it the Brand's current conversation,
// in one transaction. A User's turn whose messageId is already stored is
// not added twice (a retried send), nor an agent turn answering a User's
// messageId (Turn.Answers) that already has its answer, whatever the
// reply's own messageId. The cost does not depend on how many
// turns the conversation already has (indexed inserts only).
func (db *userDB) AppendTurns(ctx context.Context, conv Conversation, turns ...Turn) error {
	if conv.State == "" {
		conv.State = "open"
	}
	return db.tx(ctx, func(tx *sql.Tx) error {
		var id int64
		err := tx.QueryRowContext(ctx, `INSERT INTO conversations (user_id, brand, brand_name, interface_url, context_id, last_message_at, last_message_ns, state)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (user_id, interface_url, context_id) DO UPDATE SET brand = excluded.brand, brand_name = excluded.brand_name,
				last_message_at = excluded.last_message_at, last_message_ns = excluded.last_message_ns, state = excluded.state
			RETURNING id`,
			db.user, conv.Brand, conv.BrandName, conv.InterfaceURL, conv.ContextID, fmtTime(conv.LastMessageAt), conv.LastMessageAt.UnixNano(), conv.State).Scan(&id)
		if err != nil {
			return err
		}
		if len(turns) > 0 {
			st, err := tx.PrepareContext(ctx, `INSERT OR IGNORE INTO turns (conversation_id, message_id, role, text, at, task_state, receipt_id, receipt_verified, answers)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`)
			if err != nil {
				return err
			}
			defer st.Close()
			for _, t := range turns {
				var rv any
				if t.ReceiptVerified != nil {
					rv = *t.ReceiptVerified
				}
				var turnID int64
				answers := ""
				if t.Role == "agent" {
					answers = t.Answers
				}
				err := st.QueryRowContext(ctx, id, t.MessageID, t.Role, t.Text, fmtTime(t.At), t.TaskState, t.ReceiptID, rv, answers).Scan(&turnID)
				if errors.Is(err, sql.ErrNoRows) {
					continue // already stored (a retried send): its parts too
				}
				if err != nil {
					return err
				}
				if err := insertParts(ctx, tx, db.user, turnID, t.Parts); err != nil {
					return err
				}
			}
		}
		// Written only when it changes (a page less in the WAL per send).
		_, err = tx.ExecContext(ctx, `INSERT INTO current_conversations (user_id, brand, conversation_id) VALUES (?, ?, ?)
			ON CONFLICT (user_id, brand) DO UPDATE SET conversation_id = excluded.conversation_id
			WHERE conversation_id != excluded.conversation_id`, db.user, conv.Brand, id)
		inWriteHook()
		return err
	})
}

// SetConversationState sets a stored conversation's state ("closed" when
// the Provider closed it, PACT §4.2). An unknown conversation is no error.
func (db *userDB) SetConversationState(ctx context.Context, interfaceURL, contextID, state string) error {
	return db.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE conversations SET state = ? WHERE user_id = ? AND interface_url = ? AND context_id = ?`,
			state, db.user, interfaceURL, contextID)
		return err
	})
}

// ForgetCurrent stops continuing any conversation with the Brand at
// cardURL; the conversations are kept.
func (db *userDB) ForgetCurrent(ctx context.Context, cardURL string) error {
	return db.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM current_conversations WHERE user_id = ? AND brand = ?`, db.user, cardURL)
		return err
	})
}

// Hit is one turn found by SearchTurns, with its conversation.
type Hit struct {
	Conversation Conversation
	Turn         Turn
}

// Search is what SearchTurns found.
type Search struct {
	Hits []Hit
	// Unindexed counts the turns that could not be searched: those
	// appended since the last search, on a database that can only be read
	// here (the index cannot be brought up to date).
	Unindexed int
}

// SearchTurns finds the User's turns containing every word of text as a
// substring, case-insensitively (SQLite FTS5 with the trigram tokenizer, so
// words of scripts written without spaces, CJK or Thai, are found inside
// longer runs; words of one or two characters, which trigrams cannot
// match, are matched with LIKE), newest first, at most limit (0 = 100).
// The words are matched as given, never read as a query language. Turns
// appended since the last search are indexed first; on a read-only
// database they are left out and counted (Search.Unindexed).
func (db *userDB) SearchTurns(ctx context.Context, text string, limit int) (Search, error) {
	var res Search
	c, err := db.conn(ctx)
	if err != nil {
		return res, err
	}
	if db.readOnly == nil {
		if err := db.indexTurns(ctx, c); err != nil {
			return res, err
		}
	}
	upto := int64(-1)
	if err := c.QueryRowContext(ctx, `SELECT coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'fts_upto'), 0)`).Scan(&upto); err != nil {
		return res, err
	}
	if db.readOnly != nil {
		if err := c.QueryRowContext(ctx, `SELECT count(*) FROM turns t JOIN conversations c ON c.id = t.conversation_id
			WHERE t.id > ? AND c.user_id = ?`, upto, db.user).Scan(&res.Unindexed); err != nil {
			return res, err
		}
	}
	long, short := searchWords(text)
	if len(long) == 0 && len(short) == 0 {
		return res, nil
	}
	if limit <= 0 {
		limit = 100
	}
	where := []string{`c.user_id = ?`}
	args := []any{db.user}
	from, order := `turns t`, `t.id`
	if len(long) > 0 {
		// Newest first in the index's own order (rowid = turn id), so
		// that the search stops at the limit instead of sorting every
		// match.
		from, order = `turns_fts f JOIN turns t ON t.id = f.rowid`, `f.rowid`
		where = append(where, `turns_fts MATCH ?`)
		args = append(args, ftsQuery(long))
	} else {
		// LIKE alone reads every turn: only those the index covers, as the
		// index does (the same turns either way).
		where = append(where, `t.id <= ?`)
		args = append(args, upto)
	}
	for _, w := range short {
		where = append(where, `t.text LIKE ? ESCAPE '\'`)
		args = append(args, "%"+likeEscape(w)+"%")
	}
	args = append(args, limit)
	res.Hits, err = queryAll(ctx, c, func(sc scanner) (Hit, error) {
		var h Hit
		var at string
		var err error
		h.Turn, err = scanTurn(sc, &h.Conversation.Brand, &h.Conversation.BrandName, &h.Conversation.InterfaceURL,
			&h.Conversation.ContextID, &at, &h.Conversation.State, &h.Conversation.Current)
		h.Conversation.LastMessageAt = parseTime(at)
		return h, err
	}, `SELECT `+turnColumns+`, `+convColumns+`
		FROM `+from+` JOIN conversations c ON c.id = t.conversation_id`+turnReceipt+`
		WHERE `+strings.Join(where, ` AND `)+` ORDER BY `+order+` DESC LIMIT ?`, args...)
	return res, err
}

// searchWords splits text into words: long ones (three characters or
// more, which trigrams match) and short ones (LIKE).
func searchWords(text string) (long, short []string) {
	for _, w := range strings.Fields(text) {
		if utf8.RuneCountInString(w) >= 3 {
			long = append(long, w)
		} else {
			short = append(short, w)
		}
	}
	return long, short
}

// likeEscape escapes LIKE's wildcards (ESCAPE '\').
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// ftsQuery turns plain words into an FTS5 query: every word a quoted
// string (quotes doubled), all of them required.
func ftsQuery(words []string) string {
	var parts []string
	for _, w := range words {
		parts = append(parts, `"`+strings.ReplaceAll(w, `"`, `""`)+`"`)
	}
	return strings.Join(parts, " ")
}

// indexTurns adds the turns appended since the last search to the FTS5
// index (meta "fts_upto" is the last turn id indexed), in one write
// transaction; nothing is written when the index is up to date.
func (db *DB) indexTurns(ctx context.Context, c *sql.DB) error {
	const upto = `SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'fts_upto'`
	var done, last int64
	if err := c.QueryRowContext(ctx, `SELECT (`+upto+`), coalesce((SELECT max(id) FROM turns), 0)`).Scan(&done, &last); err != nil {
		return err
	}
	if last <= done {
		return nil
	}
	return db.txOn(ctx, c, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, upto).Scan(&done); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO turns_fts (rowid, text) SELECT id, text FROM turns WHERE id > ? ORDER BY id`, done); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE meta SET value = (SELECT coalesce(max(id), 0) FROM turns) WHERE key = 'fts_upto'`)
		return err
	})
}
