package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ImportedDir is the folder (in the profile's data folder) where the files
// of the previous release are moved once their content is in the database.
const ImportedDir = "imported-before-db"

// oldLayout are the profile data entries the previous release wrote, which
// the first open imports.
var oldLayout = []string{"conversations", "receipts", "grants.json", "grants.json.lock"}

const metaImported = "imported_files"

// importFiles imports, once, the state the previous release kept in files
// under dataDir (conversations/index.json and one JSON file per
// conversation, receipts/verified|rejected/ID.json, grants.json): all of
// it in one transaction, then the files are moved into dataDir/ImportedDir
// (kept, never deleted). Until the transaction commits the files are left
// untouched, so a failed or interrupted import loses nothing and runs
// again next time. A file that cannot be read is left out and named in the
// import report (meta "import_report"); it stays in ImportedDir.
//
// The Brand pins an earlier build kept for every profile in pinsFile
// ({data}/pins.json) are copied in too; that file is left in place (the
// other profiles import it as well).
func (db *DB) importFiles(ctx context.Context, c *sql.DB, dataDir, pinsFile string) error {
	var done string
	err := c.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, metaImported).Scan(&done)
	if err == nil {
		return db.importLate(ctx, c, dataDir)
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return db.wrap(err)
	}
	var st oldState
	present := false
	for _, name := range oldLayout {
		if _, err := os.Lstat(filepath.Join(dataDir, name)); err == nil {
			present = true
		}
	}
	if present {
		// A large state takes a while: say so after a second.
		t := time.AfterFunc(time.Second, func() {
			if p, _ := progress.Load().(func(string)); p != nil {
				p("importing this profile's history from the previous release (once; it may take a while)…")
			}
		})
		defer t.Stop()
		st.read(dataDir)
	}
	st.readPins(pinsFile)
	err = db.txOn(ctx, c, func(tx *sql.Tx) error {
		if tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, metaImported).Scan(&done) == nil {
			return nil // another process imported meanwhile
		}
		if err := st.write(ctx, tx); err != nil {
			return err
		}
		report, _ := json.Marshal(map[string]any{
			"conversations": len(st.convs), "turns": st.turns, "receipts": st.receipts,
			"grants": len(st.grants), "pins": len(st.pins), "problems": st.problems,
		})
		if _, err := tx.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES (?, ?), ('import_report', ?)`,
			metaImported, fmtTime(time.Now().UTC()), string(report)); err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("importing the files of the previous release from %s (they are unchanged): %w", dataDir, err)
	}
	if present {
		moveAside(dataDir)
		db.markHistory(ctx, c)
	}
	if len(st.problems) > 0 {
		addNotice(fmt.Sprintf("importing this profile's files from the previous release, %s could not be read and %s left out: %s; the files are kept in %s",
			plural(len(st.problems), "file", "files"), map[bool]string{true: "was", false: "were"}[len(st.problems) == 1], summarize(st.problems), filepath.Join(dataDir, ImportedDir)))
	}
	return nil
}

// importLate imports files of the previous layout written after the
// import (an earlier pact still running, or a downgrade and back): each
// item is keyed by its id (conversations by interface URL and context id,
// turns by message id, receipts by the hash of their JWS, grants by
// interface URL), so importing again adds only what is new. Which
// conversation is current is left as this database has it. A crash after
// the first import's commit may also have left the files: they are moved
// aside the same way.
func (db *DB) importLate(ctx context.Context, c *sql.DB, dataDir string) error {
	present := false
	for _, name := range oldLayout {
		if _, err := os.Lstat(filepath.Join(dataDir, name)); err == nil {
			present = true
		}
	}
	if !present {
		return nil
	}
	var st oldState
	st.read(dataDir)
	st.current = nil
	if err := db.txOn(ctx, c, func(tx *sql.Tx) error { return st.write(ctx, tx) }); err != nil {
		return fmt.Errorf("importing files an earlier pact wrote in %s after the import (they are unchanged): %w", dataDir, err)
	}
	moveAside(dataDir)
	if len(st.convs) > 0 || st.receipts > 0 || len(st.grants) > 0 || len(st.problems) > 0 {
		msg := fmt.Sprintf("imported files an earlier pact wrote after this profile moved to its database: %s (%s), %s, %s",
			plural(len(st.convs), "conversation", "conversations"), plural(st.turns, "turn", "turns"),
			plural(st.receipts, "receipt", "receipts"), plural(len(st.grants), "grant", "grants"))
		if len(st.problems) > 0 {
			msg += fmt.Sprintf("; %s could not be read: %s", plural(len(st.problems), "file", "files"), summarize(st.problems))
		}
		addNotice(msg + "; the files are kept in " + filepath.Join(dataDir, ImportedDir))
	}
	return nil
}

var progress atomic.Value // func(string)

// SetProgress sets what is told when opening a database takes long (a
// large import): one line for the User, on stderr.
func SetProgress(fn func(msg string)) { progress.Store(fn) }

var (
	noticesMu sync.Mutex
	notices   []string
)

func addNotice(s string) {
	noticesMu.Lock()
	notices = append(notices, s)
	noticesMu.Unlock()
}

// TakeNotices returns, once, what opening databases in this process found
// to tell the User (files imported late, files the import could not
// read), and forgets it.
func TakeNotices() []string {
	noticesMu.Lock()
	defer noticesMu.Unlock()
	n := notices
	notices = nil
	return n
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// summarize lists the first few problems.
func summarize(problems []string) string {
	const max = 3
	if len(problems) <= max {
		return strings.Join(problems, "; ")
	}
	return strings.Join(problems[:max], "; ") + fmt.Sprintf("; and %d more", len(problems)-max)
}

// ImportReport returns what the one-time import of the previous release's
// files found (JSON: conversations, turns, receipts, grants, problems), or
// "" when there was nothing to import.
func (db *DB) ImportReport(ctx context.Context) (string, error) {
	c, err := db.conn(ctx)
	if err != nil {
		return "", err
	}
	var s string
	err = c.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'import_report'`).Scan(&s)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return s, err
}

