// Package storetest is the conformance suite of the storage interface
// (store.Backend, store.Store): one exported function per behaviour the
// agent core relies on, each run against every backend by that backend's
// tests (Run). A backend that passes it can hold a User's state; one that
// fails any function cannot.
//
// What every backend must do: appending a turn writes the same few rows
// however long the conversation is; several processes write at once and
// lose nothing; two processes starting at once migrate once, and a newer
// schema is refused in one sentence; a send is on record before it leaves
// and idempotent by messageId (PACT §4.3); a receipt that came with an
// earlier turn is a replay (§5.6); one card state for every command; data
// parts keep their numbers exactly; search finds words, punctuation, the
// syntax of query languages as typed, and CJK; secrets are kept sealed,
// never as plaintext; no read of one User returns another User's rows; and,
// to hold a pact serve (store.ServerState), an enrolment code and a device
// token's jti are used once across handles, devices belong to their User,
// and a lease has one holder at a time across processes, expires, and is
// taken over once expired.
package storetest

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pact-cli/pact/store"
)

// Harness is what a backend's tests give the suite.
type Harness struct {
	// Name names the backend in messages ("sqlite", "postgres").
	Name string
	// Empty returns the address of a new, empty database for one test
	// (no schema yet), removed when the test ends.
	Empty func(t testing.TB) string
	// Migrated, when set, returns the address of a new database already
	// at this binary's schema (faster than Empty and a migration: a copy
	// of a template); the suite opens such a one for most tests.
	Migrated func(t testing.TB) string
	// Cleanup, when set, runs once after the tests (Main).
	Cleanup func()
	// Open opens the database at addr (migrating it on first use, like
	// every command). The suite closes it.
	Open func(ctx context.Context, addr string) (store.Backend, error)
	// CountRows runs fn and returns the rows it inserted, updated or
	// deleted in the database at addr, by table.
	CountRows func(t testing.TB, addr string, fn func()) map[string]int
	// SetSchemaAhead makes the (migrated) database at addr claim a schema
	// version newer than this binary's.
	SetSchemaAhead func(t testing.TB, addr string)
	// Contains reports whether the bytes of needle are anywhere in the
	// database at addr, in any table (files, rows).
	Contains func(t testing.TB, addr string, needle string) bool
}

// Behaviours lists the suite's functions by name, in order.
var Behaviours = []struct {
	Name string
	Func func(*testing.T, Harness)
}{
	{"AppendTurnsWritesTheSameRowsAtAnyLength", AppendTurnsWritesTheSameRowsAtAnyLength},
	{"AppendTurnsIdempotentOrderedAndCurrent", AppendTurnsIdempotentOrderedAndCurrent},
	{"RepliesKeptOncePerUserMessageWhateverTheirID", RepliesKeptOncePerUserMessageWhateverTheirID},
	{"ConversationsFoundByContextPrefix", ConversationsFoundByContextPrefix},
	{"PartsKeptAndFileBytesOnce", PartsKeptAndFileBytesOnce},
	{"DataPartsKeepTheirNumbersExactly", DataPartsKeepTheirNumbersExactly},
	{"SendOnRecordBeforeItLeavesIdempotentByMessageID", SendOnRecordBeforeItLeavesIdempotentByMessageID},
	{"SendAbandonedOnlyWhileSending", SendAbandonedOnlyWhileSending},
	{"DraftsKeptAndCleared", DraftsKeptAndCleared},
	{"ReceiptsFilteredVerifiedNeverDowngraded", ReceiptsFilteredVerifiedNeverDowngraded},
	{"ReceiptReplayDetected", ReceiptReplayDetected},
	{"GrantsKeptReplacedDeleted", GrantsKeptReplacedDeleted},
	{"SecretsKeptSealedNeverPlain", SecretsKeptSealedNeverPlain},
	{"TokensSealedNeverPlaintext", TokensSealedNeverPlaintext},
	{"CardsAndNotesKeptReplacedForgotten", CardsAndNotesKeptReplacedForgotten},
	{"OneCardState", OneCardState},
	{"SearchWordsPunctuationSyntaxAndCJK", SearchWordsPunctuationSyntaxAndCJK},
	{"UsersNeverSeeEachOthersRows", UsersNeverSeeEachOthersRows},
	{"ConcurrentWritersInSeveralProcessesLoseNothing", ConcurrentWritersInSeveralProcessesLoseNothing},
	{"TwoProcessesStartingAtOnceMigrateOnce", TwoProcessesStartingAtOnceMigrateOnce},
	{"NewerSchemaRefusedInOneSentence", NewerSchemaRefusedInOneSentence},
	// The state of pact serve itself (server.go).
	{"ServerEnrolmentCodeUsedOnceEvenWhenRaced", ServerEnrolmentCodeUsedOnceEvenWhenRaced},
	{"ServerTokenIDsOnceAndRateWindows", ServerTokenIDsOnceAndRateWindows},
	{"ServerDevicesBelongToTheirUser", ServerDevicesBelongToTheirUser},
	{"ServerRegistrationsKeptReplacedRemoved", ServerRegistrationsKeptReplacedRemoved},
	{"ServerLeaseAcquireRenewReleaseSteal", ServerLeaseAcquireRenewReleaseSteal},
	{"ServerLeaseOneHolderAcrossProcesses", ServerLeaseOneHolderAcrossProcesses},
	{"ServerSharedValueFirstWins", ServerSharedValueFirstWins},
}

