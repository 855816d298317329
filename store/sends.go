package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Send states (Send.State).
const (
	// SendSending: recorded before the message left; a send still in this state
	// when pact starts again was interrupted (a quit, a crash) before its answer
	// arrived: sent, maybe received, unanswered.
	SendSending = "sending"
	// SendDelivered: the answer arrived and the turn is stored.
	SendDelivered = "delivered"
	// SendFailed: the message is known not to have been processed: it never left,
	// or the Provider refused it before delivery on a first attempt
	// (conversation.Session.endSend). A send whose outcome is unknown stays
	// SendSending.
	SendFailed = "failed"
	// SendAbandoned: the User replaced or removed a message left sending
	// (AbandonSend): it may still have been delivered, but it is no longer
	// offered to be asked about again.
	SendAbandoned = "abandoned"
)

// Send is a User's message as sent: on record before it leaves, with the
// messageId that a second attempt reuses so that the Brand's agent answers it
// once (PACT §4.3).
type Send struct {
	MessageID    string
	Brand        string // card URL
	InterfaceURL string
	ContextID    string // "" for the first message of a new conversation
	Text         string
	At           time.Time
	State        string // SendSending, SendDelivered, SendFailed or SendAbandoned
	Error        string // why it failed (SendFailed) or was abandoned (SendAbandoned)
}

// RecordSend puts s on record (state SendSending unless set), replacing an
// earlier record of the same messageId (a second attempt).
func (db *userDB) RecordSend(ctx context.Context, s Send) error {
	if s.State == "" {
		s.State = SendSending
	}
	return db.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO sends (user_id, message_id, brand, interface_url, context_id, text, at, state, error)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (user_id, message_id) DO UPDATE SET context_id = excluded.context_id, text = excluded.text,
				state = excluded.state, error = excluded.error`,
			db.user, s.MessageID, s.Brand, s.InterfaceURL, s.ContextID, s.Text, fmtTime(s.At), s.State, s.Error)
		return err
	})
}

// SetSendState records how a send ended: SendDelivered, or SendFailed with
// why. An unknown messageId is no error.
func (db *userDB) SetSendState(ctx context.Context, messageID, state, why string) error {
	return db.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE sends SET state = ?, error = ? WHERE user_id = ? AND message_id = ?`, state, why, db.user, messageID)
		return err
	})
}

// AbandonSend records that the User gave up the send of messageID while it
// was still SendSending (replaced by another text, or removed), with why:
// it becomes SendAbandoned, and Unanswered no longer returns it. A send in
// another state, or none, is left as it is; abandoned reports whether one
// was changed.
func (db *userDB) AbandonSend(ctx context.Context, messageID, why string) (abandoned bool, err error) {
	err = db.tx(ctx, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, `UPDATE sends SET state = ?, error = ? WHERE user_id = ? AND message_id = ? AND state = ?`,
			SendAbandoned, why, db.user, messageID, SendSending)
		if err != nil {
			return err
		}
		n, err := r.RowsAffected()
		abandoned = n > 0
		return err
	})
	return abandoned, err
}

// SendState returns the state of the send of messageID ("" when none is on record).
func (db *userDB) SendState(ctx context.Context, messageID string) (string, error) {
	c, err := db.conn(ctx)
	if err != nil {
		return "", err
	}
	var st string
	err = c.QueryRowContext(ctx, `SELECT state FROM sends WHERE user_id = ? AND message_id = ?`, db.user, messageID).Scan(&st)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return st, err
}

// Unanswered returns the sends to the Brand at cardURL still in state
// SendSending (their answer never arrived), oldest first.
func (db *userDB) Unanswered(ctx context.Context, cardURL string) ([]Send, error) {
	c, err := db.conn(ctx)
	if err != nil {
		return nil, err
	}
	return queryAll(ctx, c, func(sc scanner) (Send, error) {
		var s Send
		var at string
		err := sc.Scan(&s.MessageID, &s.Brand, &s.InterfaceURL, &s.ContextID, &s.Text, &at, &s.State, &s.Error)
		s.At = parseTime(at)
		return s, err
	}, `SELECT message_id, brand, interface_url, context_id, text, at, state, error FROM sends
		WHERE user_id = ? AND brand = ? AND state = ? ORDER BY at, message_id`, db.user, cardURL, SendSending)
}

// Draft is what the chat had not sent when it was left: the input and the
// queued messages, in order.
type Draft struct {
	Input string
	Queue []string
}