// ImportProblems returns the files the one-time import could not read
// (the import report's problems), none when there are none or the report
// cannot be read.
func (db *DB) ImportProblems(ctx context.Context) []string {
	s, err := db.ImportReport(ctx)
	if err != nil || s == "" {
		return nil
	}
	var rep struct {
		Problems []string `json:"problems"`
	}
	json.Unmarshal([]byte(s), &rep)
	return rep.Problems
}

// moveAside moves the old layout's entries into dataDir/ImportedDir. A
// name already there gets a numbered sibling; failures leave the file in
// place (the import is recorded, so it is not imported twice).
func moveAside(dataDir string) {
	dst := filepath.Join(dataDir, ImportedDir)
	for _, name := range oldLayout {
		src := filepath.Join(dataDir, name)
		if _, err := os.Lstat(src); err != nil {
			continue
		}
		if os.MkdirAll(dst, 0o700) != nil {
			return
		}
		target := filepath.Join(dst, name)
		for i := 2; ; i++ {
			if _, err := os.Lstat(target); errors.Is(err, fs.ErrNotExist) {
				break
			}
			target = filepath.Join(dst, fmt.Sprintf("%s.%d", name, i))
		}
		os.Rename(src, target)
	}
}

// The previous release's file formats.
type oldSummary struct {
	Brand         string    `json:"brand"`
	BrandName     string    `json:"brandName"`
	InterfaceURL  string    `json:"interfaceUrl"`
	ContextID     string    `json:"contextId"`
	LastMessageAt time.Time `json:"lastMessageAt"`
	State         string    `json:"state"`
}

type oldTurn struct {
	MessageID       string    `json:"messageId"`
	Role            string    `json:"role"`
	Text            string    `json:"text"`
	At              time.Time `json:"at"`
	TaskState       string    `json:"taskState"`
	ReceiptID       string    `json:"receiptId"`
	ReceiptVerified *bool     `json:"receiptVerified"`
}

