package postgres

// Migrations are the schema's versions, oldest first: Migrations[i] takes
// a database from version i to i+1 (the versions applied are rows of
// pact_schema_migrations). They are compiled into the binary; a released step
// is never edited, a change is a new step at the end. The tables are
// those of the SQLite store (package store), every one keyed by the User
// first; text that is compared or ordered is COLLATE "C" (bytes, as
// SQLite compares them), whatever the database's locale.
var Migrations = []string{
	// 1: every table of a User's state (the SQLite store's version 12).
	// Turns carry their User too: their text is indexed by User and
	// trigrams (btree_gin, pg_trgm), so that a search reads one User's
	// matches only, in any script.
	`CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE EXTENSION IF NOT EXISTS btree_gin;
CREATE TABLE conversations (
	id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	user_id text COLLATE "C" NOT NULL,
	brand text COLLATE "C" NOT NULL,
	brand_name text NOT NULL DEFAULT '',
	interface_url text COLLATE "C" NOT NULL,
	context_id text COLLATE "C" NOT NULL,
	last_message_at text NOT NULL,
	last_message_ns bigint NOT NULL,
	state text NOT NULL DEFAULT 'open',
	UNIQUE (user_id, interface_url, context_id)
);
CREATE INDEX conversations_by_last ON conversations (user_id, last_message_ns);
CREATE INDEX conversations_by_context ON conversations (user_id, context_id);
CREATE TABLE current_conversations (
	user_id text COLLATE "C" NOT NULL,
	brand text COLLATE "C" NOT NULL,
	conversation_id bigint NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
	PRIMARY KEY (user_id, brand)
);
CREATE INDEX current_conversations_by_conversation ON current_conversations (conversation_id);
CREATE TABLE turns (
	id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	user_id text COLLATE "C" NOT NULL,
	conversation_id bigint NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
	message_id text COLLATE "C" NOT NULL,
	role text NOT NULL,
	text text NOT NULL,
	at text NOT NULL,
	task_state text NOT NULL DEFAULT '',
	receipt_id text NOT NULL DEFAULT '',
	receipt_verified boolean,
	UNIQUE (conversation_id, role, message_id)
);
CREATE INDEX turns_by_conversation ON turns (conversation_id, id);
CREATE INDEX turns_text ON turns USING gin (user_id, text gin_trgm_ops);
CREATE TABLE turn_parts (
	turn_id bigint NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
	seq integer NOT NULL,
	kind text NOT NULL,
	name text NOT NULL DEFAULT '',
	media_type text NOT NULL DEFAULT '',
	data text NOT NULL DEFAULT '',
	url text NOT NULL DEFAULT '',
	sha256 text NOT NULL DEFAULT '',
	size bigint NOT NULL DEFAULT 0,
	note text NOT NULL DEFAULT '',
	PRIMARY KEY (turn_id, seq)
);
CREATE TABLE blobs (
	user_id text COLLATE "C" NOT NULL,
	sha256 text COLLATE "C" NOT NULL,
	data bytea NOT NULL,
	PRIMARY KEY (user_id, sha256)
);
CREATE TABLE sends (
	user_id text COLLATE "C" NOT NULL,
	message_id text COLLATE "C" NOT NULL,
	brand text COLLATE "C" NOT NULL,
	interface_url text NOT NULL,
	context_id text NOT NULL,
	text text NOT NULL,
	at text COLLATE "C" NOT NULL,
	state text NOT NULL,
	error text NOT NULL DEFAULT '',
	PRIMARY KEY (user_id, message_id)
);
CREATE INDEX sends_by_brand ON sends (user_id, brand, state);
CREATE TABLE drafts (
	user_id text COLLATE "C" NOT NULL,
	brand text COLLATE "C" NOT NULL,
	draft text NOT NULL,
	queue text NOT NULL DEFAULT '[]',
	at text NOT NULL,
	PRIMARY KEY (user_id, brand)
);
CREATE TABLE receipts (
	user_id text COLLATE "C" NOT NULL,
	id text COLLATE "C" NOT NULL,
	jws text NOT NULL,
	claims text NOT NULL DEFAULT '',
	jwk text NOT NULL DEFAULT '',
	jwk_thumbprint text NOT NULL DEFAULT '',
	expect text NOT NULL DEFAULT '{}',
	verified boolean NOT NULL,
	problems text NOT NULL DEFAULT '[]',
	verified_at text NOT NULL DEFAULT '',
	brand text NOT NULL DEFAULT '',
	grant_id text NOT NULL DEFAULT '',
	claims_user text NOT NULL DEFAULT '',
	scopes_used text NOT NULL DEFAULT '[]',
	actions text NOT NULL DEFAULT '[]',
	ts text NOT NULL DEFAULT '',
	ts_ns bigint,
	replays integer NOT NULL DEFAULT 0,
	notes text NOT NULL DEFAULT '[]',
	card_url text NOT NULL DEFAULT '',
	brand_name text NOT NULL DEFAULT '',
	PRIMARY KEY (user_id, id)
);
CREATE INDEX receipts_listing ON receipts (user_id, ts_ns NULLS FIRST, id) INCLUDE (verified, problems, brand, grant_id, claims_user,
	scopes_used, actions, ts, card_url, brand_name, replays, notes);
CREATE TABLE receipt_brands (
	user_id text COLLATE "C" NOT NULL,
	brand text COLLATE "C" NOT NULL,
	receipt_id text COLLATE "C" NOT NULL,
	PRIMARY KEY (user_id, brand, receipt_id),
	FOREIGN KEY (user_id, receipt_id) REFERENCES receipts (user_id, id) ON DELETE CASCADE
);
CREATE INDEX receipt_brands_by_receipt ON receipt_brands (user_id, receipt_id);
CREATE TABLE receipt_scopes (
	user_id text COLLATE "C" NOT NULL,
	scope text COLLATE "C" NOT NULL,
	receipt_id text COLLATE "C" NOT NULL,
	PRIMARY KEY (user_id, scope, receipt_id),
	FOREIGN KEY (user_id, receipt_id) REFERENCES receipts (user_id, id) ON DELETE CASCADE
);
CREATE INDEX receipt_scopes_by_receipt ON receipt_scopes (user_id, receipt_id);
CREATE TABLE receipt_turns (
	user_id text COLLATE "C" NOT NULL,
	receipt_id text COLLATE "C" NOT NULL,
	turn text COLLATE "C" NOT NULL,
	PRIMARY KEY (user_id, receipt_id, turn)
);
CREATE TABLE grants (
	user_id text COLLATE "C" NOT NULL,
	interface_url text COLLATE "C" NOT NULL,
	brand text COLLATE "C" NOT NULL,
	data text NOT NULL,
	PRIMARY KEY (user_id, interface_url)
);
CREATE TABLE secrets (
	user_id text COLLATE "C" NOT NULL,
	name text COLLATE "C" NOT NULL,
	key_version text NOT NULL,
	ciphertext bytea NOT NULL,
	PRIMARY KEY (user_id, name)
);
CREATE TABLE cards (
	user_id text COLLATE "C" NOT NULL,
	url text COLLATE "C" NOT NULL,
	final_url text NOT NULL,
	body bytea NOT NULL,
	expires_ns bigint NOT NULL,
	etag text NOT NULL DEFAULT '',
	last_modified text NOT NULL DEFAULT '',
	fetched_ns bigint NOT NULL,
	signature text NOT NULL DEFAULT '',
	PRIMARY KEY (user_id, url)
);
CREATE TABLE notes (
	user_id text COLLATE "C" NOT NULL,
	key text COLLATE "C" NOT NULL,
	value text NOT NULL,
	PRIMARY KEY (user_id, key)
);
CREATE TABLE pins (
	user_id text COLLATE "C" NOT NULL,
	brand text COLLATE "C" NOT NULL,
	provider_origin text NOT NULL,
	interface_url text NOT NULL,
	key_thumbprint text NOT NULL,
	retired_keys text NOT NULL DEFAULT '',
	pinned_at text NOT NULL,
	PRIMARY KEY (user_id, brand)
);
CREATE TABLE card_changes (
	user_id text COLLATE "C" NOT NULL,
	brand text COLLATE "C" NOT NULL,
	pin text NOT NULL,
	changes text NOT NULL,
	seen_at text NOT NULL,
	PRIMARY KEY (user_id, brand)
);`,
	// 2: the state of pact serve itself (issues 29 and 30; server.go):
	// its Users, their devices, one-time enrolment codes (hashes only),
	// the device tokens' ids already used, per-device rate-limit
	// counters, its Provider registrations (the SQLite store's version
	// 13), leases and the values replicas must share (its version 14). Times are integer nanoseconds,
	// as there.
	`CREATE TABLE server_users (
	id text COLLATE "C" PRIMARY KEY,
	name text COLLATE "C" NOT NULL UNIQUE,
	created_ns bigint NOT NULL
);
CREATE TABLE server_devices (
	id text COLLATE "C" PRIMARY KEY,
	user_id text COLLATE "C" NOT NULL REFERENCES server_users (id) ON DELETE CASCADE,
	name text NOT NULL,
	kid text NOT NULL,
	jwk text NOT NULL,
	created_ns bigint NOT NULL,
	last_seen_ns bigint,
	revoked_ns bigint
);
CREATE INDEX server_devices_by_user ON server_devices (user_id, created_ns);
CREATE TABLE server_enrolment_codes (
	hash text COLLATE "C" PRIMARY KEY,
	user_id text COLLATE "C" NOT NULL REFERENCES server_users (id) ON DELETE CASCADE,
	created_ns bigint NOT NULL,
	expires_ns bigint NOT NULL,
	used_ns bigint,
	created_by text NOT NULL
);
CREATE INDEX server_enrolment_codes_by_user ON server_enrolment_codes (user_id);
CREATE TABLE server_device_jtis (
	device_id text COLLATE "C" NOT NULL REFERENCES server_devices (id) ON DELETE CASCADE,
	jti text COLLATE "C" NOT NULL,
	expires_ns bigint NOT NULL,
	PRIMARY KEY (device_id, jti)
);
CREATE INDEX server_device_jtis_by_expiry ON server_device_jtis (expires_ns);
CREATE TABLE server_rate_counts (
	device_id text COLLATE "C" NOT NULL REFERENCES server_devices (id) ON DELETE CASCADE,
	window_ns bigint NOT NULL,
	count integer NOT NULL,
	PRIMARY KEY (device_id, window_ns)
);
CREATE INDEX server_rate_counts_by_window ON server_rate_counts (window_ns);
CREATE TABLE server_registrations (
	url text COLLATE "C" PRIMARY KEY,
	audience text NOT NULL,
	added_ns bigint NOT NULL
);
CREATE TABLE server_leases (
	name text COLLATE "C" PRIMARY KEY,
	holder text COLLATE "C" NOT NULL,
	token bigint NOT NULL,
	acquired_ns bigint NOT NULL,
	expires_ns bigint NOT NULL
);
CREATE INDEX server_leases_by_expiry ON server_leases (expires_ns);
CREATE TABLE server_shared (
	key text COLLATE "C" PRIMARY KEY,
	value text NOT NULL,
	set_ns bigint NOT NULL
);`,
	// 3: a Brand's reply is one per User message it answers (turns.answers,
	// the User's messageId, PACT §4.3), not one per reply messageId: a
	// Provider that reuses a reply id loses no reply (the SQLite store's
	// version 15). The replies stored so far answer the User's turn just
	// before them.
	`ALTER TABLE turns ADD COLUMN answers text COLLATE "C" NOT NULL DEFAULT '';
UPDATE turns SET answers = p.prev_id FROM (
	SELECT id, role, lag(role) OVER w AS prev_role, lag(message_id) OVER w AS prev_id
	FROM turns WINDOW w AS (PARTITION BY conversation_id ORDER BY id)
) p WHERE p.id = turns.id AND p.role = 'agent' AND p.prev_role = 'user';
ALTER TABLE turns DROP CONSTRAINT turns_conversation_id_role_message_id_key;
CREATE UNIQUE INDEX turns_by_message ON turns (conversation_id, role, message_id) WHERE role <> 'agent';
CREATE UNIQUE INDEX turns_by_answer ON turns (conversation_id, answers) WHERE role = 'agent' AND answers <> '';`,
}

// SchemaVersion is the version this binary writes (len(Migrations)).
var SchemaVersion = len(Migrations)
