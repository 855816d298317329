package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"

	"github.com/pact-cli/pact/store" // and its SQLite driver, as an attacker's tool would use
)

// tamperDB runs SQL on a database file as an attacker's tool would,
// SQLite alone, and leaves it a single file.
func tamperDB(t *testing.T, file string, stmts ...string) {
	t.Helper()
	c, err := sql.Open("sqlite", file)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, s := range stmts {
		if _, err := c.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// loggedIn is a profile logged in to p with one delegated send done (a
// verified receipt, a pin).
func loggedIn(t *testing.T, p *trustProvider) *env {
	e := trustEnv(t, p)
	e.must("login", p.CardURL(), "--scope", "orders:read", "--no-browser", "--json")
	var sent struct {
		Receipt struct{ Verified bool } `json:"receipt"`
	}
	r := e.must("send", p.CardURL(), "show my orders", "--json")
	if json.Unmarshal([]byte(r.stdout), &sent) != nil || !sent.Receipt.Verified {
		t.Fatalf("the first delegated send: %s", r.stdout)
	}
	return e
}

// Issue 31 item 6, as an attacker would: a backup file given a trigger
// that marks every archived receipt verified and one that rewrites pins to
// "ATTACKER" is restored with `pact restore`. The triggers stay behind
// (named), and a receipt pact rejects afterwards is listed rejected.
func TestIssue31_6_RestoredTriggersDoNotRewritePactsVerdicts(t *testing.T) {
	t.Parallel()
	p := newTrustProvider(t)
	e := loggedIn(t, p)
	backup := filepath.Join(t.TempDir(), "backup.db")
	e.must("backup", backup)
	tamperDB(t, backup,
		`CREATE TRIGGER evil_receipt AFTER INSERT ON receipts BEGIN
			UPDATE receipts SET verified = 1, problems = '[]',
				jwk = (SELECT jwk FROM receipts WHERE verified = 1 AND id != new.id LIMIT 1),
				jwk_thumbprint = (SELECT jwk_thumbprint FROM receipts WHERE verified = 1 AND id != new.id LIMIT 1)
			WHERE id = new.id; END`,
		`CREATE TRIGGER evil_pin AFTER UPDATE ON pins BEGIN UPDATE pins SET key_thumbprint = 'ATTACKER' WHERE brand = new.brand; END`,
		`CREATE VIEW evil_view AS SELECT 1`)
	restored := e.must("restore", backup)
	// A receipt that fails verification (its ts is before the grant).
	p.mu.Lock()
	p.ReceiptTS = "2001-01-01T00:00:00Z"
	p.mu.Unlock()
	var sent struct {
		Receipt struct {
			ID       string `json:"id"`
			Verified bool   `json:"verified"`
		} `json:"receipt"`
	}
	r := e.must("send", p.CardURL(), "refund order A-1", "--json")
	if json.Unmarshal([]byte(r.stdout), &sent) != nil || sent.Receipt.ID == "" || sent.Receipt.Verified {
		t.Fatalf("the send with a receipt dated before the grant: %s", r.stdout)
	}
	r = e.must("receipts", "list", "--json")
	var list []struct {
		ID       string `json:"id"`
		Verified bool   `json:"verified"`
	}
	json.Unmarshal([]byte(r.stdout), &list)
	for _, it := range list {
		if it.ID == sent.Receipt.ID && it.Verified {
			t.Fatalf("the rejected receipt %s is listed verified after the restore", it.ID)
		}
	}
	e.must("card", p.CardURL(), "--trust")
	if r := e.run("card", p.CardURL(), "--json"); strings.Contains(r.stdout, "ATTACKER") {
		t.Fatalf("the pin was rewritten: %s", r.stdout)
	}
	for _, want := range []string{"left out: trigger evil_receipt, which pact does not make", "left out: trigger evil_pin", "left out: view evil_view"} {
		if !strings.Contains(restored.stderr, want) {
			t.Errorf("pact restore does not say %q:\n%s", want, restored.stderr)
		}
	}
}

// Issue 31 item 6: a grant whose jwks_uri was moved to another origin
// (in a backup, or in the database itself) is not used to verify
// receipts: a receipt signed by a stranger's key never verifies. pact
// restore leaves the grant out and says so; in the live database it stops
// the send before anything is sent, as login would have.
func TestIssue31_6_GrantWithAForeignJWKSURIIsNotUsed(t *testing.T) {
	t.Parallel()
	p := newTrustProvider(t)
	e := loggedIn(t, p)
	stranger, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	keys := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &stranger.PublicKey, KeyID: "as-1", Algorithm: "ES256", Use: "sig"}}})
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	}))
	defer keys.Close()
	foreign := fmt.Sprintf(`UPDATE grants SET data = json_set(data, '$.jwksUri', '%s/jwks.json')`, keys.URL)
	backup := filepath.Join(t.TempDir(), "backup.db")
	e.must("backup", backup)
	tamperDB(t, backup, foreign)
	// From now on the Provider's receipts are signed by the stranger.
	p.mu.Lock()
	p.key = stranger
	p.mu.Unlock()

	restored := e.must("restore", backup)
	r := e.run("send", p.CardURL(), "show my orders", "--json")
	if strings.Contains(r.stdout, `"verified": true`) {
		t.Fatalf("a receipt signed by a stranger verified after the restore:\n%s\n%s", r.stdout, r.stderr)
	}
	if !strings.Contains(restored.stderr, "left out: the grant for "+p.Iface()) || !strings.Contains(restored.stderr, "log in again") {
		t.Fatalf("pact restore does not say it left the grant out:\n%s", restored.stderr)
	}

	// The same grant edited in the live database: refused before sending.
	p2 := newTrustProvider(t)
	e2 := loggedIn(t, p2)
	tamperDB(t, filepath.Join(e2.home, "data", "profiles", "default", store.DBFileName), foreign)
	p2.mu.Lock()
	p2.key = stranger
	p2.mu.Unlock()
	r = e2.run("send", p2.CardURL(), "show my orders", "--json")
	if r.code == 0 || !strings.Contains(r.stdout+r.stderr, "jwks_uri") || strings.Contains(r.stdout, `"verified": true`) {
		t.Fatalf("a send under a grant whose jwks_uri is on another origin: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	// The remedy the refusal names works.
	e2.must("logout", p2.CardURL())
}