type oldRecord struct {
	oldSummary
	Turns []oldTurn `json:"turns"`
}

type oldEntry struct {
	ID            string          `json:"id"`
	JWS           string          `json:"jws"`
	Claims        json.RawMessage `json:"claims"`
	JWK           json.RawMessage `json:"jwk"`
	JWKThumbprint string          `json:"jwkThumbprint"`
	Expect        json.RawMessage `json:"expect"`
	Verified      bool            `json:"verified"`
	Problems      []string        `json:"problems"`
	VerifiedAt    time.Time       `json:"verifiedAt"`
}

type oldState struct {
	convs    []oldRecord
	current  map[string]string // card URL → key (interface URL + "\x00" + contextId)
	turns    int
	receipts int    // how many were written
	dataDir  string // where the receipts are read from (eachReceipt)
	grants   []struct {
		iface, brand string
		data         []byte
	}
	pins     []Pin
	problems []string
}

// readPins reads the pins file an earlier build kept ({"pins": {brand: Pin}}).
func (st *oldState) readPins(path string) {
	var d struct {
		Pins map[string]Pin `json:"pins"`
	}
	if err := readJSONFile(path, &d); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			st.problem("pins.json: %v", err)
		}
		return
	}
	brands := make([]string, 0, len(d.Pins))
	for b := range d.Pins {
		brands = append(brands, b)
	}
	sort.Strings(brands)
	for _, b := range brands {
		st.pins = append(st.pins, d.Pins[b])
	}
}

