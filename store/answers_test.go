package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Issue 31, review (replies lost from history): the replies stored before
// version 15 each answer the User's turn just before them, so that a
// Provider reusing a reply's messageId loses no later reply, and a send
// retried under a User messageId stored before the upgrade still adds no
// second answer. A reply that follows another reply answers nothing
// known, and is kept.
func TestIssue31_RepliesStoredBeforeTheUpgradeAnswerTheTurnBeforeThem(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), DBFileName)
	c, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		t.Fatal(err)
	}
	if err := migrate(ctx, c, 14); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO conversations (id, brand, interface_url, context_id, last_message_at, last_message_ns) VALUES (1, 'card', 'iface', 'c1', '2026-01-01T00:00:00Z', 1)`,
		`INSERT INTO turns (conversation_id, message_id, role, text, at) VALUES
			(1, 'u1', 'user', 'where is A-1?', '2026-01-01T00:00:00Z'),
			(1, 'r1', 'agent', 'A-1 ships today', '2026-01-01T00:00:01Z'),
			(1, 'r1b', 'agent', 'and a note', '2026-01-01T00:00:02Z'),
			(1, 'u2', 'user', 'and A-2?', '2026-01-01T00:00:03Z'),
			(1, 'r2', 'agent', 'A-2 ships tomorrow', '2026-01-01T00:00:04Z')`,
	} {
		if _, err := c.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conv := Conversation{Brand: "card", InterfaceURL: "iface", ContextID: "c1", LastMessageAt: time.Now()}
	// u2 sent again: answered under a new reply id, it adds nothing.
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(local(db).AppendTurns(ctx, conv, Turn{MessageID: "u2", Role: "user", Text: "and A-2?"},
		Turn{MessageID: "r2-again", Role: "agent", Text: "A-2 ships tomorrow (again)", Answers: "u2"}))
	// u3 answered under r1, a reply id the Provider used before: kept.
	must(local(db).AppendTurns(ctx, conv, Turn{MessageID: "u3", Role: "user", Text: "and A-3?"},
		Turn{MessageID: "r1", Role: "agent", Text: "A-3 ships today", Answers: "u3"}))
	turns, err := local(db).Turns(ctx, "iface", "c1")
	must(err)
	var got []string
	for _, tu := range turns {
		got = append(got, tu.MessageID+"<"+tu.Answers)
	}
	if want := "u1< r1<u1 r1b< u2< r2<u2 u3< r1<u3"; strings.Join(got, " ") != want {
		t.Fatalf("turns after the upgrade: %s\nwant %s", strings.Join(got, " "), want)
	}
}
