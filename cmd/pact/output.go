package main

import (
	"encoding/json"
	"strings"
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

// printJSONLine writes v as one line of JSON (the JSON lines of chat
// --json); with --jq, the expression's results, one per line.
func (a *app) printJSONLine(v any) {
	if a.jq != nil {
		if err := a.writeJQ(a.io.Out, v, false); err != nil {
			a.io.Eprintf("error: %v\n", err)
		}
		return
	}
	b, _ := marshalCompact(v)
	a.io.Printf("%s\n", b)
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