// Run runs every behaviour against h, each a parallel subtest named
// after its function.
func Run(t *testing.T, h Harness) {
	for _, b := range Behaviours {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			b.Func(t, h)
		})
	}
}

// The Users of the suite: every test writes as Alice and tries reads as Bob.
const (
	Alice = "user-alice"
	Bob   = "user-bob"
)

// open opens a new, migrated database for one test; it is closed when the
// test ends.
func open(t testing.TB, h Harness) (store.Backend, string) {
	t.Helper()
	var addr string
	if h.Migrated != nil {
		addr = h.Migrated(t)
	} else {
		addr = h.Empty(t)
	}
	b := reopen(t, h, addr)
	return b, addr
}

func reopen(t testing.TB, h Harness, addr string) store.Backend {
	t.Helper()
	b, err := h.Open(context.Background(), addr)
	if err != nil {
		t.Fatalf("%s: opening %s: %v", h.Name, addr, err)
	}
	t.Cleanup(func() { b.Close() })
	if _, err := b.Check(context.Background()); err != nil {
		t.Fatalf("%s: %v", h.Name, err)
	}
	return b
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

var t0 = time.Date(2026, 9, 30, 12, 0, 0, 0, time.UTC)

const (
	card  = "https://brand.example/.well-known/agent-card.json"
	card2 = "https://other.example/.well-known/agent-card.json"
	iface = "https://provider.example/a2a/b1"
)

func conv(ctxID string, n int) store.Conversation {
	return store.Conversation{Brand: card, BrandName: "Brand", InterfaceURL: iface, ContextID: ctxID,
		LastMessageAt: t0.Add(time.Duration(n) * time.Second)}
}

// turns returns n turns from index from, user and agent in turn.
func turns(from, n int) []store.Turn {
	out := make([]store.Turn, 0, n)
	for i := from; i < from+n; i++ {
		role := "user"
		if i%2 == 1 {
			role = "agent"
		}
		out = append(out, store.Turn{MessageID: fmt.Sprintf("m-%06d", i), Role: role,
			Text: fmt.Sprintf("turn %d about order 1234", i), At: t0.Add(time.Duration(i) * time.Second)})
	}
	return out
}

func describe(rows map[string]int) string {
	var parts []string
	for k, v := range rows {
		parts = append(parts, fmt.Sprintf("%s=%d", k, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

// AppendTurnsWritesTheSameRowsAtAnyLength: appending a turn pair writes
// the same rows, table by table, whether the conversation has 12 turns or
// 2,002, and only a handful (counted by the backend, not timed): an append
// that rewrites or renumbers earlier turns fails here. `make bench` times
// it.
func AppendTurnsWritesTheSameRowsAtAnyLength(t *testing.T, h Harness) {
	ctx := context.Background()
	b, addr := open(t, h)
	db := b.ForUser(Alice)
	appendPair := func(ctxID string, have int) map[string]int {
		return h.CountRows(t, addr, func() {
			must(t, db.AppendTurns(ctx, conv(ctxID, have+2), turns(have, 2)...))
		})
	}
	for _, c := range []struct {
		ctxID string
		n     int
	}{{"small", 10}, {"large", 2000}} {
		must(t, db.AppendTurns(ctx, conv(c.ctxID, c.n), turns(0, c.n)...))
	}
	// The Brand's current conversation is "large" now; make each append
	// below switch it the same way, so the comparison is like for like.
	appendPair("small", 10)
	appendPair("large", 2000)
	small := appendPair("small", 12)
	large := appendPair("large", 2002)
	if small["turns"] != 2 {
		t.Fatalf("%s: appending 2 turns wrote %d rows of turns (%s); want 2", h.Name, small["turns"], describe(small))
	}
	total := 0
	for _, v := range large {
		total += v
	}
	if describe(small) != describe(large) || total > 16 {
		t.Fatalf("%s: appending 2 turns wrote\n  %s to a conversation of 12 turns,\n  %s to one of 2,002;\nwant the same few rows whatever the conversation's length",
			h.Name, describe(small), describe(large))
	}
	if got, err := db.Turns(ctx, iface, "large"); err != nil || len(got) != 2004 {
		t.Fatalf("turns stored: %d, %v", len(got), err)
	}
}

// AppendTurnsIdempotentOrderedAndCurrent: turns come back in the order
// appended with their times; a retried send adds nothing; the last
// conversation appended to is the Brand's current one until forgotten;
// a closed one is listed as such and not current.
func AppendTurnsIdempotentOrderedAndCurrent(t *testing.T, h Harness) {
	ctx := context.Background()
	b, _ := open(t, h)
	db := b.ForUser(Alice)
	c := store.Conversation{Brand: card, InterfaceURL: iface, ContextID: "c1", LastMessageAt: time.Unix(10, 0).UTC()}
	v := true
	for i := 0; i < 3; i++ {
		u := store.Turn{MessageID: fmt.Sprintf("u%d", i), Role: "user", Text: fmt.Sprintf("question %d", i), At: time.Unix(int64(i), 0).UTC()}
		a := store.Turn{MessageID: fmt.Sprintf("a%d", i), Role: "agent", Text: "answer", At: time.Unix(int64(i), 5).UTC(), ReceiptID: "r", ReceiptVerified: &v}
		must(t, db.AppendTurns(ctx, c, u, a))
		must(t, db.AppendTurns(ctx, c, u)) // a retried send
	}
	got, err := db.Turns(ctx, iface, "c1")
	if err != nil || len(got) != 6 || got[0].MessageID != "u0" || got[5].MessageID != "a2" || got[5].ReceiptVerified == nil || !*got[5].ReceiptVerified || got[0].ReceiptVerified != nil {
		t.Fatalf("turns = %+v %v", got, err)
	}
	if !got[1].At.Equal(time.Unix(0, 5)) || got[1].ReceiptID != "r" {
		t.Fatalf("turn not kept as given: %+v", got[1])
	}
	cur, ok, err := db.CurrentConversation(ctx, card)
	if err != nil || !ok || cur.ContextID != "c1" || cur.State != "open" {
		t.Fatalf("current: %+v %v %v", cur, ok, err)
	}
	must(t, db.AppendTurns(ctx, store.Conversation{Brand: card, InterfaceURL: iface, ContextID: "c2", LastMessageAt: time.Unix(20, 0).UTC()}))
	if cur, _, _ := db.CurrentConversation(ctx, card); cur.ContextID != "c2" {
		t.Fatalf("the conversation appended to last is not current: %+v", cur)
	}
	must(t, db.SetConversationState(ctx, iface, "c2", "closed"))
	list, err := db.Conversations(ctx)
	if err != nil || len(list) != 2 || list[0].ContextID != "c2" || list[0].State != "closed" || list[0].Current || list[1].Current {
		t.Fatalf("list = %+v %v", list, err)
	}
	must(t, db.ForgetCurrent(ctx, card))
	if _, ok, _ := db.CurrentConversation(ctx, card); ok {
		t.Fatal("still current after ForgetCurrent")
	}
	if f, ok, err := db.FindConversation(ctx, iface, "c1"); err != nil || !ok || f.Brand != card || !f.LastMessageAt.Equal(time.Unix(10, 0)) {
		t.Fatalf("FindConversation: %+v %v %v", f, ok, err)
	}
	if _, ok, _ := db.FindConversation(ctx, iface, "c3"); ok {
		t.Fatal("found a conversation never stored")
	}
	if got, _ := db.Turns(ctx, iface, "c3"); len(got) != 0 {
		t.Fatalf("turns of an unknown conversation: %+v", got)
	}
}

// RepliesKeptOncePerUserMessageWhateverTheirID (issue 31, review): a
// Brand's reply is de-duplicated by the User's message it answers
// (Turn.Answers, the User's messageId that a retried send keeps, PACT
// §4.3), never by the reply's own messageId: a Provider that gives two
// replies one messageId loses neither, and a send retried under its
// messageId, answered under a new reply id, adds nothing. A reply that
// names no User message is always added.
func RepliesKeptOncePerUserMessageWhateverTheirID(t *testing.T, h Harness) {
	ctx := context.Background()
	b, _ := open(t, h)
	db := b.ForUser(Alice)
	c := conv("c1", 0)
	at := time.Unix(1, 0).UTC()
	user := func(id, text string) store.Turn { return store.Turn{MessageID: id, Role: "user", Text: text, At: at} }
	reply := func(id, answers, text string) store.Turn {
		return store.Turn{MessageID: id, Role: "agent", Text: text, At: at, Answers: answers}
	}
	must(t, db.AppendTurns(ctx, c, user("u1", "where is A-1?"), reply("reply", "u1", "A-1 ships today")))
	must(t, db.AppendTurns(ctx, c, user("u2", "and A-2?"), reply("reply", "u2", "A-2 ships tomorrow")))
	// u2 sent again (its answer was lost on the way): the Provider answers
	// it under another reply id; nothing is added.
	must(t, db.AppendTurns(ctx, c, user("u2", "and A-2?"), reply("reply-again", "u2", "A-2 ships tomorrow, as said")))
	// Two replies to one message in one call: the first is kept.
	must(t, db.AppendTurns(ctx, c, user("u3", "and A-3?"), reply("r3", "u3", "A-3 ships today"), reply("r3b", "u3", "A-3 again")))
	// Replies that name no User message (an earlier release's) are all kept.
	must(t, db.AppendTurns(ctx, c, reply("old", "", "one"), reply("old", "", "two")))
	got, err := db.Turns(ctx, iface, "c1")
	must(t, err)
	var texts []string
	for _, tu := range got {
		texts = append(texts, tu.Role+":"+tu.Text)
	}
	want := "user:where is A-1? agent:A-1 ships today user:and A-2? agent:A-2 ships tomorrow user:and A-3? agent:A-3 ships today agent:one agent:two"
	if strings.Join(texts, " ") != want {
		t.Fatalf("turns stored:\n%s\nwant\n%s", strings.Join(texts, " "), want)
	}
	if got[1].Answers != "u1" || got[3].Answers != "u2" || got[3].MessageID != "reply" || got[0].Answers != "" {
		t.Fatalf("what each reply answers is not kept: %+v", got)
	}
}

// ConversationsFoundByContextPrefix: a contextId or its start finds the
// conversations, the exact match first, then the most recent.
func ConversationsFoundByContextPrefix(t *testing.T, h Harness) {
	ctx := context.Background()
	b, _ := open(t, h)
	db := b.ForUser(Alice)
	for i, id := range []string{"abc", "abcdef", "abd", "x%_y"} {
		must(t, db.AppendTurns(ctx, conv(id, i)))
	}
	ids := func(q string) string {
		cs, err := db.FindContext(ctx, q)
		must(t, err)
		var out []string
		for _, c := range cs {
			out = append(out, c.ContextID)
		}
		return strings.Join(out, " ")
	}
	for q, want := range map[string]string{"abc": "abc abcdef", "ab": "abd abcdef abc", "abcd": "abcdef", "x%": "x%_y", "%": "", "_": "", "zzz": ""} {
		if got := ids(q); got != want {
			t.Errorf("FindContext(%q) = %q, want %q", q, got, want)
		}
	}
}