// SaveDraft keeps the chat's draft for the Brand at cardURL (an empty draft
// removes it).
func (db *userDB) SaveDraft(ctx context.Context, cardURL string, d Draft) error {
	return db.tx(ctx, func(tx *sql.Tx) error {
		if d.Input == "" && len(d.Queue) == 0 {
			_, err := tx.ExecContext(ctx, `DELETE FROM drafts WHERE user_id = ? AND brand = ?`, db.user, cardURL)
			return err
		}
		q, err := json.Marshal(d.Queue)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO drafts (user_id, brand, draft, queue, at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (user_id, brand) DO UPDATE SET draft = excluded.draft, queue = excluded.queue, at = excluded.at`,
			db.user, cardURL, d.Input, string(q), fmtTime(time.Now().UTC()))
		return err
	})
}

// LoadDraft returns the chat's kept draft for the Brand at cardURL (zero
// when there is none).
func (db *userDB) LoadDraft(ctx context.Context, cardURL string) (Draft, error) {
	c, err := db.conn(ctx)
	if err != nil {
		return Draft{}, err
	}
	var d Draft
	var q string
	err = c.QueryRowContext(ctx, `SELECT draft, queue FROM drafts WHERE user_id = ? AND brand = ?`, db.user, cardURL).Scan(&d.Input, &q)
	if errors.Is(err, sql.ErrNoRows) {
		return Draft{}, nil
	}
	if err != nil {
		return Draft{}, err
	}
	if err := json.Unmarshal([]byte(q), &d.Queue); err != nil {
		return Draft{}, fmt.Errorf("the kept queue of %s: %w", cardURL, err)
	}
	return d, nil
}

// MaxBlob is the largest file part whose bytes are kept (8 MiB); a bigger
// one is kept as its name, type, size and SHA-256 with a Note.
const MaxBlob = 8 << 20

// Part kinds (Part.Kind).
const (
	PartData = "data"
	PartFile = "file"
)

// Part is a non-text part of a stored turn (A2A Part: data, raw bytes or a
// URL). A file's bytes are kept once, by their SHA-256, in the blobs table.
type Part struct {
	Kind      string // PartData or PartFile
	Name      string // filename as sent
	MediaType string
	JSON      string // a data part's value as JSON
	URL       string // a file by reference (never fetched)
	// Data is a file's bytes: given to AppendTurns to keep (up to MaxBlob);
	// Turns leaves it nil (Blob reads it by SHA256).
	Data   []byte
	SHA256 string // hex SHA-256 of the file's bytes ("" for data and URLs)
	Size   int64  // the file's size in bytes
	Note   string // e.g. why the bytes were not kept
}

// insertParts stores the parts of turn id; a file's bytes go once into
// the User's blobs.
func insertParts(ctx context.Context, tx *sql.Tx, user string, turnID int64, parts []Part) error {
	for i, p := range parts {
		if p.Kind == PartFile && p.Data != nil {
			sum := sha256.Sum256(p.Data)
			p.SHA256, p.Size = hex.EncodeToString(sum[:]), int64(len(p.Data))
			if len(p.Data) > MaxBlob {
				p.Note = fmt.Sprintf("not kept: %d bytes, more than the %d MiB pact keeps of a file", len(p.Data), MaxBlob>>20)
			} else if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO blobs (user_id, sha256, data) VALUES (?, ?, ?)`, user, p.SHA256, p.Data); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO turn_parts (turn_id, seq, kind, name, media_type, data, url, sha256, size, note)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, turnID, i, p.Kind, p.Name, p.MediaType, p.JSON, p.URL, p.SHA256, p.Size, p.Note); err != nil {
			return err
		}
	}
	return nil
}

// partsOf returns the parts of the turns of the User's conversation
// (interfaceURL, contextID), by turn id.
func partsOf(ctx context.Context, c *sql.DB, user, interfaceURL, contextID string) (map[int64][]Part, error) {
	rows, err := c.QueryContext(ctx, `SELECT p.turn_id, p.kind, p.name, p.media_type, p.data, p.url, p.sha256, p.size, p.note
		FROM turn_parts p JOIN turns t ON t.id = p.turn_id JOIN conversations c ON c.id = t.conversation_id
		WHERE c.user_id = ? AND c.interface_url = ? AND c.context_id = ? ORDER BY p.turn_id, p.seq`, user, interfaceURL, contextID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64][]Part{}
	for rows.Next() {
		var id int64
		var p Part
		if err := rows.Scan(&id, &p.Kind, &p.Name, &p.MediaType, &p.JSON, &p.URL, &p.SHA256, &p.Size, &p.Note); err != nil {
			return nil, err
		}
		out[id] = append(out[id], p)
	}
	return out, rows.Err()
}

// Blob returns the kept bytes of a file part by their hex SHA-256; ok is
// false when they were not kept.
func (db *userDB) Blob(ctx context.Context, sha string) (data []byte, ok bool, err error) {
	c, err := db.conn(ctx)
	if err != nil {
		return nil, false, err
	}
	err = c.QueryRowContext(ctx, `SELECT data FROM blobs WHERE user_id = ? AND sha256 = ?`, db.user, sha).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	return data, err == nil, err
}
