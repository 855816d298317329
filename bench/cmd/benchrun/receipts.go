package main

import (
	"bufio"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/pact-cli/pact/store"
)

// problemRows is the rest of row 8 (issue 20): `pact receipts list --json`
// over 100,000 receipts every one of which is kept with a problem (imported
// from a bundle whose Brands could not be reached), side by side with a
// baseline: the same listing columns read with plain database/sql and
// written with encoding/json, in process.
func problemRows(tmp, pact string) ([]row, error) {
	const n = 100_000
	home := filepath.Join(tmp, "home-receipts-problems")
	if err := seedReceipts(home, n, true); err != nil {
		return nil, err
	}
	env := append(os.Environ(), "PACT_HOME="+home, "PACT_KEYRING=file", "NO_COLOR=1")
	t, err := timedCPU(env, pact, "receipts", "list", "--json")
	if err != nil {
		return nil, err
	}
	sec, kb, out := t.wall, t.kb, t.out
	var items []json.RawMessage
	if err := json.Unmarshal(out, &items); err != nil || len(items) != n {
		return nil, fmt.Errorf("receipts list --json (problems) gave %d items (%v), want %d", len(items), err, n)
	}
	base, err := baselineList(store.Dirs{Config: filepath.Join(home, "config"), Data: filepath.Join(home, "data")}.DBPath("default"))
	if err != nil {
		return nil, err
	}
	return []row{
		{name: "8'''. the same, every receipt with a problem, vs baseline (s)", value: fmt.Sprintf("%.2f s vs %.2f s, %.0f MB of JSON", sec, base, float64(len(out))/1e6),
			ratio: sec / base, measured: sec},
		{name: "8''''. with a problem: time (s)", value: fmt.Sprintf("%.2f s (%.2f s of CPU)", sec, t.cpu), measured: sec, target: 1, strictLT: true},
		{name: "8'''''. with a problem: peak RSS (MB)", value: fmt.Sprintf("%.1f MB", float64(kb)*1024/1e6), measured: float64(kb) * 1024 / 1e6, target: 60, strictLT: true},
	}, nil
}

// baselineList reads the listing columns of every receipt at path with
// database/sql and writes them as indented JSON with encoding/json (no pact
// code), and returns the seconds it took: what any program needs for the
// list.
func baselineList(path string) (float64, error) {
	start := time.Now()
	c, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return 0, err
	}
	defer c.Close()
	rows, err := c.Query(`SELECT id, verified, problems, brand, grant_id, user, scopes_used, actions, ts FROM receipts
		WHERE user_id = 'local' ORDER BY ts_ns, id`) // the profile's User, as pact reads them (the covering index)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	w := bufio.NewWriterSize(io.Discard, 64<<10)
	enc := json.NewEncoder(w)
	enc.SetIndent("  ", "  ")
	for rows.Next() {
		var it struct {
			ID         string          `json:"id"`
			Verified   bool            `json:"verified"`
			Problems   json.RawMessage `json:"problems"`
			Brand      string          `json:"brand"`
			GrantID    string          `json:"grantId"`
			User       string          `json:"user"`
			ScopesUsed json.RawMessage `json:"scopesUsed"`
			Actions    json.RawMessage `json:"actions"`
			TS         string          `json:"ts"`
		}
		var problems, scopes, actions string
		if err := rows.Scan(&it.ID, &it.Verified, &problems, &it.Brand, &it.GrantID, &it.User, &scopes, &actions, &it.TS); err != nil {
			return 0, err
		}
		it.Problems, it.ScopesUsed, it.Actions = json.RawMessage(problems), json.RawMessage(scopes), json.RawMessage(actions)
		if err := enc.Encode(&it); err != nil {
			return 0, err
		}
	}
	w.Flush()
	return time.Since(start).Seconds(), rows.Err()
}
