package postgres_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pact-cli/pact/store"
	"github.com/pact-cli/pact/store/postgres"
	"github.com/pact-cli/pact/store/storetest"
)

// The PostgreSQL tests run against the server PACT_TEST_POSTGRES_URL
// names (storetest.RequirePostgres); each test gets a database of its own,
// dropped when it ends.
func requirePostgres(t testing.TB) string { return storetest.RequirePostgres(t) }

var admin struct {
	once sync.Once
	pool *pgxpool.Pool
	err  error
	n    atomic.Int64
}

func adminPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	u := requirePostgres(t)
	admin.once.Do(func() { admin.pool, admin.err = pgxpool.New(context.Background(), u) })
	if admin.err != nil {
		t.Fatal(admin.err)
	}
	return admin.pool
}

// withDatabase is the server's URL naming database name.
func withDatabase(t testing.TB, name string) string {
	u, err := url.Parse(requirePostgres(t))
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// emptyDatabase creates a new database (no schema) for one test and
// drops it when the test ends.
func emptyDatabase(t testing.TB) string { return newDatabase(t, "") }

// template is a database migrated once a process, copied for each test
// that needs a migrated one (CREATE DATABASE … TEMPLATE).
var template struct {
	once sync.Once
	name string
	err  error
}

func migratedDatabase(t testing.TB) string {
	t.Helper()
	pool := adminPool(t)
	template.once.Do(func() {
		name := fmt.Sprintf("pact_template_%d", os.Getpid())
		if _, template.err = pool.Exec(context.Background(), "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); template.err != nil {
			return
		}
		template.name = name
		db, err := postgres.Open(context.Background(), withDatabase(t, name))
		if err != nil {
			template.err = err
			return
		}
		db.Close() // a template has no connections
	})
	if template.err != nil {
		t.Fatal(template.err)
	}
	return newDatabase(t, template.name)
}

// newDatabase creates a database for one test, a copy of template (""
// for an empty one), and drops it when the test ends.
func newDatabase(t testing.TB, template string) string {
	t.Helper()
	pool := adminPool(t)
	name := fmt.Sprintf("pact_test_%d_%d", os.Getpid(), admin.n.Add(1))
	q := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize()
	if template != "" {
		q += " TEMPLATE " + pgx.Identifier{template}.Sanitize()
	}
	if _, err := pool.Exec(context.Background(), q); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		pool.Exec(context.Background(), "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	})
	return withDatabase(t, name)
}

// connect opens a connection to the database at addr for the harness.
func connect(t testing.TB, addr string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// countTriggers installs, once, a trigger on every table of the database
// that counts the rows each statement inserts, updates or deletes.
const countTriggers = `CREATE TABLE IF NOT EXISTS storetest_rows (tbl text PRIMARY KEY, n bigint NOT NULL);
CREATE OR REPLACE FUNCTION storetest_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO storetest_rows VALUES (TG_TABLE_NAME, 1) ON CONFLICT (tbl) DO UPDATE SET n = storetest_rows.n + 1;
	RETURN NULL;
END $$;
DO $$
DECLARE t text;
BEGIN
	FOR t IN SELECT tablename FROM pg_tables WHERE schemaname = current_schema()
		AND tablename NOT IN ('storetest_rows', 'pact_schema_migrations') LOOP
		EXECUTE format('CREATE OR REPLACE TRIGGER storetest_count AFTER INSERT OR UPDATE OR DELETE ON %I FOR EACH ROW EXECUTE FUNCTION storetest_count()', t);
	END LOOP;
END $$;
DELETE FROM storetest_rows;`

var harness = storetest.Harness{
	Name:     "postgres",
	Empty:    emptyDatabase,
	Migrated: migratedDatabase,
	Cleanup: func() {
		if template.name != "" && admin.pool != nil {
			admin.pool.Exec(context.Background(), "DROP DATABASE IF EXISTS "+pgx.Identifier{template.name}.Sanitize()+" WITH (FORCE)")
		}
	},
	Open: func(ctx context.Context, addr string) (store.Backend, error) {
		db, err := postgres.Open(ctx, addr)
		if err != nil {
			return nil, err
		}
		return db, nil
	},
	CountRows: func(t testing.TB, addr string, fn func()) map[string]int {
		c := connect(t, addr)
		ctx := context.Background()
		if _, err := c.Exec(ctx, countTriggers); err != nil {
			t.Fatal(err)
		}
		fn()
		rows, _ := c.Query(ctx, `SELECT tbl, n FROM storetest_rows`)
		got := map[string]int{}
		for rows.Next() {
			var tbl string
			var n int
			if err := rows.Scan(&tbl, &n); err != nil {
				t.Fatal(err)
			}
			got[tbl] = n
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return got
	},
	SetSchemaAhead: func(t testing.TB, addr string) {
		c := connect(t, addr)
		if _, err := c.Exec(context.Background(), `INSERT INTO pact_schema_migrations (version) VALUES ($1)`, postgres.SchemaVersion+1); err != nil {
			t.Fatal(err)
		}
	},
	Contains: func(t testing.TB, addr, needle string) bool {
		c := connect(t, addr)
		ctx := context.Background()
		rows, err := c.Query(ctx, `SELECT table_name, column_name, data_type FROM information_schema.columns
			WHERE table_schema = current_schema() AND data_type IN ('text', 'bytea')`)
		if err != nil {
			t.Fatal(err)
		}
		type col struct{ table, name, typ string }
		var cols []col
		for rows.Next() {
			var c col
			if err := rows.Scan(&c.table, &c.name, &c.typ); err != nil {
				t.Fatal(err)
			}
			cols = append(cols, c)
		}
		for _, cl := range cols {
			cond := `strpos(%s, $1) > 0`
			if cl.typ == "bytea" {
				cond = `position(convert_to($1, 'UTF8') in %s) > 0`
			}
			var found bool
			q := fmt.Sprintf(`SELECT EXISTS (SELECT 1 FROM %s WHERE `+cond+`)`, pgx.Identifier{cl.table}.Sanitize(), pgx.Identifier{cl.name}.Sanitize())
			if err := c.QueryRow(ctx, q, needle).Scan(&found); err != nil {
				t.Fatal(err)
			}
			if found {
				return true
			}
		}
		return false
	},
}

func TestMain(m *testing.M) { storetest.Main(m, harness) }

// TestIssue28_ConformancePostgres runs the storage interface's
// conformance suite against PostgreSQL.
func TestIssue28_ConformancePostgres(t *testing.T) {
	requirePostgres(t)
	storetest.Run(t, harness)
}

// The URL's password never reaches a message.
func TestIssue28_PostgresURLRedacted(t *testing.T) {
	for _, u := range []string{"postgres://pact:s3cret@db.example:5432/pact?sslmode=verify-full", "postgres://pact@db.example/pact?password=s3cret",
		"postgres://pact:s3%zzcret@db.example/pact", "postgres://pact:s3cret@[::1:5432/pact"} {
		db := postgres.New(u)
		if w := db.Where(); strings.Contains(w, "s3") || strings.Contains(w, "cret") || !strings.Contains(w, "db.example") && !strings.Contains(w, "::1") {
			t.Errorf("Where() = %q", w)
		}
	}
	// What a User may give by mistake instead of a URL: a keyword/value
	// string, a URL without its scheme, another scheme.
	for _, v := range []string{"host=db.example port=5432 user=pact password=s3cret dbname=pact", "host=db.example password='s3 cret' dbname=pact",
		"pact:s3cret@db.example:5432/pact", "mysql://pact:s3cret@db.example/pact", "PASSWORD = s3cret host=db.example"} {
		if r := postgres.Redact(v); strings.Contains(r, "s3") || strings.Contains(r, "cret") || !strings.Contains(r, "db.example") {
			t.Errorf("Redact(%q) = %q", v, r)
		}
	}
}

// Issue 31, review (replies lost from history), as on SQLite: the replies
// stored before version 3 each answer the User's turn just before them,
// so a send retried under a User messageId stored before the upgrade adds
// no second answer, and a reply reusing an earlier reply's messageId is
// kept.
func TestIssue31_RepliesStoredBeforeTheUpgradeAnswerTheTurnBeforeThem(t *testing.T) {
	ctx := context.Background()
	addr := emptyDatabase(t)
	c := connect(t, addr)
	if _, err := c.Exec(ctx, `CREATE TABLE pact_schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		t.Fatal(err)
	}
	for v := 0; v < 2; v++ {
		if _, err := c.Exec(ctx, postgres.Migrations[v]); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Exec(ctx, `INSERT INTO pact_schema_migrations (version) VALUES ($1)`, v+1); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Exec(ctx, `INSERT INTO conversations (user_id, brand, interface_url, context_id, last_message_at, last_message_ns) VALUES ('alice', 'card', 'iface', 'c1', '2026-01-01T00:00:00Z', 1);
		INSERT INTO turns (user_id, conversation_id, message_id, role, text, at) SELECT 'alice', id, m, r, x, '2026-01-01T00:00:00Z'
		FROM conversations, (VALUES (1, 'u1', 'user', 'where is A-1?'), (2, 'r1', 'agent', 'A-1 ships today'), (3, 'r1b', 'agent', 'and a note'),
			(4, 'u2', 'user', 'and A-2?'), (5, 'r2', 'agent', 'A-2 ships tomorrow')) AS v (n, m, r, x) ORDER BY n`); err != nil {
		t.Fatal(err)
	}
	db, err := postgres.Open(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	u := db.ForUser("alice")
	conv := store.Conversation{Brand: "card", InterfaceURL: "iface", ContextID: "c1"}
	for _, turns := range [][]store.Turn{
		{{MessageID: "u2", Role: "user", Text: "and A-2?"}, {MessageID: "r2-again", Role: "agent", Text: "A-2 ships tomorrow (again)", Answers: "u2"}},
		{{MessageID: "u3", Role: "user", Text: "and A-3?"}, {MessageID: "r1", Role: "agent", Text: "A-3 ships today", Answers: "u3"}},
	} {
		if err := u.AppendTurns(ctx, conv, turns...); err != nil {
			t.Fatal(err)
		}
	}
	turns, err := u.Turns(ctx, "iface", "c1")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tu := range turns {
		got = append(got, tu.MessageID+"<"+tu.Answers)
	}
	if want := "u1< r1<u1 r1b< u2< r2<u2 u3< r1<u3"; strings.Join(got, " ") != want {
		t.Fatalf("turns after the upgrade: %s\nwant %s", strings.Join(got, " "), want)
	}
}
