package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Migrations are the schema's versions, oldest first: Migrations[i] takes a
// database from version i (PRAGMA user_version) to version i+1. They are
// compiled into the binary; a released step is never edited, a change is a
// new step at the end.
var Migrations = []string{
	// 1: conversations and their turns, grants' metadata, the card cache.
	`CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE conversations (
	id INTEGER PRIMARY KEY,
	brand TEXT NOT NULL,
	brand_name TEXT NOT NULL DEFAULT '',
	interface_url TEXT NOT NULL,
	context_id TEXT NOT NULL,
	last_message_at TEXT NOT NULL,
	last_message_ns INTEGER NOT NULL,
	state TEXT NOT NULL DEFAULT 'open',
	UNIQUE (interface_url, context_id)
);
CREATE INDEX conversations_by_last ON conversations (last_message_ns);
CREATE TABLE current_conversations (
	brand TEXT PRIMARY KEY,
	conversation_id INTEGER NOT NULL REFERENCES conversations (id) ON DELETE CASCADE
);
CREATE TABLE turns (
	id INTEGER PRIMARY KEY,
	conversation_id INTEGER NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
	message_id TEXT NOT NULL,
	role TEXT NOT NULL,
	text TEXT NOT NULL,
	at TEXT NOT NULL,
	task_state TEXT NOT NULL DEFAULT '',
	receipt_id TEXT NOT NULL DEFAULT '',
	receipt_verified INTEGER
);
CREATE UNIQUE INDEX turns_by_message ON turns (conversation_id, role, message_id);
CREATE TABLE grants (
	interface_url TEXT PRIMARY KEY,
	brand TEXT NOT NULL,
	data TEXT NOT NULL
);
CREATE TABLE cards (
	url TEXT PRIMARY KEY,
	final_url TEXT NOT NULL,
	body BLOB NOT NULL,
	expires_ns INTEGER NOT NULL,
	etag TEXT NOT NULL DEFAULT '',
	last_modified TEXT NOT NULL DEFAULT '',
	fetched_ns INTEGER NOT NULL
);`,
	// 2: the receipt archive, with indexes for `pact receipts list`.
	`CREATE TABLE receipts (
	id TEXT PRIMARY KEY,
	jws TEXT NOT NULL,
	claims TEXT NOT NULL DEFAULT '',
	jwk TEXT NOT NULL DEFAULT '',
	jwk_thumbprint TEXT NOT NULL DEFAULT '',
	expect TEXT NOT NULL DEFAULT '{}',
	verified INTEGER NOT NULL,
	problems TEXT NOT NULL DEFAULT '[]',
	verified_at TEXT NOT NULL DEFAULT '',
	brand TEXT NOT NULL DEFAULT '',
	grant_id TEXT NOT NULL DEFAULT '',
	user TEXT NOT NULL DEFAULT '',
	scopes_used TEXT NOT NULL DEFAULT '[]',
	actions TEXT NOT NULL DEFAULT '[]',
	ts TEXT NOT NULL DEFAULT '',
	ts_ns INTEGER
);
CREATE INDEX receipts_by_ts ON receipts (ts_ns, id);
CREATE TABLE receipt_brands (
	brand TEXT NOT NULL,
	receipt_id TEXT NOT NULL REFERENCES receipts (id) ON DELETE CASCADE,
	PRIMARY KEY (brand, receipt_id)
) WITHOUT ROWID;
CREATE INDEX receipt_brands_by_receipt ON receipt_brands (receipt_id);
CREATE TABLE receipt_scopes (
	scope TEXT NOT NULL,
	receipt_id TEXT NOT NULL REFERENCES receipts (id) ON DELETE CASCADE,
	PRIMARY KEY (scope, receipt_id)
) WITHOUT ROWID;
CREATE INDEX receipt_scopes_by_receipt ON receipt_scopes (receipt_id);`,
	// 3: full-text search over turns (FTS5, external content) and pins.
	`CREATE VIRTUAL TABLE turns_fts USING fts5 (text, content = 'turns', content_rowid = 'id');
INSERT INTO turns_fts (rowid, text) SELECT id, text FROM turns;
CREATE TRIGGER turns_fts_insert AFTER INSERT ON turns BEGIN
	INSERT INTO turns_fts (rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER turns_fts_delete AFTER DELETE ON turns BEGIN
	INSERT INTO turns_fts (turns_fts, rowid, text) VALUES ('delete', old.id, old.text);
END;
CREATE TRIGGER turns_fts_update AFTER UPDATE OF text ON turns BEGIN
	INSERT INTO turns_fts (turns_fts, rowid, text) VALUES ('delete', old.id, old.text);
	INSERT INTO turns_fts (rowid, text) VALUES (new.id, new.text);
END;
CREATE TABLE pins (
	brand TEXT PRIMARY KEY,
	provider_origin TEXT NOT NULL,
	interface_url TEXT NOT NULL,
	key_thumbprint TEXT NOT NULL,
	pinned_at TEXT NOT NULL
);`,
	// 4: a covering index for `pact receipts list`, so that listing reads
	// the listing columns only, never the JWS, key and claims.
	`CREATE INDEX receipts_listing ON receipts (ts_ns, id, verified, problems, brand, grant_id, user, scopes_used, actions, ts);
DROP INDEX receipts_by_ts;`,
	// 5: turns are indexed for search when a search comes (SearchTurns
	// catches up from meta "fts_upto"), not in the transaction that appends
	// them, so that an append costs the same however many turns there are.
	`DROP TRIGGER turns_fts_insert;
DROP TRIGGER turns_fts_delete;
DROP TRIGGER turns_fts_update;
INSERT OR REPLACE INTO meta (key, value) VALUES ('fts_upto', (SELECT coalesce(max(id), 0) FROM turns));
CREATE TRIGGER turns_fts_delete AFTER DELETE ON turns
WHEN old.id <= (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'fts_upto') BEGIN
	INSERT INTO turns_fts (turns_fts, rowid, text) VALUES ('delete', old.id, old.text);
END;
CREATE TRIGGER turns_fts_update AFTER UPDATE OF text ON turns
WHEN old.id <= (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'fts_upto') BEGIN
	INSERT INTO turns_fts (turns_fts, rowid, text) VALUES ('delete', old.id, old.text);
	INSERT INTO turns_fts (rowid, text) VALUES (new.id, new.text);
END;`,
	// 6: the card cache keeps the signature check done at fetch time
	// (A2A §8.4; JSON, empty for entries kept before: those are fetched
	// again).
	`ALTER TABLE cards ADD COLUMN signature TEXT NOT NULL DEFAULT '';`,
	// 7: a pin remembers the signing keys a rotation retired (space
	// separated RFC 7638 thumbprints), so that it never goes back to them.
	`ALTER TABLE pins ADD COLUMN retired_keys TEXT NOT NULL DEFAULT '';`,
	// 8: the chat keeps every word. A message is on record before it leaves
	// (sends: sending, then delivered or failed, with its messageId, PACT
	// §4.3); every non-text part of a turn (turn_parts), a file's bytes kept
	// once by their SHA-256 (blobs); the chat's draft and queue per Brand.
	`CREATE TABLE sends (
	message_id TEXT PRIMARY KEY,
	brand TEXT NOT NULL,
	interface_url TEXT NOT NULL,
	context_id TEXT NOT NULL,
	text TEXT NOT NULL,
	at TEXT NOT NULL,
	state TEXT NOT NULL,
	error TEXT NOT NULL DEFAULT ''
);
CREATE INDEX sends_by_brand ON sends (brand, state);
CREATE TABLE turn_parts (
	turn_id INTEGER NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
	seq INTEGER NOT NULL,
	kind TEXT NOT NULL,
	name TEXT NOT NULL DEFAULT '',
	media_type TEXT NOT NULL DEFAULT '',
	data TEXT NOT NULL DEFAULT '',
	url TEXT NOT NULL DEFAULT '',
	sha256 TEXT NOT NULL DEFAULT '',
	size INTEGER NOT NULL DEFAULT 0,
	note TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (turn_id, seq)
) WITHOUT ROWID;
CREATE TABLE blobs (
	sha256 TEXT PRIMARY KEY,
	data BLOB NOT NULL
) WITHOUT ROWID;
CREATE TABLE drafts (
	brand TEXT PRIMARY KEY,
	draft TEXT NOT NULL,
	queue TEXT NOT NULL DEFAULT '[]',
	at TEXT NOT NULL
);`,
	// 9: receipts that mean what they say (issue 20). A receipt remembers
	// the turns it came with (receipt_turns; replays counts the turns past
	// the first: a Brand returning the same receipt again), why it means
	// less than it seems (notes, a JSON array), and the Brand labels it is
	// listed under as columns (card_url, brand_name, once read from
	// expect), all in the covering listing index, so that a listing reads
	// the index alone.
	`ALTER TABLE receipts ADD COLUMN replays INTEGER NOT NULL DEFAULT 0;
ALTER TABLE receipts ADD COLUMN notes TEXT NOT NULL DEFAULT '[]';
ALTER TABLE receipts ADD COLUMN card_url TEXT NOT NULL DEFAULT '';
ALTER TABLE receipts ADD COLUMN brand_name TEXT NOT NULL DEFAULT '';
UPDATE receipts SET
	card_url = CASE WHEN json_valid(expect) THEN coalesce(json_extract(expect, '$.card'), '') ELSE '' END,
	brand_name = CASE WHEN json_valid(expect) THEN coalesce(json_extract(expect, '$.brandName'), '') ELSE '' END;
CREATE TABLE receipt_turns (
	receipt_id TEXT NOT NULL,
	turn TEXT NOT NULL,
	PRIMARY KEY (receipt_id, turn)
) WITHOUT ROWID;
INSERT OR IGNORE INTO receipt_turns (receipt_id, turn)
SELECT t.receipt_id, c.interface_url || ' ' || coalesce((SELECT u.message_id FROM turns u
	WHERE u.conversation_id = t.conversation_id AND u.role = 'user' AND u.id < t.id ORDER BY u.id DESC LIMIT 1), t.message_id)
FROM turns t JOIN conversations c ON c.id = t.conversation_id WHERE t.role = 'agent' AND t.receipt_id != '';
UPDATE receipts SET replays = (SELECT count(*) - 1 FROM receipt_turns WHERE receipt_id = receipts.id)
WHERE id IN (SELECT receipt_id FROM receipt_turns GROUP BY receipt_id HAVING count(*) > 1);
DROP INDEX receipts_listing;
CREATE INDEX receipts_listing ON receipts (ts_ns, id, verified, problems, brand, grant_id, user, scopes_used, actions, ts,
	card_url, brand_name, replays, notes);`,
	// 10: one card state (issue 20): a changed Agent Card once seen by any
	// command is remembered until the User accepts a card (SetPin), so
	// that every command stops before sending, whatever card it holds.
	`CREATE TABLE card_changes (
	brand TEXT PRIMARY KEY,
	pin TEXT NOT NULL,
	changes TEXT NOT NULL,
	seen_at TEXT NOT NULL
);`,
	// 11: search that finds words in scripts written without spaces (CJK,
	// Thai): the turns are indexed by trigrams (FTS5 trigram tokenizer,
	// case-insensitive substrings) instead of unicode61 words. The index is
	// rebuilt in place, by the next search (fts_upto back to 0; the
	// triggers of version 5 act only on turns already indexed).
	`DROP TABLE turns_fts;
CREATE VIRTUAL TABLE turns_fts USING fts5 (text, content = 'turns', content_rowid = 'id', tokenize = 'trigram');
UPDATE meta SET value = '0' WHERE key = 'fts_upto';`,
	// 12: many Users in one database (issue 28). Every table gets the id of
	// the User its rows belong to, first in its keys; the rows kept so far
	// are LocalUser's ('local'). The tables are rebuilt (SQLite cannot
	// change a key in place) with their ids kept, so turns, their parts
	// and the search index, which hang on a conversation, stay as they are.
	// The notes of the meta table move to their own table, and sealed
	// secrets get one. (Migrations run with foreign keys off, as a rebuild
	// requires; see migrateStep.)
	`CREATE TABLE conversations_v12 (
	id INTEGER PRIMARY KEY,
	user_id TEXT NOT NULL DEFAULT 'local',
	brand TEXT NOT NULL,
	brand_name TEXT NOT NULL DEFAULT '',
	interface_url TEXT NOT NULL,
	context_id TEXT NOT NULL,
	last_message_at TEXT NOT NULL,
	last_message_ns INTEGER NOT NULL,
	state TEXT NOT NULL DEFAULT 'open',
	UNIQUE (user_id, interface_url, context_id)
);
INSERT INTO conversations_v12 (id, brand, brand_name, interface_url, context_id, last_message_at, last_message_ns, state)
	SELECT id, brand, brand_name, interface_url, context_id, last_message_at, last_message_ns, state FROM conversations;
DROP TABLE conversations;
ALTER TABLE conversations_v12 RENAME TO conversations;
CREATE INDEX conversations_by_last ON conversations (user_id, last_message_ns);
CREATE INDEX conversations_by_context ON conversations (user_id, context_id);

CREATE TABLE current_conversations_v12 (
	user_id TEXT NOT NULL DEFAULT 'local',
	brand TEXT NOT NULL,
	conversation_id INTEGER NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
	PRIMARY KEY (user_id, brand)
) WITHOUT ROWID;
INSERT INTO current_conversations_v12 (brand, conversation_id) SELECT brand, conversation_id FROM current_conversations;
DROP TABLE current_conversations;
ALTER TABLE current_conversations_v12 RENAME TO current_conversations;

CREATE TABLE blobs_v12 (
	user_id TEXT NOT NULL DEFAULT 'local',
	sha256 TEXT NOT NULL,
	data BLOB NOT NULL,
	PRIMARY KEY (user_id, sha256)
) WITHOUT ROWID;
INSERT INTO blobs_v12 (sha256, data) SELECT sha256, data FROM blobs;
DROP TABLE blobs;
ALTER TABLE blobs_v12 RENAME TO blobs;

CREATE TABLE grants_v12 (
	user_id TEXT NOT NULL DEFAULT 'local',
	interface_url TEXT NOT NULL,
	brand TEXT NOT NULL,
	data TEXT NOT NULL,
	PRIMARY KEY (user_id, interface_url)
);
INSERT INTO grants_v12 (interface_url, brand, data) SELECT interface_url, brand, data FROM grants;
DROP TABLE grants;
ALTER TABLE grants_v12 RENAME TO grants;

CREATE TABLE cards_v12 (
	user_id TEXT NOT NULL DEFAULT 'local',
	url TEXT NOT NULL,
	final_url TEXT NOT NULL,
	body BLOB NOT NULL,
	expires_ns INTEGER NOT NULL,
	etag TEXT NOT NULL DEFAULT '',
	last_modified TEXT NOT NULL DEFAULT '',
	fetched_ns INTEGER NOT NULL,
	signature TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (user_id, url)
);
INSERT INTO cards_v12 (url, final_url, body, expires_ns, etag, last_modified, fetched_ns, signature)
	SELECT url, final_url, body, expires_ns, etag, last_modified, fetched_ns, signature FROM cards;
DROP TABLE cards;
ALTER TABLE cards_v12 RENAME TO cards;

CREATE TABLE receipts_v12 (
	user_id TEXT NOT NULL DEFAULT 'local',
	id TEXT NOT NULL,
	jws TEXT NOT NULL,
	claims TEXT NOT NULL DEFAULT '',
	jwk TEXT NOT NULL DEFAULT '',
	jwk_thumbprint TEXT NOT NULL DEFAULT '',
	expect TEXT NOT NULL DEFAULT '{}',
	verified INTEGER NOT NULL,
	problems TEXT NOT NULL DEFAULT '[]',
	verified_at TEXT NOT NULL DEFAULT '',
	brand TEXT NOT NULL DEFAULT '',
	grant_id TEXT NOT NULL DEFAULT '',
	user TEXT NOT NULL DEFAULT '',
	scopes_used TEXT NOT NULL DEFAULT '[]',
	actions TEXT NOT NULL DEFAULT '[]',
	ts TEXT NOT NULL DEFAULT '',
	ts_ns INTEGER,
	replays INTEGER NOT NULL DEFAULT 0,
	notes TEXT NOT NULL DEFAULT '[]',
	card_url TEXT NOT NULL DEFAULT '',
	brand_name TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (user_id, id)
);
INSERT INTO receipts_v12 (id, jws, claims, jwk, jwk_thumbprint, expect, verified, problems, verified_at, brand, grant_id, user,
		scopes_used, actions, ts, ts_ns, replays, notes, card_url, brand_name)
	SELECT id, jws, claims, jwk, jwk_thumbprint, expect, verified, problems, verified_at, brand, grant_id, user,
		scopes_used, actions, ts, ts_ns, replays, notes, card_url, brand_name FROM receipts;
CREATE TABLE receipt_brands_v12 (
	user_id TEXT NOT NULL DEFAULT 'local',
	brand TEXT NOT NULL,
	receipt_id TEXT NOT NULL,
	PRIMARY KEY (user_id, brand, receipt_id),
	FOREIGN KEY (user_id, receipt_id) REFERENCES receipts (user_id, id) ON DELETE CASCADE
) WITHOUT ROWID;
INSERT INTO receipt_brands_v12 (brand, receipt_id) SELECT brand, receipt_id FROM receipt_brands;
CREATE TABLE receipt_scopes_v12 (
	user_id TEXT NOT NULL DEFAULT 'local',
	scope TEXT NOT NULL,
	receipt_id TEXT NOT NULL,
	PRIMARY KEY (user_id, scope, receipt_id),
	FOREIGN KEY (user_id, receipt_id) REFERENCES receipts (user_id, id) ON DELETE CASCADE
) WITHOUT ROWID;
INSERT INTO receipt_scopes_v12 (scope, receipt_id) SELECT scope, receipt_id FROM receipt_scopes;
CREATE TABLE receipt_turns_v12 (
	user_id TEXT NOT NULL DEFAULT 'local',
	receipt_id TEXT NOT NULL,
	turn TEXT NOT NULL,
	PRIMARY KEY (user_id, receipt_id, turn)
) WITHOUT ROWID;
INSERT INTO receipt_turns_v12 (receipt_id, turn) SELECT receipt_id, turn FROM receipt_turns;
DROP TABLE receipt_brands;
DROP TABLE receipt_scopes;
DROP TABLE receipt_turns;
DROP TABLE receipts;
ALTER TABLE receipts_v12 RENAME TO receipts;
ALTER TABLE receipt_brands_v12 RENAME TO receipt_brands;
ALTER TABLE receipt_scopes_v12 RENAME TO receipt_scopes;
ALTER TABLE receipt_turns_v12 RENAME TO receipt_turns;
CREATE INDEX receipt_brands_by_receipt ON receipt_brands (user_id, receipt_id);
CREATE INDEX receipt_scopes_by_receipt ON receipt_scopes (user_id, receipt_id);
CREATE INDEX receipts_listing ON receipts (user_id, ts_ns, id, verified, problems, brand, grant_id, user, scopes_used, actions, ts,
	card_url, brand_name, replays, notes);

CREATE TABLE pins_v12 (
	user_id TEXT NOT NULL DEFAULT 'local',
	brand TEXT NOT NULL,
	provider_origin TEXT NOT NULL,
	interface_url TEXT NOT NULL,
	key_thumbprint TEXT NOT NULL,
	pinned_at TEXT NOT NULL,
	retired_keys TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (user_id, brand)
);
INSERT INTO pins_v12 (brand, provider_origin, interface_url, key_thumbprint, pinned_at, retired_keys)
	SELECT brand, provider_origin, interface_url, key_thumbprint, pinned_at, retired_keys FROM pins;
DROP TABLE pins;
ALTER TABLE pins_v12 RENAME TO pins;

CREATE TABLE card_changes_v12 (
	user_id TEXT NOT NULL DEFAULT 'local',
	brand TEXT NOT NULL,
	pin TEXT NOT NULL,
	changes TEXT NOT NULL,
	seen_at TEXT NOT NULL,
	PRIMARY KEY (user_id, brand)
);
INSERT INTO card_changes_v12 (brand, pin, changes, seen_at) SELECT brand, pin, changes, seen_at FROM card_changes;
DROP TABLE card_changes;
ALTER TABLE card_changes_v12 RENAME TO card_changes;

CREATE TABLE drafts_v12 (
	user_id TEXT NOT NULL DEFAULT 'local',
	brand TEXT NOT NULL,
	draft TEXT NOT NULL,
	queue TEXT NOT NULL DEFAULT '[]',
	at TEXT NOT NULL,
	PRIMARY KEY (user_id, brand)
);
INSERT INTO drafts_v12 (brand, draft, queue, at) SELECT brand, draft, queue, at FROM drafts;
DROP TABLE drafts;
ALTER TABLE drafts_v12 RENAME TO drafts;

CREATE TABLE sends_v12 (
	user_id TEXT NOT NULL DEFAULT 'local',
	message_id TEXT NOT NULL,
	brand TEXT NOT NULL,
	interface_url TEXT NOT NULL,
	context_id TEXT NOT NULL,
	text TEXT NOT NULL,
	at TEXT NOT NULL,
	state TEXT NOT NULL,
	error TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (user_id, message_id)
);
INSERT INTO sends_v12 (message_id, brand, interface_url, context_id, text, at, state, error)
	SELECT message_id, brand, interface_url, context_id, text, at, state, error FROM sends;
DROP TABLE sends;
ALTER TABLE sends_v12 RENAME TO sends;
CREATE INDEX sends_by_brand ON sends (user_id, brand, state);

CREATE TABLE notes (
	user_id TEXT NOT NULL DEFAULT 'local',
	key TEXT NOT NULL,
	value TEXT NOT NULL,
	PRIMARY KEY (user_id, key)
) WITHOUT ROWID;
INSERT INTO notes (key, value) SELECT substr(key, 6), value FROM meta WHERE key LIKE 'note:%';
DELETE FROM meta WHERE key LIKE 'note:%';

CREATE TABLE secrets (
	user_id TEXT NOT NULL,
	name TEXT NOT NULL,
	key_version TEXT NOT NULL,
	ciphertext BLOB NOT NULL,
	PRIMARY KEY (user_id, name)
) WITHOUT ROWID;`,
	// 13: the state of pact serve itself (issue 29; server.go): its Users,
	// their devices, one-time enrolment codes (hashes only), the device
	// tokens' ids already used, per-device rate-limit counters, and the
	// server's Provider registrations.
	`CREATE TABLE server_users (
	id TEXT PRIMARY KEY,
	name TEXT NOT NULL UNIQUE,
	created_ns BIGINT NOT NULL
);
CREATE TABLE server_devices (
	id TEXT PRIMARY KEY,
	user_id TEXT NOT NULL REFERENCES server_users (id) ON DELETE CASCADE,
	name TEXT NOT NULL,
	kid TEXT NOT NULL,
	jwk TEXT NOT NULL,
	created_ns BIGINT NOT NULL,
	last_seen_ns BIGINT,
	revoked_ns BIGINT
);
CREATE INDEX server_devices_by_user ON server_devices (user_id, created_ns);
CREATE TABLE server_enrolment_codes (
	hash TEXT PRIMARY KEY,
	user_id TEXT NOT NULL REFERENCES server_users (id) ON DELETE CASCADE,
	created_ns BIGINT NOT NULL,
	expires_ns BIGINT NOT NULL,
	used_ns BIGINT,
	created_by TEXT NOT NULL
);
CREATE TABLE server_device_jtis (
	device_id TEXT NOT NULL REFERENCES server_devices (id) ON DELETE CASCADE,
	jti TEXT NOT NULL,
	expires_ns BIGINT NOT NULL,
	PRIMARY KEY (device_id, jti)
);
CREATE INDEX server_device_jtis_by_expiry ON server_device_jtis (expires_ns);
CREATE TABLE server_rate_counts (
	device_id TEXT NOT NULL REFERENCES server_devices (id) ON DELETE CASCADE,
	window_ns BIGINT NOT NULL,
	count INTEGER NOT NULL,
	PRIMARY KEY (device_id, window_ns)
);
CREATE TABLE server_registrations (
	url TEXT PRIMARY KEY,
	audience TEXT NOT NULL,
	added_ns BIGINT NOT NULL
);`,
	// 14: leases of pact serve (issue 30; server.go): named locks that
	// expire, so that a replica's death frees what it held; and the values
	// its replicas must share (the first recorded wins).
	`CREATE TABLE server_leases (
	name TEXT PRIMARY KEY,
	holder TEXT NOT NULL,
	token BIGINT NOT NULL,
	acquired_ns BIGINT NOT NULL,
	expires_ns BIGINT NOT NULL
);
CREATE INDEX server_leases_by_expiry ON server_leases (expires_ns);
CREATE TABLE server_shared (
	key TEXT PRIMARY KEY,
	value TEXT NOT NULL,
	set_ns BIGINT NOT NULL
);`,
	// 15: the followups of issue 31. A receipt put back by `pact restore`
	// carries no verdict until pact checks it again (receipts.restored; the
	// listing index covers it). A Brand's reply is one per User message it
	// answers (turns.answers, the User's messageId, PACT §4.3), not one per
	// reply messageId: a Provider that reuses a reply id loses no reply.
	// The replies stored so far answer the User's turn just before them.
	`ALTER TABLE receipts ADD COLUMN restored INTEGER NOT NULL DEFAULT 0;
DROP INDEX receipts_listing;
CREATE INDEX receipts_listing ON receipts (user_id, ts_ns, id, verified, problems, brand, grant_id, user, scopes_used, actions, ts,
	card_url, brand_name, replays, notes, restored);
ALTER TABLE turns ADD COLUMN answers TEXT NOT NULL DEFAULT '';
UPDATE turns SET answers = p.prev_id FROM (
	SELECT id, role, lag(role) OVER w AS prev_role, lag(message_id) OVER w AS prev_id
	FROM turns WINDOW w AS (PARTITION BY conversation_id ORDER BY id)
) p WHERE p.id = turns.id AND p.role = 'agent' AND p.prev_role = 'user';
DROP INDEX turns_by_message;
CREATE UNIQUE INDEX turns_by_message ON turns (conversation_id, role, message_id) WHERE role != 'agent';
CREATE UNIQUE INDEX turns_by_answer ON turns (conversation_id, answers) WHERE role = 'agent' AND answers != '';`,
}

