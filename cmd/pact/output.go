package main

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/pact-cli/pact/iostreams"
)

// printJSON writes v as indented JSON on stdout (the --json output). With
// --jq, the expression's results are printed instead (see writeJQ); a
// failing expression returns a jqError.
func (a *app) printJSON(v any) error {
	if a.jsonStreamOut {
		return a.printJSONLine(v) // --json-stream: JSON Lines throughout
	}
	if a.jq != nil {
		return a.writeJQ(a.io.Out, v, a.io.IsStdoutTTY())
	}
	b, err := marshalCompact(v)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	_, err = a.io.Out.Write(out.Bytes())
	return err
}

// fractionalTime matches a member holding a time (at, created, …At,
// …Since) whose RFC 3339 value has fractional seconds, in compact JSON.
// Only real members match: inside a JSON string every quote is escaped,
// so `"at":"` cannot occur there.
//
// Compiled on first use, not at package init: every pact process pays for
// package init (issue 21).
var fractionalTime = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`([{,]"(?:at|created|[A-Za-z]+At|[A-Za-z]+Since)":")(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\.\d+(Z|[+-]\d\d:\d\d)"`)
})

// wholeSeconds writes every time of compact JSON b to the second (RFC 3339
// without fraction), as every --json output gives times.
func wholeSeconds(b []byte) []byte {
	return fractionalTime().ReplaceAll(b, []byte(`$1$2$3"`))
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
	return wholeSeconds([]byte(strings.TrimRight(b.String(), "\n"))), nil
}

// humanTime is how every table shows a time: local, to the minute, with the
// zone.
const humanTime = iostreams.HumanTime

// localRFC3339 shows an RFC 3339 time (a receipt's ts) as humanTime, or as
// given when it does not parse.
func localRFC3339(ts string) string {
	t, err := time.Parse(time.RFC3339, ts)
	if err != nil {
		return ts
	}
	return t.Local().Format(humanTime)
}
