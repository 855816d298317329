package main

import (
	"encoding/json"
	"strings"
	"time"
)

// printJSON writes v as indented JSON on stdout (the --json output). With
// --jq, the expression's results are printed instead (see writeJQ); a
// failing expression returns a jqError.
func (a *app) printJSON(v any) error {
	if a.jq != nil {
		return a.writeJQ(a.io.Out, v, a.io.IsStdoutTTY())
	}
	enc := json.NewEncoder(a.io.Out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// printJSONLine writes v as one line of JSON (the JSON Lines of chat and
// demo --json); with --jq, the expression's results, one per line. A
// failing expression is reported on stderr at once and returned; the first
// such failure is also kept in a.lineErr, so that the command exits 1 even
// when its caller carries on with the next line (see run).
func (a *app) printJSONLine(v any) error {
	if a.jq != nil {
		if err := a.writeJQ(a.io.Out, v, false); err != nil {
			a.io.Eprintf("error: %v\n", err)
			if a.lineErr == nil {
				a.lineErr = err
			}
			return err
		}
		return nil
	}
	b, err := marshalCompact(v)
	if err != nil {
		return err
	}
	a.io.Printf("%s\n", b)
	return nil
}

func marshalCompact(v any) ([]byte, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return []byte(strings.TrimRight(b.String(), "\n")), nil
}

// humanTime is how every table shows a time: local, to the minute, with the
// zone.
const humanTime = "2006-01-02 15:04 MST"

// localRFC3339 shows an RFC 3339 time (a receipt's ts) as humanTime, or as
// given when it does not parse.
func localRFC3339(ts string) string {
	t, err := time.Parse(time.RFC3339, ts)
	if err != nil {
		return ts
	}
	return t.Local().Format(humanTime)
}