func readJSONFile(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

func (st *oldState) problem(format string, a ...any) {
	st.problems = append(st.problems, fmt.Sprintf(format, a...))
}

func (st *oldState) read(dataDir string) {
	// Conversations: each record file holds its summary and turns; the
	// index adds which one is current and summaries without a file.
	convDir := filepath.Join(dataDir, "conversations")
	var idx struct {
		Current       map[string]string     `json:"current"`
		Conversations map[string]oldSummary `json:"conversations"`
	}
	if err := readJSONFile(filepath.Join(convDir, "index.json"), &idx); err != nil && !errors.Is(err, fs.ErrNotExist) {
		st.problem("conversations/index.json: %v", err)
	}
	keyOf := func(s oldSummary) string { return s.InterfaceURL + "\x00" + s.ContextID }
	byOldKey := map[string]string{}
	seen := map[string]int{}
	des, _ := os.ReadDir(convDir)
	for _, de := range des {
		n := de.Name()
		if !strings.HasSuffix(n, ".json") || n == "index.json" || strings.HasPrefix(n, ".") {
			continue
		}
		var rec oldRecord
		if err := readJSONFile(filepath.Join(convDir, n), &rec); err != nil {
			st.problem("conversations/%s: %v", n, err)
			continue
		}
		if rec.ContextID == "" || rec.InterfaceURL == "" {
			st.problem("conversations/%s: no contextId or interface URL", n)
			continue
		}
		oldKey := strings.TrimSuffix(n, ".json")
		if s, ok := idx.Conversations[oldKey]; ok && s.ContextID == rec.ContextID {
			rec.oldSummary = s // the index has the latest state (closed)
		}
		byOldKey[oldKey] = keyOf(rec.oldSummary)
		seen[keyOf(rec.oldSummary)] = len(st.convs)
		st.convs = append(st.convs, rec)
		st.turns += len(rec.Turns)
	}
	oldKeys := make([]string, 0, len(idx.Conversations))
	for k := range idx.Conversations {
		oldKeys = append(oldKeys, k)
	}
	sort.Strings(oldKeys)
	for _, k := range oldKeys {
		s := idx.Conversations[k]
		if s.ContextID == "" || s.InterfaceURL == "" {
			continue
		}
		if _, ok := seen[keyOf(s)]; !ok {
			byOldKey[k] = keyOf(s)
			seen[keyOf(s)] = len(st.convs)
			st.convs = append(st.convs, oldRecord{oldSummary: s})
		}
	}
	st.current = map[string]string{}
	for brand, k := range idx.Current {
		if key, ok := byOldKey[k]; ok {
			st.current[brand] = key
		}
	}

	// Receipts are read while they are written (writeReceipts): a large
	// archive is never held in memory.
	st.dataDir = dataDir

	// Grants' metadata: kept as the documents they are.
	var gf struct {
		Grants map[string]json.RawMessage `json:"grants"`
	}
	if err := readJSONFile(filepath.Join(dataDir, "grants.json"), &gf); err != nil && !errors.Is(err, fs.ErrNotExist) {
		st.problem("grants.json: %v", err)
	}
	ifaces := make([]string, 0, len(gf.Grants))
	for k := range gf.Grants {
		ifaces = append(ifaces, k)
	}
	sort.Strings(ifaces)
	for _, iface := range ifaces {
		var g struct {
			Brand string `json:"brand"`
		}
		json.Unmarshal(gf.Grants[iface], &g)
		st.grants = append(st.grants, struct {
			iface, brand string
			data         []byte
		}{iface, g.Brand, gf.Grants[iface]})
	}
}

// eachReceipt reads the old archive, verified/ then rejected/ (a receipt
// in both is verified), and calls fn with each receipt, one at a time.
func (st *oldState) eachReceipt(fn func(Receipt) error) error {
	dataDir := st.dataDir
	kept := map[string]bool{}
	for _, area := range []string{"verified", "rejected"} {
		dir := filepath.Join(dataDir, "receipts", area)
		des, _ := os.ReadDir(dir)
		for _, de := range des {
			n := de.Name()
			if strings.HasPrefix(n, ".") || !strings.HasSuffix(n, ".json") || !de.Type().IsRegular() {
				continue
			}
			var e oldEntry
			if err := readJSONFile(filepath.Join(dir, n), &e); err != nil {
				st.problem("receipts/%s/%s: %v", area, n, err)
				continue
			}
			if e.JWS == "" {
				st.problem("receipts/%s/%s: no jws", area, n)
				continue
			}
			sum := sha256.Sum256([]byte(e.JWS))
			id := hex.EncodeToString(sum[:])
			if kept[id] {
				continue
			}
			kept[id] = true
			r := Receipt{ID: id, JWS: e.JWS, Claims: e.Claims, JWK: e.JWK, JWKThumbprint: e.JWKThumbprint,
				Expect: e.Expect, Problems: e.Problems, VerifiedAt: e.VerifiedAt}
			r.Verified = area == "verified" && e.Verified && e.ID == id
			if area == "verified" && e.ID != id {
				r.Problems = append(r.Problems, "the archive file named it "+e.ID+", not the hash of its JWS")
			}
			if r.Verified {
				if p, err := jwsPayload(e.JWS); err != nil || !sameJSON(p, e.Claims) {
					r.Verified = false
					r.Problems = append(r.Problems, "the claims in the archive file differ from the signed payload (edited after archiving)")
				} else {
					r.Claims = p
				}
			}
			if !r.Verified && len(r.Problems) == 0 {
				r.Problems = []string{"not verified"}
			}
			var ex struct{ Brand, Card, BrandName string }
			json.Unmarshal(e.Expect, &ex)
			r.SetListing(r.Claims, ex.Brand, ex.Card)
			r.CardURL, r.BrandName = ex.Card, ex.BrandName
			st.receipts++
			if err := fn(r); err != nil {
				return err
			}
		}
	}

	return nil
}

func (st *oldState) write(ctx context.Context, tx *sql.Tx) error {
	ids := map[string]int64{}
	for _, rec := range st.convs {
		s := rec.oldSummary
		if s.State == "" {
			s.State = "open"
		}
		var id int64
		err := tx.QueryRowContext(ctx, `INSERT INTO conversations (brand, brand_name, interface_url, context_id, last_message_at, last_message_ns, state)
			VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (user_id, interface_url, context_id) DO UPDATE SET state = excluded.state,
				last_message_at = CASE WHEN excluded.last_message_ns > last_message_ns THEN excluded.last_message_at ELSE last_message_at END,
				last_message_ns = max(last_message_ns, excluded.last_message_ns) RETURNING id`,
			s.Brand, s.BrandName, s.InterfaceURL, s.ContextID, fmtTime(s.LastMessageAt), s.LastMessageAt.UnixNano(), s.State).Scan(&id)
		if err != nil {
			return err
		}
		ids[s.InterfaceURL+"\x00"+s.ContextID] = id
		for i, t := range rec.Turns {
			var rv any
			if t.ReceiptVerified != nil {
				rv = *t.ReceiptVerified
			}
			// A reply answers the User's turn just before it (as migration
			// 15 reads the turns stored before it).
			answers := ""
			if t.Role == "agent" && i > 0 && rec.Turns[i-1].Role == "user" {
				answers = rec.Turns[i-1].MessageID
			}
			if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO turns (conversation_id, message_id, role, text, at, task_state, receipt_id, receipt_verified, answers)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, id, t.MessageID, t.Role, t.Text, fmtTime(t.At), t.TaskState, t.ReceiptID, rv, answers); err != nil {
				return err
			}
		}
	}
	for brand, key := range st.current {
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO current_conversations (brand, conversation_id) VALUES (?, ?)`, brand, ids[key]); err != nil {
			return err
		}
	}
	if st.dataDir != "" {
		w, err := newReceiptWriter(ctx, tx, LocalUser)
		if err != nil {
			return err
		}
		defer w.close()
		st.receipts = 0
		if err := st.eachReceipt(func(r Receipt) error { return w.put(ctx, r) }); err != nil {
			return err
		}
	}
	for _, p := range st.pins {
		if p.Brand == "" {
			continue
		}
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO pins (brand, provider_origin, interface_url, key_thumbprint, pinned_at) VALUES (?, ?, ?, ?, ?)`,
			p.Brand, p.ProviderOrigin, p.InterfaceURL, p.KeyThumbprint, fmtTime(p.PinnedAt)); err != nil {
			return err
		}
	}
	for _, g := range st.grants {
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO grants (interface_url, brand, data) VALUES (?, ?, ?)`, g.iface, g.brand, string(g.data)); err != nil {
			return err
		}
	}
	return nil
}

// SetListing fills r's listing columns (Brand, GrantID, User, ScopesUsed,
// Actions, TS, Brands, Scopes) from claims, a receipt's JSON claims (PACT
// §5.6); extraBrands (the expected brand, the card URL) are added to
// Brands. Claims that do not parse leave the columns empty.
func (r *Receipt) SetListing(claims []byte, extraBrands ...string) {
	var c struct {
		GrantID    string          `json:"grantId"`
		User       string          `json:"user"`
		Brand      string          `json:"brand"`
		ScopesUsed json.RawMessage `json:"scopesUsed"`
		Actions    json.RawMessage `json:"actions"`
		TS         string          `json:"ts"`
	}
	json.Unmarshal(claims, &c)
	r.Brand, r.GrantID, r.User, r.TS = c.Brand, c.GrantID, c.User, c.TS
	var scopes []string
	if json.Unmarshal(c.ScopesUsed, &scopes) == nil && scopes != nil {
		r.ScopesUsed = compactJSON(c.ScopesUsed)
	} else {
		r.ScopesUsed = []byte("[]")
	}
	var actions []json.RawMessage
	if json.Unmarshal(c.Actions, &actions) == nil && actions != nil {
		r.Actions = compactJSON(c.Actions)
	} else {
		r.Actions = []byte("[]")
	}
	r.Scopes = scopes
	r.Brands = append([]string{c.Brand}, extraBrands...)
}

func compactJSON(b []byte) []byte {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return b
	}
	return buf.Bytes()
}

func jwsPayload(compact string) ([]byte, error) {
	parts := strings.Split(compact, ".")
	if len(parts) != 3 {
		return nil, errors.New("not a compact JWS")
	}
	return base64.RawURLEncoding.DecodeString(parts[1])
}

func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