// SchemaVersion is the version this binary writes (len(Migrations)).
var SchemaVersion = len(Migrations)

// ErrNewerSchema is matched (errors.Is) by the refusal of a database that
// a newer pact migrated (NewerSchemaError), by either backend.
var ErrNewerSchema = errors.New("the database's schema is newer than this pact")

// NewerSchemaError is the refusal of a database whose schema version is
// newer than the binary's: it is not touched; the fix is a newer pact.
type NewerSchemaError struct {
	Version int // the database's schema version
	Known   int // the newest this binary knows
}

func (e *NewerSchemaError) Error() string {
	return fmt.Sprintf("the database has schema version %d, newer than this pact knows (%d): upgrade pact", e.Version, e.Known)
}

// Is makes errors.Is(err, ErrNewerSchema) true.
func (e *NewerSchemaError) Is(target error) bool { return target == ErrNewerSchema }

// migrate brings the database to version target in one transaction. A
// database newer than this binary is refused, not touched.
func migrate(ctx context.Context, c *sql.DB, target int) error {
	for {
		done, err := migrateStep(ctx, c, target)
		if err != nil || done {
			return err
		}
	}
}

// migrateStep applies the migrations to target under the write lock
// (BEGIN IMMEDIATE, so two processes opening a new database at once apply
// them once). done reports that the database is at target.
func migrateStep(ctx context.Context, c *sql.DB, target int) (done bool, err error) {
	var v int
	if err := c.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return false, fmt.Errorf("reading the schema version: %w", err)
	}
	if v > len(Migrations) {
		return false, &NewerSchemaError{Version: v, Known: len(Migrations)}
	}
	if v >= target {
		return true, nil
	}
	// One connection for the step, with foreign keys off: a step that
	// rebuilds a table (create, copy, drop, rename) must not have the drop
	// cascade to the rows that refer to it (SQLite's ALTER TABLE
	// procedure). The pragma cannot change inside a transaction.
	conn, err := c.Conn(ctx)
	if err != nil {
		return false, fmt.Errorf("migrating: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "PRAGMA foreign_keys = OFF"); err != nil {
		return false, fmt.Errorf("migrating: %w", err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "PRAGMA foreign_keys = ON")
	t, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("migrating: %w", err)
	}
	defer t.Rollback()
	if err := t.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return false, err
	}
	if v >= target {
		return true, nil
	}
	// Every step to target in this one transaction: a page that several
	// steps change is written to the WAL once (a new profile's first open
	// writes a small WAL), and the database is at its old version or at
	// target, never between. A large history takes a while (version 12
	// rebuilds the receipt archive: seconds for 100,000): say so after a
	// second.
	from := v
	if from > 0 {
		slow := time.AfterFunc(time.Second, func() {
			if p, _ := progress.Load().(func(string)); p != nil {
				p("updating this profile's history to this pact's schema (once; it may take a while)…")
			}
		})
		defer slow.Stop()
	}
	for ; v < target; v++ {
		if _, err := t.ExecContext(ctx, Migrations[v]); err != nil {
			return false, fmt.Errorf("migrating the schema from version %d to %d: %w", v, v+1, err)
		}
	}
	if _, err := t.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v)); err != nil {
		return false, err
	}
	if err := t.Commit(); err != nil {
		return false, fmt.Errorf("migrating the schema from version %d to %d: %w", from, v, err)
	}
	return true, nil
}
