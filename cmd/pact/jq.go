package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/itchyny/gojq"
	"github.com/spf13/pflag"
)

// jqError is a --jq expression failing on a document (exit 1). It is
// reported on stderr only: running the error envelope through the same
// expression would only fail again.
type jqError struct{ err error }

// Error is one prefix: gojq's error("x") says "error: x", which the
// "error:" of the line already says.
func (e jqError) Error() string { return "--jq: " + strings.TrimPrefix(e.err.Error(), "error: ") }
func (e jqError) Unwrap() error { return e.err }

// resolveJQ compiles --jq (which implies --json). A bad expression is a
// usage error (exit 2), found before any command runs, so before any
// network call.
func (a *app) resolveJQ(flags *pflag.FlagSet) error {
	if a.jqExpr == "" {
		a.jq = nil
		return nil
	}
	q, err := gojq.Parse(a.jqExpr)
	if err != nil {
		return usageError{fmt.Errorf("--jq %q: %v", a.jqExpr, err)}
	}
	code, err := gojq.Compile(q)
	if err != nil {
		return usageError{fmt.Errorf("--jq %q: %v", a.jqExpr, err)}
	}
	a.jq = code
	a.json = true
	return nil
}

// writeJQ runs the --jq program on the JSON encoding of v and writes each
// result to w as `gh --jq` does: a string raw, anything else as JSON
// (indented when indent is set), one result per line. gojq gives the
// program an empty $ENV, so it cannot print anything from the environment.
// When stdout is a terminal, a raw string passes through iostreams.Sanitize
// first (it is remote text: escape sequences and controls are shown, never
// executed); piped into a file or another program it stays exact.
func (a *app) writeJQ(w io.Writer, v any, indent bool) error {
	raw, err := marshalCompact(v)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return err
	}
	var out strings.Builder
	iter := a.jq.Run(doc)
	for {
		r, ok := iter.Next()
		if !ok {
			break
		}
		if err, isErr := r.(error); isErr {
			var he *gojq.HaltError
			if errors.As(err, &he) && he.Value() == nil {
				break
			}
			io.WriteString(w, out.String())
			return jqError{err}
		}
		if s, isStr := r.(string); isStr {
			if a.io.IsStdoutTTY() {
				s = safe(s)
			}
			out.WriteString(s)
			out.WriteByte('\n')
			continue
		}
		b, err := gojq.Marshal(r)
		if err != nil {
			return jqError{err}
		}
		if indent {
			var ib bytes.Buffer
			if json.Indent(&ib, b, "", "  ") == nil {
				b = ib.Bytes()
			}
		}
		out.Write(b)
		out.WriteByte('\n')
	}
	_, err = io.WriteString(w, out.String())
	return err
}
